#!/usr/bin/env bash
# `make footprint`: build bench/ (and src/), then bench/footprint.ts: the resident memory of
# `make run` on SQLite and of Parley on a MariaDB started with scripts/mariadb-small.cnf, idle.
# Needs mariadbd (Debian's mariadb-server); writes bench/results/<date>-footprint.md.
set -euo pipefail
cd "$(dirname "$0")/.."
npx tsc -p bench/tsconfig.json
exec node dist/bench/footprint.js
