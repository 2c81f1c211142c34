#!/usr/bin/env bash
# `make cluster-down`: stops exactly the processes `make cluster` started, by the PIDs in
# CLUSTER_DIR/pids, and keeps the data. Galera nodes stop one after the other, galera-1
# last, so galera-1 is the node safe to bootstrap the next `make cluster`.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=env.sh
source scripts/cluster/env.sh

stop() {
  local name=$1 pid i
  [ -f "$PIDS/$name.pid" ] || return 0
  pid=$(cat "$PIDS/$name.pid")
  if alive "$name"; then
    kill -TERM "$pid" 2>/dev/null || true
    # InnoDB's shutdown took over 30 s on a loaded machine: Galera nodes get 90 s before SIGKILL, the rest 30 s.
    local tenths=300
    case "$name" in galera-*) tenths=900 ;; esac
    for i in $(seq 1 "$tenths"); do
      alive "$name" || break
      sleep 0.1
    done
    if alive "$name"; then
      echo "cluster: $name ($pid) did not stop in $((tenths / 10)) s: SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
    fi
    echo "cluster: stopped $name ($pid)"
  fi
  rm -f "$PIDS/$name.pid"
}

[ -d "$PIDS" ] || {
  echo "cluster: nothing to stop in $CLUSTER_DIR"
  exit 0
}
stop haproxy
# Every Parley node, whatever CLUSTER_NODES says now.
for f in "$PIDS"/parley-*.pid; do [ -e "$f" ] && stop "$(basename "$f" .pid)"; done
stop redis
for i in 3 2 1; do stop "galera-$i"; done
left=$(find "$PIDS" -name '*.pid' | wc -l)
[ "$left" -eq 0 ] || {
  echo "cluster: PID files left: $(ls "$PIDS")" >&2
  exit 1
}
echo "cluster: down (data kept in $CLUSTER_DIR)"
