#!/usr/bin/env bash
# `make bench`: build bench/ (and src/), make sure the database is there, run bench/run.ts.
#   BENCH_SCALE=small|10k|100k|1m (default small)   BENCH_DB=sqlite|mariadb (default sqlite)
#   For MariaDB without BENCH_MYSQL_URL, scripts/mariadb.sh starts (or finds) the private server.
#   BENCH_INNODB_BUFFER_POOL: grow that server's buffer pool first (default 2G at 1m and big; 0 = leave it).
set -euo pipefail
cd "$(dirname "$0")/.."

npx tsc -p bench/tsconfig.json

db=$(echo "${BENCH_DB:-sqlite}" | tr '[:upper:]' '[:lower:]')
if [ "$db" = mariadb ] || [ "$db" = mysql ]; then
  if [ -z "${BENCH_MYSQL_URL:-}" ]; then
    bash scripts/mariadb.sh start >/dev/null
    # Same machine: Parley talks to it over its Unix socket, as a local production install would.
    BENCH_MYSQL_URL="mysql://parley:parley@localhost/?socket=${DB_DIR:-/tmp/parley-mariadb}/mysqld.sock"
    # Its root account (no password, over the socket): the generator writes the load's pages at
    # full speed when it ends (src/db/settle.ts), which takes setting a global variable.
    BENCH_MYSQL_ADMIN_URL=${BENCH_MYSQL_ADMIN_URL:-"mysql://root@localhost/mysql?socket=${DB_DIR:-/tmp/parley-mariadb}/mysqld.sock"}
    export BENCH_MYSQL_URL BENCH_MYSQL_ADMIN_URL
  fi
  scale=$(echo "${BENCH_SCALE:-small}" | tr '[:upper:]' '[:lower:]')
  pool=${BENCH_INNODB_BUFFER_POOL:-$([ "$scale" = 1m ] || [ "$scale" = big ] && echo 2G || echo 0)}
  sock=${DB_DIR:-/tmp/parley-mariadb}/mysqld.sock
  if [ "$pool" != 0 ] && [ -S "$sock" ]; then
    # The 1m dataset is several GB; with the script's default 256M pool the run would measure disk reads.
    # Growing the pool is an online operation (MariaDB ≥ 10.2) and never shrinks it here.
    bytes=$(numfmt --from=iec "$pool")
    mariadb --no-defaults --socket="$sock" -uroot -e \
      "SET GLOBAL innodb_buffer_pool_size = GREATEST(@@innodb_buffer_pool_size, $bytes)" \
      && echo "MariaDB buffer pool: at least $pool" >&2 || echo "could not grow the buffer pool (continuing)" >&2
  fi
fi

# BENCH_WEB=1 (make bench-web): the web client in Chromium on the same dataset instead (bench/web-client.ts).
if [ "${BENCH_WEB:-}" = 1 ]; then
  exec node dist/bench/web-client.js
fi
# BENCH_ANNOUNCE=1 (make bench-announce, BENCH_SCALE=big): sends to the channel everyone is in (bench/announce.ts).
if [ "${BENCH_ANNOUNCE:-}" = 1 ]; then
  exec node dist/bench/announce.js
fi
exec node dist/bench/run.js
