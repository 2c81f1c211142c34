# Sourced by up.sh and down.sh: the cluster's layout, every port derived from CLUSTER_PORT.
# shellcheck shell=bash
CLUSTER_DIR=$(realpath -m "${CLUSTER_DIR:-./data/cluster}")
CLUSTER_PORT=${CLUSTER_PORT:-9980}
CLUSTER_NODES=${CLUSTER_NODES:-2}
case "$CLUSTER_NODES" in 2 | 3) ;; *) echo "CLUSTER_NODES must be 2 or 3, got '$CLUSTER_NODES'" >&2; exit 2 ;; esac
case "$CLUSTER_PORT" in '' | *[!0-9]*) echo "CLUSTER_PORT must be a number, got '$CLUSTER_PORT'" >&2; exit 2 ;; esac
if [ "$CLUSTER_PORT" -lt 1024 ] || [ "$CLUSTER_PORT" -gt 65400 ]; then
  echo "CLUSTER_PORT must be within 1024..65400 (the others are derived from it)" >&2
  exit 2
fi
GALERA_NODES=3
PIDS=$CLUSTER_DIR/pids
LOGS=$CLUSTER_DIR/logs

# HAProxy: the API (CLUSTER_PORT), its stats page (+1) and the single-writer MariaDB port (+2).
HTTP_PORT=$CLUSTER_PORT
STATS_PORT=$((CLUSTER_PORT + 1))
SQL_PORT=$((CLUSTER_PORT + 2))
REDIS_PORT=$((CLUSTER_PORT + 3))
# Parley node i (1..3) listens on +4+i; Galera node i on +20+i (SQL), +30+i (group communication),
# +40+i (incremental state transfer) and +50+i (full state transfer).
parley_port() { echo $((CLUSTER_PORT + 4 + $1)); }
galera_port() { echo $((CLUSTER_PORT + 20 + $1)); }
gcomm_port() { echo $((CLUSTER_PORT + 30 + $1)); }
ist_port() { echo $((CLUSTER_PORT + 40 + $1)); }
sst_port() { echo $((CLUSTER_PORT + 50 + $1)); }

# A PID file names a live process only if that process is not a zombie and is the program we
# started (a PID can be reused once ours is gone).
# Resident memory of a process in KiB (0 once it is gone), read from /proc without forking:
# the loops that watch a mariadbd's memory call it every few tens of milliseconds.
rss_kib() {
  local k v _
  while read -r k v _; do
    if [ "$k" = VmRSS: ]; then
      echo "$v"
      return
    fi
  done <"/proc/$1/status" 2>/dev/null || true
  echo 0
}

# A mariadbd of this cluster runs at about 160 MiB; one past this (KiB) is in the runaway growth
# seen at its shutdown (docs/deployment.md) and is killed.
RUNAWAY_KIB=$((1024 * 1024))

# Before a runaway mariadbd is killed: freezes it (SIGSTOP: it grows no more) and writes what it
# was doing to file $2: its memory (anonymous or file-backed), its largest mappings and every
# thread's stack (gdb, if installed; about a second). The growth has not been reproduced outside
# the cluster (docs/deployment.md), so each occurrence leaves this evidence. The caller kills it.
capture_runaway() {
  local pid=$1 out=$2
  kill -STOP "$pid" 2>/dev/null || return 0
  mkdir -p "$(dirname "$out")"
  {
    echo "# $(date -u +%FT%TZ) pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
    grep -E '^(VmRSS|RssAnon|RssFile|RssShmem|VmData|VmSize|Threads):' "/proc/$pid/status" 2>/dev/null
    echo "# largest resident mappings (KiB)"
    awk '/^[0-9a-f]+-[0-9a-f]+ / {m=$0} /^Rss:/ {print $2, m}' "/proc/$pid/smaps" 2>/dev/null | sort -rn | head -5
    tail -5 "$(dirname "$(readlink -f "/proc/$pid/cwd" 2>/dev/null)")/error.log" 2>/dev/null
    if command -v gdb >/dev/null; then
      timeout 60 gdb -p "$pid" -batch -ex 'thread apply all bt 30' 2>&1 | grep -E '^(Thread|#)'
    fi
  } >"$out" 2>&1 || true
}

# After cluster-down: whether process $1 still runs (not gone, not a zombie), printing its state.
# A process cluster-down saw end may still be leaving for a moment (a Galera node frees hundreds
# of MiB on its way out; its /proc entry once vanished between two reads): five seconds' grace,
# reading its state without failing when the entry goes.
still_running() {
  local state= _
  for _ in $(seq 1 50); do
    state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || state=
    if [ -z "$state" ] || [ "$state" = Z ]; then return 1; fi
    sleep 0.1
  done
  echo "$state"
}

alive() {
  local name=$1 pid state
  [ -f "$PIDS/$name.pid" ] || return 1
  pid=$(cat "$PIDS/$name.pid")
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
  [ "$state" != Z ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$(program_of "$name")"
}

program_of() {
  case "$1" in
    haproxy) echo haproxy ;;
    redis) echo redis-server ;;
    parley-*) echo 'dist/src/main.js' ;;
    galera-*) echo mariadbd ;;
  esac
}

# Every process, in start order.
all_names() {
  local i
  for i in $(seq 1 $GALERA_NODES); do echo "galera-$i"; done
  echo redis
  for i in $(seq 1 "$CLUSTER_NODES"); do echo "parley-$i"; done
  echo haproxy
}
