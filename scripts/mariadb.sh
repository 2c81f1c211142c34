#!/usr/bin/env bash
# Starts a private MariaDB for tests and development, without systemd.
#   scripts/mariadb.sh start   → prints the TEST_MYSQL_URL to use (the server: tests make their
#                                own databases); with /parley appended, a DATABASE_URL for make run
#   scripts/mariadb.sh stop
# Installs Debian's mariadb-server when it is missing and we are root.
# MARIADB_ARGS: more mariadbd options, given last (so they override the ones below).
set -euo pipefail
DB_DIR=${DB_DIR:-/tmp/parley-mariadb}
DB_PORT=${DB_PORT:-3307}
SOCK=$DB_DIR/mysqld.sock
cmd=${1:-start}

if [ "$cmd" = stop ]; then
  if [ -S "$SOCK" ]; then mariadb-admin --no-defaults --socket="$SOCK" -uroot shutdown || true; fi
  exit 0
fi

if ! command -v mariadbd >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing mariadb-server (Debian)…" >&2
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mariadb-server >/dev/null
  else
    echo "mariadbd not found and cannot install it" >&2
    exit 1
  fi
fi

if ! mariadb-admin --no-defaults --socket="$SOCK" -uroot ping >/dev/null 2>&1; then
  if [ ! -d "$DB_DIR/data/mysql" ]; then
    mkdir -p "$DB_DIR/data"
    mariadb-install-db --no-defaults --user=root --datadir="$DB_DIR/data" \
      --auth-root-authentication-method=normal --skip-test-db >"$DB_DIR/install.log" 2>&1
  fi
  # --no-defaults would leave the server on latin1: the charset flags are required.
  # --innodb-spin-wait-delay=0: a thread waiting for an InnoDB latch sleeps at
  # once instead of spinning first. Where Parley, MariaDB and clients share a
  # few cores, the spin burns the CPU the latch's holder needs (docs/deployment.md, "Running MariaDB").
  # --thread-handling=pool-of-threads: statements run on a few threads instead
  # of one thread per connection, so ten connections' statements queue in
  # MariaDB instead of preempting Parley and one another. One thread group per
  # core that Parley leaves it: all cores but one, at least one (ADR 0027).
  # --innodb-file-per-table=0: tables live in the shared tablespace, so creating
  # or dropping a database is not some fifty files created, synced and removed;
  # the suite makes hundreds (test/support/template-databases.ts), each in half
  # the time. That tablespace never shrinks: fine for development and tests,
  # which is all this server is for (docs/deployment.md for production).
  cores=$(nproc)
  pool_size=$((cores > 1 ? cores - 1 : 1))
  mariadbd --no-defaults --user=root --datadir="$DB_DIR/data" --socket="$SOCK" --port="$DB_PORT" \
    --bind-address=127.0.0.1 --pid-file="$DB_DIR/mariadbd.pid" --log-error="$DB_DIR/error.log" --skip-log-bin \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
    --innodb-buffer-pool-size=${INNODB_BUFFER_POOL:-256M} --innodb-flush-log-at-trx-commit=2 \
    --innodb-spin-wait-delay=0 --innodb-file-per-table=0 --thread-handling=pool-of-threads \
    --thread-pool-size="$pool_size" --max-connections=500 ${MARIADB_ARGS:-} >/dev/null 2>&1 &
  for _ in $(seq 1 300); do
    mariadb-admin --no-defaults --socket="$SOCK" -uroot ping >/dev/null 2>&1 && break
    sleep 0.1
  done
fi

mariadb --no-defaults --socket="$SOCK" -uroot <<SQL
CREATE USER IF NOT EXISTS 'parley'@'127.0.0.1' IDENTIFIED BY 'parley';
GRANT ALL PRIVILEGES ON \`parley%\`.* TO 'parley'@'127.0.0.1';
CREATE USER IF NOT EXISTS 'parley'@'localhost' IDENTIFIED BY 'parley';
GRANT ALL PRIVILEGES ON \`parley%\`.* TO 'parley'@'localhost';
CREATE DATABASE IF NOT EXISTS parley CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
SQL
echo "mysql://parley:parley@127.0.0.1:$DB_PORT"
# On stderr, so that $(...) still captures the URL alone.
echo "(make run: DATABASE_URL=mysql://parley:parley@127.0.0.1:$DB_PORT/parley; TEST_MYSQL_URL: the line above)" >&2
