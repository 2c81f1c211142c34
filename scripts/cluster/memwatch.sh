#!/usr/bin/env bash
# The cluster's memory watchdog: scripts/cluster/fault.sh runs it in the background from before
# `up.sh` until after `down.sh`. Every MEMWATCH_INTERVAL seconds it reads the resident memory of
# every process the cluster runs — those named in CLUSTER_DIR/pids (so a process restarted after a
# kill is watched under its new PID, and one being stopped by cluster-down until it is gone) and
# any other process whose command line names CLUSTER_DIR (the `--wsrep-recover` run, rsync state
# transfers). A process past its bound is killed at once (SIGKILL): a Galera node has grown by
# gigabytes a second here (docs/deployment.md), and the machine is shared.
#
# Each kill is appended to $1 (one line: name, PID, MiB, bound); on SIGTERM the watchdog prints
# the peak of each process name and exits. The caller fails the run when $1 is not empty.
# Bounds (MiB) can be set with MEMWATCH_GALERA_MIB, MEMWATCH_PARLEY_MIB, MEMWATCH_REDIS_MIB,
# MEMWATCH_HAPROXY_MIB, MEMWATCH_OTHER_MIB.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=env.sh
source scripts/cluster/env.sh

KILLS=${1:?usage: memwatch.sh KILLS_FILE}
INTERVAL=${MEMWATCH_INTERVAL:-0.05}
# A node runs at 130-200 MiB, Parley at ~100 MiB, Redis at ~12 MiB, HAProxy at ~15 MiB.
GALERA_KIB=$((${MEMWATCH_GALERA_MIB:-1024} * 1024))
PARLEY_KIB=$((${MEMWATCH_PARLEY_MIB:-1024} * 1024))
REDIS_KIB=$((${MEMWATCH_REDIS_MIB:-512} * 1024))
HAPROXY_KIB=$((${MEMWATCH_HAPROXY_MIB:-256} * 1024))
OTHER_KIB=$((${MEMWATCH_OTHER_MIB:-1024} * 1024))

declare -A name_of=() peak=()

# The loop below forks nothing per sample: these set BOUND and RSS instead of printing.
set_bound() {
  case "$1" in
    galera-* | mariadbd*) BOUND=$GALERA_KIB ;;
    parley-*) BOUND=$PARLEY_KIB ;;
    redis*) BOUND=$REDIS_KIB ;;
    haproxy*) BOUND=$HAPROXY_KIB ;;
    *) BOUND=$OTHER_KIB ;;
  esac
}
set_rss() {
  local k v _
  RSS=0
  while read -r k v _; do
    if [ "$k" = VmRSS: ]; then
      RSS=$v
      return
    fi
  done 2>/dev/null <"/proc/$1/status" || true
}

# PIDs from the PID files (read without forking) and HAProxy's worker (a child of the master).
adopt_pid_files() {
  local f p n
  for f in "$PIDS"/*.pid; do
    [ -e "$f" ] || continue
    read -r p 2>/dev/null <"$f" || continue
    [ -n "$p" ] || continue
    n=${f##*/}
    name_of[$p]=${n%.pid}
  done
}

# Everything else naming CLUSTER_DIR on its command line (forks pgrep: once a second).
adopt_by_command_line() {
  local p comm
  for p in $(pgrep -f -- "$CLUSTER_DIR/" 2>/dev/null); do
    [ -n "${name_of[$p]:-}" ] && continue
    [ "$p" = $$ ] && continue
    read -r comm 2>/dev/null <"/proc/$p/comm" || continue
    case "$comm" in memwatch.sh | bash | pgrep) continue ;; esac
    if grep -qa -- '--wsrep-recover' "/proc/$p/cmdline" 2>/dev/null; then
      name_of[$p]="$comm --wsrep-recover"
    else
      name_of[$p]=$comm
    fi
  done
  # HAProxy -Ws: the worker serving the traffic is the master's child.
  if [ -f "$PIDS/haproxy.pid" ]; then
    read -r p 2>/dev/null <"$PIDS/haproxy.pid" || p=
    [ -n "$p" ] && for p in $(pgrep -P "$p" 2>/dev/null); do name_of[$p]=haproxy-worker; done
  fi
}

finish() {
  local n line=
  for n in $(printf '%s\n' "${!peak[@]}" | sort); do line+=" $n $((peak[$n] / 1024)) MiB,"; done
  echo "memwatch: peak resident memory:${line%,}"
  exit 0
}
trap finish TERM INT

n=0
while true; do
  adopt_pid_files
  [ $((n % 20)) = 0 ] && adopt_by_command_line
  n=$((n + 1))
  for p in "${!name_of[@]}"; do
    name=${name_of[$p]}
    if [ ! -d "/proc/$p" ]; then
      unset "name_of[$p]"
      continue
    fi
    set_rss "$p"
    [ "$RSS" -gt "${peak[$name]:-0}" ] && peak[$name]=$RSS
    set_bound "$name"
    if [ "$RSS" -gt "$BOUND" ]; then
      case "$name" in galera-* | mariadbd*) capture_runaway "$p" "$LOGS/runaway-${name// /}-$p.txt" ;; esac
      kill -KILL "$p" 2>/dev/null || true
      msg="$name (pid $p) reached $((RSS / 1024)) MiB, over its bound of $((BOUND / 1024)) MiB: killed"
      echo "memwatch: $msg" >&2
      echo "$msg" >>"$KILLS"
      unset "name_of[$p]"
    fi
  done
  sleep "$INTERVAL" &
  wait $! || true
done
