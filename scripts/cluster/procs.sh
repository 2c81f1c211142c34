# Sourced by up.sh and restart.sh (after env.sh): how each cluster process starts, so that a
# process restarted alone (scripts/cluster/restart.sh) runs with exactly the configuration
# `make cluster` gave it. Each start_* returns at once; the ready_* functions say when it serves.
# shellcheck shell=bash

# Starts a command in its own session (it outlives make), logs to logs/<name>.log, records its PID.
start() {
  local name=$1
  shift
  setsid "$@" </dev/null >>"$LOGS/$name.log" 2>&1 &
  echo $! >"$PIDS/$name.pid"
}

start_galera() {
  local i=$1
  shift
  start "galera-$i" mariadbd --defaults-file="$CLUSTER_DIR/galera-$i/my.cnf" "$@"
}

start_redis() {
  mkdir -p "$CLUSTER_DIR/redis"
  # The append-only file (fsync every second) keeps the event stream across a Redis restart.
  start redis redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$CLUSTER_DIR/redis" \
    --appendonly yes --appendfsync everysec --save '' --protected-mode yes
}

start_haproxy() {
  # -Ws: master-worker, in the foreground of its own session; SIGTERM (or SIGUSR1) stops it.
  start haproxy haproxy -Ws -f "$CLUSTER_DIR/haproxy.cfg"
}

start_parley() {
  local i=$1
  mkdir -p "$CLUSTER_DIR/parley"
  # One DATA_DIR for all nodes: uploads and the signing secret are shared (src/storage/).
  start "parley-$i" env HOST=127.0.0.1 PORT="$(parley_port "$i")" DATA_DIR="$CLUSTER_DIR/parley" \
    DATABASE_URL="mysql://parley:parley@127.0.0.1:$SQL_PORT/parley" EXTERNAL_URL="http://127.0.0.1:$HTTP_PORT" \
    NODE_ID="p$i" EVENT_BUS=redis REDIS_URL="redis://127.0.0.1:$REDIS_PORT" LOG_LEVEL="${LOG_LEVEL:-warn}" \
    RATE_LIMIT_STORE="${RATE_LIMIT_STORE:-redis}" TRUSTED_PROXIES=127.0.0.1 \
    node dist/src/main.js
}

galera_state() {
  mariadb --no-defaults --socket="$CLUSTER_DIR/galera-$1/mysqld.sock" -uroot -N -B \
    -e "SHOW GLOBAL STATUS LIKE 'wsrep_local_state'" 2>/dev/null | awk '{print $2}'
}
galera_synced() { [ "$(galera_state "$1")" = 4 ]; }
redis_ready() { redis-cli -p "$REDIS_PORT" ping; }
healthy() { curl -fsS -o /dev/null "http://127.0.0.1:$1/health"; }
sql_via_haproxy() { mariadb --no-defaults -h127.0.0.1 -P"$SQL_PORT" -uparley -pparley -N -B -e 'SELECT 1' parley; }
# HAProxy sends traffic to a server only once its health check has passed `rise` times in a row
# (a node that is healthy on its own port can still be DOWN there for a few seconds).
haproxy_up() {
  curl -fsS "http://127.0.0.1:$STATS_PORT/;csv" | awk -F, -v b="$1" -v s="$2" '$1 == b && $2 == s {print $18}' | grep -q '^UP'
}
