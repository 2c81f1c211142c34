#!/usr/bin/env bash
# `make bench-cluster`: a fresh cluster in its own directory and ports (CLUSTER_DIR
# ./data/cluster-bench, CLUSTER_PORT 9680 unless set), bench/cluster.ts on it, then
# `cluster-down` (by PID). Writes bench/results/<date>-cluster.md. About 4 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export CLUSTER_DIR=${CLUSTER_DIR:-./data/cluster-bench}
export CLUSTER_PORT=${CLUSTER_PORT:-9680}
export CLUSTER_NODES=2
# Sixteen connections from one address would meet the per-user and per-address limits.
export RATE_LIMITS=${RATE_LIMITS:-off}
# shellcheck source=../scripts/cluster/env.sh
source scripts/cluster/env.sh
export CLUSTER_DIR

npx tsc -p bench/tsconfig.json
bash scripts/cluster/down.sh >/dev/null
rm -rf "$CLUSTER_DIR"
status=0
bash scripts/cluster/up.sh || status=$?
if [ "$status" = 0 ]; then node dist/bench/cluster.js || status=$?; fi
bash scripts/cluster/down.sh
exit "$status"
