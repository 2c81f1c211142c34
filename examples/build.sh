#!/usr/bin/env bash
# Generates the example clients from the bundled contract and compiles the
# examples into dist/examples/. The clients are generated, never committed:
# they always match the contract of this checkout (make spec writes it).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/openapi.bundled.json ] || node scripts/bundle-spec.js
# openapi-typescript: the types openapi-fetch checks requests and responses against.
# A parameter with a server-side default stays optional for the caller (the
# generator's default would make every such form field required).
npx openapi-typescript ./dist/openapi.bundled.json -o examples/openapi-fetch/generated/api.d.ts --default-non-nullable false >/dev/null
# @hey-api/openapi-ts: types, an SDK function per operation, and its fetch client.
# (The ./ matters: a bare dist/… would be read as a registry shorthand.)
rm -rf examples/hey-api/generated
npx openapi-ts -i ./dist/openapi.bundled.json -o examples/hey-api/generated --silent --no-log-file
# oazapfts: types and a function per operation over @oazapfts/runtime; --optimistic makes
# each return its success body and throw on any other answer. It writes only into a directory that exists.
rm -rf examples/oazapfts/generated
mkdir -p examples/oazapfts/generated
npx oazapfts ./dist/openapi.bundled.json examples/oazapfts/generated/api.ts --optimistic
npx tsc -p examples/tsconfig.json
