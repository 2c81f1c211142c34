#!/usr/bin/env bash
# `make soak`: build bench/ (and src/), then bench/soak.ts against one Parley process on MariaDB.
#   SOAK_MINUTES (default 30); BENCH_MYSQL_URL, a MariaDB server URL (a scratch database is made on
#   it and dropped); without it, scripts/mariadb.sh starts (or finds) the private server.
# Exits non-zero when a goal is missed (bench/README.md, "Soak").
set -euo pipefail
cd "$(dirname "$0")/.."

npx tsc -p bench/tsconfig.json

if [ -z "${BENCH_MYSQL_URL:-}" ]; then
  BENCH_MYSQL_URL=$(bash scripts/mariadb.sh start)
  export BENCH_MYSQL_URL
fi

exec node dist/bench/soak.js
