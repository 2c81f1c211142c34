#!/usr/bin/env bash
# `make cluster-fault`: a fresh cluster in its own directory and ports (CLUSTER_DIR
# ./data/cluster-fault, CLUSTER_PORT 9780 unless set), then scripts/cluster/fault.js: load
# through HAProxy while a Parley node, the Galera writer and Redis are each killed (SIGKILL) and
# started again (scripts/cluster/restart.sh); then `cluster-down` and a check that none of its
# processes is left. Throughout (cluster-down included), scripts/cluster/memwatch.sh samples the
# memory of every cluster process and kills one past its bound (Galera, Parley 1 GiB; Redis 512 MiB;
# HAProxy 256 MiB), which fails the run. Prints the figures and each check; exits 1 on any
# failure. About 4 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CLUSTER_DIR=${CLUSTER_DIR:-./data/cluster-fault}
export CLUSTER_PORT=${CLUSTER_PORT:-9780}
export CLUSTER_NODES=${CLUSTER_NODES:-2}
# Three senders at ten messages a second and the long-polls of four users come from one address.
export RATE_LIMITS=${RATE_LIMITS:-off}
# shellcheck source=env.sh
source scripts/cluster/env.sh
export CLUSTER_DIR

bash scripts/cluster/down.sh >/dev/null
rm -rf "$CLUSTER_DIR"
mkdir -p "$CLUSTER_DIR"
t0=$(date +%s.%N)
# The watchdog starts before the first process and stops after cluster-down (by its PID).
kills=$CLUSTER_DIR/memwatch-kills.txt
: >"$kills"
bash scripts/cluster/memwatch.sh "$kills" &
memwatch=$!
trap 'kill -TERM "$memwatch" 2>/dev/null || true' EXIT
status=0
bash scripts/cluster/up.sh || status=$?
echo "cluster-fault: up in $(echo "$(date +%s.%N) - $t0" | bc | xargs printf '%.1f') s"

# Every process this cluster ever ran (those restarted after a kill too), and their children.
seen=()
remember() {
  local f p
  for f in "$PIDS"/*.pid; do
    [ -e "$f" ] || continue
    p=$(cat "$f")
    seen+=("$p")
    for c in $(pgrep -P "$p" || true); do seen+=("$c"); done
  done
}
remember
if [ "$status" = 0 ]; then
  node scripts/cluster/fault.js || status=$?
  remember
fi

bash scripts/cluster/down.sh
left=0
for p in $(printf '%s\n' "${seen[@]}" | sort -u); do
  if state=$(still_running "$p"); then
    echo "cluster-fault: process $p (state $state) is still running after cluster-down" >&2
    left=1
  fi
done
[ "$left" = 0 ] && echo "cluster-fault: cluster-down left no process"
memory=0
kill -TERM "$memwatch" 2>/dev/null || true
wait "$memwatch" || true
if [ -s "$kills" ]; then
  while read -r line; do echo "cluster-fault: memory: $line" >&2; done <"$kills"
  memory=1
else
  echo "cluster-fault: no process passed its memory bound"
fi
echo "cluster-fault: $(echo "$(date +%s.%N) - $t0" | bc | xargs printf '%.0f') s in all"
[ "$status" = 0 ] && [ "$left" = 0 ] && [ "$memory" = 0 ] && echo "cluster-fault: passed" || {
  echo "cluster-fault: FAILED" >&2
  exit 1
}
