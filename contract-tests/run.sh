#!/usr/bin/env bash
# Runs dredd against a freshly started Parley (SQLite in a temporary data
# directory, demo organization seeded, responses validated by the server
# too). Output goes to .tmp-dredd.log for the test summary.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${DREDD_PORT:-$((20000 + RANDOM % 20000))}
DATA=$(mktemp -d)
export DREDD_SERVER="http://127.0.0.1:$PORT"
PORT=$PORT DATA_DIR=$DATA VALIDATE_RESPONSES=1 LOG_LEVEL=warn DATABASE_URL= node dist/src/main.js >"$DATA/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$DATA"' EXIT
for _ in $(seq 1 100); do
  curl -sf "$DREDD_SERVER/api/v1/server_settings" >/dev/null 2>&1 && break
  sleep 0.1
done
set +e
npx dredd dist/openapi.dereferenced.json "$DREDD_SERVER" \
  --hookfiles=contract-tests/hooks.js --loglevel error --reporter dot 2>&1 | grep -v 'padLevels' | tee .tmp-dredd.log
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "--- server log ---"; tail -50 "$DATA/server.log"
fi
exit "$status"
