#!/usr/bin/env bash
# Runs dredd against a freshly started Parley (demo organization seeded,
# responses validated by the server too):
#   contract-tests/run.sh [sqlite]   SQLite in a temporary data directory
#   contract-tests/run.sh mysql      a new MariaDB database on TEST_MYSQL_URL's server, dropped afterwards
# Output goes to .tmp-dredd-<database>.log for the test summary.
set -euo pipefail
cd "$(dirname "$0")/.."
DB=${1:-sqlite}
# make test runs both databases' passes at once: each draws its port from a range of its own.
case "$DB" in mysql) PORT_BASE=30000 ;; *) PORT_BASE=20000 ;; esac
PORT=${DREDD_PORT:-$((PORT_BASE + RANDOM % 10000))}
DATA=$(mktemp -d)
DATABASE_URL=
DB_NAME=
server=
relay=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  if [ -n "$relay" ]; then kill "$relay" 2>/dev/null || true; wait "$relay" 2>/dev/null || true; fi
  if [ -n "$DB_NAME" ]; then node contract-tests/mysql-database.js drop "$DB_NAME" || true; fi
  rm -rf "$DATA"
}
trap cleanup EXIT
case "$DB" in
  sqlite) ;;
  mysql)
    if [ -z "${TEST_MYSQL_URL:-}" ]; then echo "contract-tests/run.sh mysql needs TEST_MYSQL_URL (scripts/mariadb.sh start prints one)" >&2; exit 2; fi
    DB_NAME="parley_dredd_$(od -An -N5 -tx1 /dev/urandom | tr -d ' \n')"
    DATABASE_URL=$(node contract-tests/mysql-database.js create "$DB_NAME")
    ;;
  *) echo "usage: contract-tests/run.sh [sqlite|mysql]" >&2; exit 2 ;;
esac
LOG=.tmp-dredd-$DB.log
export DREDD_SERVER="http://127.0.0.1:$PORT"
# The server's database, for scenarios that set an organization setting no endpoint changes yet (scenarios/database.js).
export DREDD_DATA_DIR=$DATA DREDD_DATABASE_URL=$DATABASE_URL
# A stand-in push relay, so that push registration can succeed (contract-tests/push-relay.js).
RELAY_PORT=$((PORT + 1))
node contract-tests/push-relay.js "$RELAY_PORT" &
relay=$!
# Rate limits off: dredd sends far more than Zulip allows one client (contract-tests/dredd-document.js).
PUSH_RELAY_URL="http://127.0.0.1:$RELAY_PORT" PORT=$PORT DATA_DIR=$DATA VALIDATE_RESPONSES=1 LOG_LEVEL=warn RATE_LIMITS=off DATABASE_URL=$DATABASE_URL node dist/src/main.js >"$DATA/server.log" 2>&1 &
server=$!
# Migrating and seeding a new MariaDB database takes a few seconds.
for _ in $(seq 1 600); do
  curl -sf "$DREDD_SERVER/api/v1/server_settings" >/dev/null 2>&1 && break
  if ! kill -0 "$server" 2>/dev/null; then echo "Parley did not start ($DB):"; cat "$DATA/server.log"; exit 1; fi
  sleep 0.1
done
grep -m1 "listening" "$DATA/server.log" || true
set +e
# The contract less its 429s, which jest covers (contract-tests/dredd-document.js).
node contract-tests/dredd-document.js "$DATA/openapi.dredd.json"
npx dredd "$DATA/openapi.dredd.json" "$DREDD_SERVER" \
  --hookfiles=contract-tests/hooks.js --loglevel error --reporter dot 2>&1 | grep -v 'padLevels' | tee "$LOG"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "--- server log ---"; tail -50 "$DATA/server.log"
fi
exit "$status"
