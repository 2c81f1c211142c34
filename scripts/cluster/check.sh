#!/usr/bin/env bash
# `make cluster-check`: a fresh cluster in its own directory and ports (CLUSTER_DIR
# ./data/cluster-check, CLUSTER_PORT 9880 unless set), scripts/cluster/check.js through
# HAProxy, then `cluster-down` and a check that none of its processes is left. Prints the
# start time, the cluster's memory and the cross-node delivery times. About a minute.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CLUSTER_DIR=${CLUSTER_DIR:-./data/cluster-check}
export CLUSTER_PORT=${CLUSTER_PORT:-9880}
export CLUSTER_NODES=${CLUSTER_NODES:-2}
# The check sends a few hundred requests a minute as one user.
export RATE_LIMITS=${RATE_LIMITS:-off}
# shellcheck source=env.sh
source scripts/cluster/env.sh

bash scripts/cluster/down.sh >/dev/null
rm -rf "$CLUSTER_DIR"
t0=$(date +%s.%N)
status=0
bash scripts/cluster/up.sh || status=$?
echo "cluster-check: up in $(echo "$(date +%s.%N) - $t0" | bc | xargs printf '%.1f') s (fresh data directories)"

# Every started process and its children (HAProxy's worker).
all=$(for f in "$PIDS"/*.pid; do
  p=$(cat "$f")
  echo "$p"
  pgrep -P "$p" || true
done | sort -u)
read -r -a pids <<<"$(echo $all)"
if [ "$status" = 0 ]; then
  # shellcheck disable=SC2086
  kib=$(ps -o rss= -p "$(echo $all | tr ' ' ,)" | awk '{s += $1} END {print s}')
  echo "cluster-check: resident memory $((kib / 1024)) MiB in $(echo "$all" | wc -l) processes:"
  for name in $(all_names); do
    p=$(cat "$PIDS/$name.pid")
    printf '  %-9s %6d MiB\n' "$name" "$(($(ps -o rss= -p "$p") / 1024))"
  done
  node scripts/cluster/check.js "$CLUSTER_DIR/zuliprc" "$CLUSTER_NODES" || status=$?
fi

bash scripts/cluster/down.sh
left=0
for p in "${pids[@]}"; do
  if state=$(still_running "$p"); then
    echo "cluster-check: process $p (state $state) is still running after cluster-down" >&2
    left=1
  fi
done
[ "$left" = 0 ] && echo "cluster-check: cluster-down left no process (${#pids[@]} stopped)"
[ "$status" = 0 ] && [ "$left" = 0 ] && echo "cluster-check: passed" || {
  echo "cluster-check: FAILED" >&2
  exit 1
}
