#!/usr/bin/env bash
# `make cluster`: HAProxy, 2-3 Parley nodes, 3 Galera (MariaDB) nodes and Redis, all on 127.0.0.1.
# docs/deployment.md describes the topology; scripts/cluster/env.sh the ports and CLUSTER_DIR layout.
# Run on a running cluster it says so and exits 0; on a half-running one it exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
HERE=scripts/cluster
# shellcheck source=env.sh
source "$HERE/env.sh"
# shellcheck source=procs.sh
source "$HERE/procs.sh"
started_at=$(date +%s.%N)

say() { printf '[cluster %5.1fs] %s\n' "$(echo "$(date +%s.%N) - $started_at" | bc)" "$*"; }
fail() {
  echo "cluster: $*" >&2
  echo "cluster: logs are in $LOGS; 'make cluster-down' stops what started" >&2
  exit 1
}

running=0
total=0
for name in $(all_names); do
  total=$((total + 1))
  if alive "$name"; then running=$((running + 1)); fi
done
if [ "$running" -gt 0 ]; then
  if [ "$running" -eq "$total" ]; then
    echo "cluster: already running in $CLUSTER_DIR (API http://127.0.0.1:$HTTP_PORT, zuliprc $CLUSTER_DIR/zuliprc)"
    exit 0
  fi
  echo "cluster: partly running in $CLUSTER_DIR ($running of $total processes): run 'make cluster-down' first" >&2
  exit 1
fi

# --- Debian packages --------------------------------------------------------------------------
missing=()
command -v haproxy >/dev/null || missing+=(haproxy)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v mariadbd >/dev/null || missing+=(mariadb-server)
[ -f /usr/lib/galera/libgalera_smm.so ] || missing+=(galera-4)
command -v rsync >/dev/null || missing+=(rsync)
command -v bc >/dev/null || missing+=(bc)
command -v curl >/dev/null || missing+=(curl)
# The rsync state transfer finds its listening port with ss; check.sh and fault.sh use pgrep.
command -v ss >/dev/null || missing+=(iproute2)
command -v pgrep >/dev/null || missing+=(procps)
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "missing ${missing[*]} and not root to install them"
  echo "cluster: installing ${missing[*]} (Debian)…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "$(id -u)" = 0 ] || fail "run as root: mariadbd is started as root and drops to the mysql user"
[ -f dist/src/main.js ] || fail "dist/src/main.js is missing: run 'make build' (make cluster does)"

mkdir -p "$PIDS" "$LOGS"

wait_for() {
  local what=$1 seconds=$2
  shift 2
  local deadline=$(($(date +%s) + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "$what: not ready after ${seconds}s"
    sleep 0.2
  done
}

render() {
  local in=$1 out=$2
  shift 2
  local expr=()
  while [ $# -gt 0 ]; do
    expr+=(-e "s|@$1@|$2|g")
    shift 2
  done
  sed "${expr[@]}" "$in" >"$out"
}

# --- Galera -----------------------------------------------------------------------------------
peers=""
for i in $(seq 1 $GALERA_NODES); do peers="${peers:+$peers,}127.0.0.1:$(gcomm_port "$i")"; done

fresh=1
[ -d "$CLUSTER_DIR/galera-1/data/mysql" ] && fresh=0
for i in $(seq 1 $GALERA_NODES); do
  dir=$CLUSTER_DIR/galera-$i
  mkdir -p "$dir"
  render "$HERE/galera.cnf.in" "$dir/my.cnf" NAME "galera-$i" DIR "$dir" SQL_PORT "$(galera_port "$i")" \
    GCOMM_PEERS "$peers" GCOMM_PORT "$(gcomm_port "$i")" IST_PORT "$(ist_port "$i")" SST_PORT "$(sst_port "$i")"
done
if [ "$fresh" = 1 ]; then
  say "initialising the Galera data directories"
  mariadb-install-db --no-defaults --user=mysql --datadir="$CLUSTER_DIR/galera-1/data" \
    --auth-root-authentication-method=normal --skip-test-db >"$LOGS/install-db.log" 2>&1 ||
    fail "mariadb-install-db failed (logs/install-db.log)"
  # The joiners' copies are replaced by the state transfer; they only need to be valid directories.
  for i in $(seq 2 $GALERA_NODES); do cp -a "$CLUSTER_DIR/galera-1/data" "$CLUSTER_DIR/galera-$i/"; done
fi
for i in $(seq 1 $GALERA_NODES); do chown -R mysql:mysql "$CLUSTER_DIR/galera-$i"; done

# Only the node that stopped last (safe_to_bootstrap: 1) may start a new cluster: the others
# could hold fewer transactions. CLUSTER_BOOTSTRAP=galera-N overrides that after a crash.
bootstrap=1
if [ "$fresh" = 0 ]; then
  bootstrap=""
  if [ -n "${CLUSTER_BOOTSTRAP:-}" ]; then
    bootstrap=${CLUSTER_BOOTSTRAP#galera-}
    sed -i 's/^safe_to_bootstrap: 0/safe_to_bootstrap: 1/' "$CLUSTER_DIR/galera-$bootstrap/data/grastate.dat"
  else
    for i in $(seq 1 $GALERA_NODES); do
      if grep -q '^safe_to_bootstrap: 1' "$CLUSTER_DIR/galera-$i/data/grastate.dat" 2>/dev/null; then bootstrap=$i; fi
    done
  fi
  if [ -z "$bootstrap" ]; then
    grep -H '^seqno' "$CLUSTER_DIR"/galera-*/data/grastate.dat >&2 || true
    fail "no Galera node is safe to bootstrap (none stopped cleanly last): pick the one with the highest seqno and run CLUSTER_BOOTSTRAP=galera-N make cluster"
  fi
fi

say "starting galera-$bootstrap (new cluster)"
start_galera "$bootstrap" --wsrep-new-cluster
wait_for "galera-$bootstrap" 60 galera_synced "$bootstrap"
for i in $(seq 1 $GALERA_NODES); do
  [ "$i" = "$bootstrap" ] && continue
  say "starting galera-$i (joins by state transfer)"
  start_galera "$i"
  wait_for "galera-$i" 120 galera_synced "$i"
done

mariadb --no-defaults --socket="$CLUSTER_DIR/galera-$bootstrap/mysqld.sock" -uroot <<'SQL'
CREATE DATABASE IF NOT EXISTS parley CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS 'parley'@'127.0.0.1' IDENTIFIED BY 'parley';
GRANT ALL PRIVILEGES ON parley.* TO 'parley'@'127.0.0.1';
SQL

# --- Redis ------------------------------------------------------------------------------------
say "starting redis"
start_redis
wait_for redis 20 redis_ready

# --- HAProxy ----------------------------------------------------------------------------------
render "$HERE/galera-check.sh.in" "$CLUSTER_DIR/galera-check.sh" GALERA_BASE "$((CLUSTER_PORT + 20))" CLUSTER_DIR "$CLUSTER_DIR"
chmod 755 "$CLUSTER_DIR/galera-check.sh"
use_servers=""
parley_servers=""
for i in $(seq 1 "$CLUSTER_NODES"); do
  use_servers+="    use-server p$i if { var(txn.qnode) -m str p$i }"$'\n'
  parley_servers+="    server p$i 127.0.0.1:$(parley_port "$i") check inter 1s fall 2 rise 2"$'\n'
done
galera_servers=""
for i in $(seq 1 $GALERA_NODES); do
  line="    server galera-$i 127.0.0.1:$(galera_port "$i") check inter 1s fall 2 rise 3 on-marked-down shutdown-sessions"
  if [ "$i" = 1 ]; then line+=" on-marked-up shutdown-backup-sessions"; else line+=" backup"; fi
  galera_servers+="$line"$'\n'
done
# Multi-line values go through awk (sed's replacement cannot hold newlines).
render "$HERE/haproxy.cfg.in" "$CLUSTER_DIR/haproxy.cfg.tmp" HTTP_PORT "$HTTP_PORT" STATS_PORT "$STATS_PORT" \
  SQL_PORT "$SQL_PORT" CLUSTER_DIR "$CLUSTER_DIR"
awk -v use="$use_servers" -v parley="$parley_servers" -v galera="$galera_servers" '
  /^@USE_SERVERS@$/ { printf "%s", use; next }
  /^@PARLEY_SERVERS@$/ { printf "%s", parley; next }
  /^@GALERA_SERVERS@$/ { printf "%s", galera; next }
  { print }' "$CLUSTER_DIR/haproxy.cfg.tmp" >"$CLUSTER_DIR/haproxy.cfg"
rm -f "$CLUSTER_DIR/haproxy.cfg.tmp"
haproxy -c -q -f "$CLUSTER_DIR/haproxy.cfg" || fail "haproxy.cfg is invalid"
say "starting haproxy"
start_haproxy
wait_for "MariaDB through haproxy" 30 sql_via_haproxy

# --- Parley -----------------------------------------------------------------------------------
# The first node migrates the database and seeds the demo organization; the others start once it is healthy.
say "starting parley-1 (migrates, seeds the demo organization when empty)"
start_parley 1
wait_for parley-1 180 healthy "$(parley_port 1)"
for i in $(seq 2 "$CLUSTER_NODES"); do
  say "starting parley-$i"
  start_parley "$i"
done
for i in $(seq 2 "$CLUSTER_NODES"); do wait_for "parley-$i" 60 healthy "$(parley_port "$i")"; done
wait_for "the API through haproxy" 30 healthy "$HTTP_PORT"
for i in $(seq 1 "$CLUSTER_NODES"); do wait_for "haproxy marking parley-$i up" 30 haproxy_up parley "p$i"; done

no_pk=$(mariadb --no-defaults --socket="$CLUSTER_DIR/galera-$bootstrap/mysqld.sock" -uroot -N -B -e "
  SELECT t.table_name FROM information_schema.tables t
  LEFT JOIN information_schema.table_constraints c
    ON c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.constraint_type = 'PRIMARY KEY'
  WHERE t.table_schema = 'parley' AND t.table_type = 'BASE TABLE' AND c.constraint_name IS NULL")
[ -z "$no_pk" ] || fail "tables without a primary key (Galera cannot replicate them safely): $no_pk"

cp "$CLUSTER_DIR/parley/zuliprc" "$CLUSTER_DIR/zuliprc"
chmod 600 "$CLUSTER_DIR/zuliprc"
say "up: API http://127.0.0.1:$HTTP_PORT ($CLUSTER_NODES Parley nodes), MariaDB 127.0.0.1:$SQL_PORT (writer galera-1), Redis 127.0.0.1:$REDIS_PORT, HAProxy stats http://127.0.0.1:$STATS_PORT/"
echo "zuliprc: $CLUSTER_DIR/zuliprc"
