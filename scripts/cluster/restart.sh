#!/usr/bin/env bash
# scripts/cluster/restart.sh NAME: starts again one process of a running cluster (galera-N,
# redis, parley-N or haproxy) that has stopped or was killed, with the configuration
# `make cluster` gave it (scripts/cluster/procs.sh), and waits until it serves: a Galera node
# until it is Synced again (it rejoins the others, by incremental transfer when their cache
# still holds what it missed), Redis until it answers, a Parley node until /health is 200.
# Prints how long that took. Refuses a process that is still running.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=scripts/cluster
# shellcheck source=env.sh
source "$HERE/env.sh"
# shellcheck source=procs.sh
source "$HERE/procs.sh"

name=${1:-}
case "$name" in
  galera-[1-3] | redis | haproxy) ;;
  parley-[1-3]) [ "${name#parley-}" -le "$CLUSTER_NODES" ] || { echo "restart: $name is not in a $CLUSTER_NODES-node cluster" >&2; exit 2; } ;;
  *) echo "usage: restart.sh galera-N|redis|parley-N|haproxy" >&2; exit 2 ;;
esac
[ -d "$PIDS" ] || { echo "restart: no cluster in $CLUSTER_DIR" >&2; exit 1; }
if alive "$name"; then
  echo "restart: $name is running ($(cat "$PIDS/$name.pid"))" >&2
  exit 1
fi
started_at=$(date +%s.%N)

wait_for() {
  local seconds=$1
  shift
  local deadline=$(($(date +%s) + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ] || ! alive "$name"; then
      echo "restart: $name not ready after $(echo "$(date +%s.%N) - $started_at" | bc) s (logs in $LOGS)" >&2
      exit 1
    fi
    sleep 0.2
  done
}

case "$name" in
  galera-*)
    i=${name#galera-}
    # Never --wsrep-new-cluster: the node joins the running cluster. After a kill its grastate.dat
    # has no position (seqno -1), and a node that cannot say where it stopped gets a full copy
    # (rsync of the whole data directory). So, as Debian's galera_recovery does, a first run with
    # --wsrep-recover reads the position from InnoDB's log; started from it, the node receives
    # only the write sets it missed (IST), from a donor whose cache still holds them.
    start_args=()
    if grep -q '^seqno: *-1' "$CLUSTER_DIR/galera-$i/data/grastate.dat" 2>/dev/null; then
      rlog=$CLUSTER_DIR/galera-$i/recover.log
      install -o mysql -g mysql -m 640 /dev/null "$rlog"
      # The run's one product is that log line. At its exit mariadbd has been seen to grow to
      # 23 GiB and thrash the machine for ten minutes until the kernel killed it, as at a node's
      # shutdown: it is stopped once the line is written, or as soon as it passes RUNAWAY_KIB.
      # A kill then is a crash InnoDB recovers from at the real start, as from the first kill.
      mariadbd --defaults-file="$CLUSTER_DIR/galera-$i/my.cnf" --wsrep-recover --log-error="$rlog" >/dev/null 2>&1 &
      rpid=$!
      rdeadline=$((SECONDS + 120))
      while [ -d "/proc/$rpid" ] && [ "$SECONDS" -lt "$rdeadline" ]; do
        if grep -q 'WSREP: Recovered position' "$rlog" 2>/dev/null; then break; fi
        rss=$(rss_kib "$rpid")
        if [ "$rss" -gt "$RUNAWAY_KIB" ]; then
          capture_runaway "$rpid" "$LOGS/runaway-$name-recover-$rpid.txt"
          echo "restart: $name's recovery run grew to $((rss / 1024)) MiB: killed" \
            "(what it was doing: $LOGS/runaway-$name-recover-$rpid.txt)" >&2
          break
        fi
        sleep 0.05
      done
      kill -KILL "$rpid" 2>/dev/null || true
      wait "$rpid" 2>/dev/null || true
      position=$(sed -n 's/.*WSREP: Recovered position: \([0-9a-f-]*:-\?[0-9]*\).*/\1/p' "$rlog" | tail -1)
      if [ -n "$position" ]; then
        echo "restart: $name recovered its position $position"
        start_args=(--wsrep-start-position="$position")
      fi
    fi
    start_galera "$i" "${start_args[@]}"
    wait_for 180 galera_synced "$i"
    ;;
  redis)
    start_redis
    wait_for 30 redis_ready
    ;;
  parley-*)
    i=${name#parley-}
    start_parley "$i"
    wait_for 60 healthy "$(parley_port "$i")"
    wait_for 30 haproxy_up parley "p$i"
    ;;
  haproxy)
    start_haproxy
    wait_for 30 healthy "$HTTP_PORT"
    ;;
esac
echo "restart: $name ($(cat "$PIDS/$name.pid")) ready in $(echo "$(date +%s.%N) - $started_at" | bc | xargs printf '%.1f') s"
