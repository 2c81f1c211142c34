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
    # The limit is wall-clock time: a machine short of memory makes each check slow.
    local seconds=30 deadline rss n=0
    case "$name" in galera-*) seconds=90 ;; esac
    deadline=$((SECONDS + seconds))
    # A Galera node's InnoDB shutdown sometimes hangs right after its full-text thread stops and
    # its memory then grows by gigabytes a second (14-22 GiB seen here): a stopping process past
    # 1 GiB (a node runs at ~160 MiB) is killed at once. The loop forks nothing but the periodic
    # `alive` check, so it notices within tens of milliseconds.
    while [ -d "/proc/$pid" ] && [ "$SECONDS" -lt "$deadline" ]; do
      rss=$(rss_kib "$pid")
      if [ "$rss" -gt "$RUNAWAY_KIB" ]; then
        capture_runaway "$pid" "$LOGS/runaway-$name-$pid.txt"
        echo "cluster: $name ($pid) grew to $((rss / 1024)) MiB while stopping" \
          "(frozen; what it was doing: $LOGS/runaway-$name-$pid.txt)" >&2
        break
      fi
      n=$((n + 1))
      if [ $((n % 25)) = 0 ] && ! alive "$name"; then break; fi
      sleep 0.02
    done
    if alive "$name"; then
      echo "cluster: $name ($pid) did not stop cleanly: SIGKILL" >&2
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
