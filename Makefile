# Parley: `make run` starts a server on a fresh machine; `make test` runs every check.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PORT ?= 9991
export PORT

.PHONY: help install install-run build run test spec gen gen-check typecheck lint layers eslint format-check jest jest-sqlite jest-mysql contract contract-sqlite contract-mysql bench clean

help:
	@echo "make run    install, migrate, seed the demo organization if empty, start on 127.0.0.1:$(PORT)"
	@echo "make test   install, check spec + generated/ + types + layers + lint + format, jest and dredd on SQLite, and on MariaDB if TEST_MYSQL_URL"
	@echo "make bench  load benchmarks: BENCH_SCALE=small|10k|100k|1m BENCH_DB=sqlite|mariadb (bench/README.md)"
	@echo "make footprint  idle memory of make run (SQLite) and of Parley on a small MariaDB (bench/README.md)"
	@echo "make soak   a mixed, paced load on MariaDB for SOAK_MINUTES (30): errors, memory and p99 must stay flat (bench/README.md)"

# npm ci only when the lockfile changed since the last install. Everything: the test, lint
# and benchmark tools too (make test).
node_modules/.installed: package-lock.json
	npm ci --no-audit --no-fund || npm install --no-audit --no-fund
	@touch $@

install: node_modules/.installed

# What building and running need, and no more (make run, make cluster): the production
# dependencies, among which package.json lists the compiler and the type packages tsc reads
# (a quarter of the packages, a fraction of the time of the full install; ADR 0030). A full
# install newer than the lockfile already holds them; a tree that had a full install gets a
# full one again (a production install would remove the test tools it holds).
node_modules/.installed-run: package-lock.json
	@if [ node_modules/.installed -nt package-lock.json ]; then touch $@; \
	elif [ -e node_modules/.installed ]; then \
	  npm ci --no-audit --no-fund || npm install --no-audit --no-fund; touch node_modules/.installed $@; \
	else \
	  npm ci --omit=dev --no-audit --no-fund || npm install --omit=dev --no-audit --no-fund; touch $@; fi

# node-gyp compiles a native addon's sources in parallel: the SQLite driver's, on a platform or
# Node version whose add-on its npm package does not carry (ADR 0033).
export JOBS ?= max

install-run: node_modules/.installed-run

# The contract bundle (scripts/bundle-spec.js), rebuilt only when openapi/ or the script changed.
SPEC_INPUTS := $(shell find openapi -type f) scripts/bundle-spec.js
dist/openapi.dereferenced.json: $(SPEC_INPUTS) | node_modules/.installed-run
	node scripts/bundle-spec.js

spec: dist/openapi.dereferenced.json

# Redocly (recommended rules, redocly.yaml) and Spectral (spectral:oas, .spectral.yaml) lint
# the bundled document that clients and SDK generators read: any error fails, warnings print.
.PHONY: spec-lint
spec-lint: install spec
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx redocly lint dist/openapi.bundled.json --format=summary
	npx spectral lint dist/openapi.bundled.json --ruleset .spectral.yaml --fail-severity error

# generated/api.d.ts from openapi/, generated/tables.d.ts from the migrations (scripts/gen-tables.js, ADR 0037).
gen: install
	npm run -s gen

gen-check: install
	npm run -s gen:check

typecheck: install
	npx tsc --noEmit -p tsconfig.json
	npx tsc --noEmit -p bench/tsconfig.json
	npx tsc --noEmit -p web/tsconfig.json
	npx tsc --noEmit -p test/web/tsconfig.json

# The layers of docs/ARCHITECTURE.md (.dependency-cruiser.cjs).
layers: install
	npx depcruise src --config .dependency-cruiser.cjs --output-type err

# ESLint (typescript-eslint, the SQL-only-in-queries rule) and Prettier's check:
# style and layout are never a review comment.
eslint: install
	npx eslint src test bench scripts contract-tests web

format-check: install
	npx prettier --check .

lint: layers eslint format-check

# tsc runs only when a TypeScript source or the build configuration changed since the
# last build (make test builds once, for dredd).
BUILD_INPUTS := $(shell find src generated -name '*.ts') tsconfig.json tsconfig.build.json
# The lockfile, not the install's stamp: a full install after a production one changes no compiler.
dist/.built: $(BUILD_INPUTS) package-lock.json | node_modules/.installed-run
	node_modules/.bin/tsc -p tsconfig.build.json
	@touch $@

# The web client (web/, docs/architecture/web-client.md): Vite bundles it into web/dist/, which
# the server serves at / — rebuilt only when its sources, the contract's types or the lockfile
# changed (about a second).
WEB_INPUTS := $(shell find web -path web/dist -prune -o -type f -print) generated/api.d.ts
web/dist/.built: $(WEB_INPUTS) package-lock.json | node_modules/.installed-run
	node_modules/.bin/vite build web --logLevel warn
	@touch $@

build: spec dist/.built web/dist/.built

run: build
	node dist/src/main.js

jest: jest-sqlite jest-mysql

# jest's default is a worker per core but one: a single worker on two cores. The suites wait
# on databases, server processes and sockets far more than they compute, so a two-core machine
# runs two workers (a pass takes about half as long); larger ones keep jest's default.
JEST_WORKERS ?= $(shell n=$$(nproc); echo $$(( n > 2 ? n - 1 : 2 )))

jest-sqlite: install build
	TEST_MYSQL_URL= npx jest --ci --maxWorkers=$(JEST_WORKERS) --json --outputFile=.tmp-jest-sqlite.json $(JEST_ARGS)

# The MariaDB pass runs only the suites that run per database (eachDatabase;
# jest.config.js): the others ran in the SQLite pass and are not run, or counted, twice.
jest-mysql: install build
	@if [ -n "$$TEST_MYSQL_URL" ]; then \
	  ONLY_MYSQL=1 npx jest --ci --maxWorkers=$(JEST_WORKERS) --json --outputFile=.tmp-jest-mysql.json $(JEST_ARGS); \
	else echo "TEST_MYSQL_URL is not set: MariaDB is NOT tested (scripts/mariadb.sh start prints one)"; fi

contract: contract-sqlite contract-mysql

contract-sqlite: install build
	bash contract-tests/run.sh sqlite

# A new database on TEST_MYSQL_URL's server for the run, dropped afterwards.
contract-mysql: install build
	@if [ -n "$$TEST_MYSQL_URL" ]; then bash contract-tests/run.sh mysql; \
	else echo "TEST_MYSQL_URL is not set: dredd does not run on MariaDB"; fi

# The two dredd passes run at once (each against a server of its own; most of their time is
# spent waiting on it), their output printed pass by pass as each ends.
# scripts/summary.js prints every part's result and fails a run with a failure or a part not run
# (and, with REQUIRE_MYSQL=1 as in CI, one without MariaDB).
test: install spec spec-lint gen-check typecheck lint
	@rm -f .tmp-jest-*.json .tmp-dredd*.log
	@$(MAKE) -s jest-sqlite && $(MAKE) -s jest-mysql && $(MAKE) -s -j2 --output-sync=target contract-sqlite contract-mysql; \
	  status=$$?; node scripts/summary.js || status=1; exit $$status

# bench/run.sh compiles src/ and bench/ together (bench/tsconfig.json), generates the
# dataset when missing, runs the scenarios and writes bench/results/<date>-<scale>-<db>.md.
bench: install spec
	bash bench/run.sh

# bench/web-client.ts through bench/run.sh (its MariaDB set-up): the web client in Chromium on the
# 1m dataset (first screen's JS, first 100 messages drawn, channel switches, scrolling 10,000
# messages); writes bench/results/<date>-web-client.md. Needs the dataset (make bench BENCH_SCALE=1m BENCH_DB=mariadb).
.PHONY: bench-web
bench-web: install spec
	BENCH_WEB=1 BENCH_SCALE=$${BENCH_SCALE:-1m} BENCH_DB=$${BENCH_DB:-mariadb} bash bench/run.sh

# bench/announce.ts through bench/run.sh: sends to the channel everyone is in, on the big dataset
# (10,000 users, 70% soft-deactivated), with a long-poll per active member; writes
# bench/results/<date>-big-mariadb-announce-<variant>.md. Generates the dataset when missing.
.PHONY: bench-announce
bench-announce: install spec
	BENCH_ANNOUNCE=1 BENCH_SCALE=$${BENCH_SCALE:-big} BENCH_DB=$${BENCH_DB:-mariadb} bash bench/run.sh

# bench/soak.sh builds bench/ and runs bench/soak.ts: one Parley process on a scratch MariaDB
# database under a paced mixed load for SOAK_MINUTES (30); fails when an error, a memory growth or
# a p99 that creeps is found, and writes bench/results/<date>-soak-mariadb.md.
.PHONY: soak
soak: install spec
	bash bench/soak.sh

# bench/footprint.sh: resident memory of `make run` (SQLite, demo organization) and of Parley on a
# MariaDB with scripts/mariadb-small.cnf, idle after start and after a little use; writes
# bench/results/<date>-footprint.md. About two minutes.
.PHONY: footprint
footprint: install spec
	bash bench/footprint.sh

clean:
	rm -rf dist node_modules/.installed node_modules/.installed-run .tmp-*

# A local cluster (docs/deployment.md): HAProxy on CLUSTER_PORT (9980), CLUSTER_NODES (2) Parley
# nodes, 3 Galera nodes and Redis, under CLUSTER_DIR (./data/cluster). A second `make cluster`
# on a running one says so and exits 0.
.PHONY: cluster cluster-down
cluster: build
	bash scripts/cluster/up.sh

cluster-down:
	bash scripts/cluster/down.sh

# A fresh cluster in ./data/cluster-check (port 9880): through HAProxy, a message reaches the
# long-polls on every node; then cluster-down must leave no process. About a minute.
.PHONY: cluster-check
cluster-check: build
	bash scripts/cluster/check.sh

# A fresh cluster in ./data/cluster-fault (port 9780) under load through HAProxy while a Parley
# node, the Galera writer and Redis are each killed and restarted: nothing acknowledged is lost
# or delivered twice, and the service answers again within 5 s of each kill; no process passes
# its memory bound (scripts/cluster/memwatch.sh). About 3 minutes.
.PHONY: cluster-fault
cluster-fault: build
	bash scripts/cluster/fault.sh

# bench/cluster.ts on a fresh cluster in ./data/cluster-bench (port 9680): GET and POST /messages
# with 2 Parley nodes and with 1 behind HAProxy, and event delivery on one node and across two;
# writes bench/results/<date>-cluster.md (bench/README.md). About 4 minutes.
.PHONY: bench-cluster
bench-cluster: build
	bash bench/cluster.sh
