#!/usr/bin/env node
// Writes generated/errors.ts from openapi/: the error codes the contract
// declares, the statuses at which it declares each, the fields each code's
// body carries beside result, msg and code, and every operation's declared
// codes by status. src/errors.ts types ApiError with it; the contract checks
// of jest (test/support/contract.ts) and dredd (contract-tests/hooks.js)
// refuse an error response whose code its operation does not declare.
// With --check nothing is written: the run fails when the file is stale.
//
// An error response declares codes in two ways: a schema whose `code` is an
// enum declares those codes; a schema whose `code` is any string (CodedError)
// declares the codes of the response's examples (docs/openapi-conventions.md).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const SwaggerParser = require('@apidevtools/swagger-parser');
const yaml = require('js-yaml');

const ROOT = path.join(__dirname, '..');
const OUT = path.join(ROOT, 'generated', 'errors.ts');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const ENVELOPE = new Set(['result', 'msg', 'code']);

async function main() {
  const check = process.argv.includes('--check');
  const doc = await SwaggerParser.dereference(path.join(ROOT, 'openapi', 'openapi.yaml'));
  const catalogue = new Catalogue();
  const operations = {};
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      operations[op.operationId] = declaredErrors(op.responses, `${method.toUpperCase()} ${template}`, catalogue);
    }
  }
  const outside = declaredErrors(outsideOperations(), 'common.yaml#/x-outside-operations', catalogue);
  const text = render(catalogue, sortKeys(operations), outside);
  if (check) {
    const current = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
    if (current !== text) {
      console.error('generated/errors.ts is stale: run npm run gen');
      process.exit(1);
    }
    return;
  }
  fs.writeFileSync(OUT, text);
}

/**
 * The answers the server gives outside any operation's own declarations
 * (openapi/components/common.yaml#/x-outside-operations): a path it does not
 * serve, a method the path lacks, an operation not implemented yet. Read
 * from the file itself, its local references resolved, since no operation
 * refers to them.
 */
function outsideOperations() {
  const common = yaml.load(fs.readFileSync(path.join(ROOT, 'openapi', 'components', 'common.yaml'), 'utf8'));
  const resolve = (node) => {
    if (Array.isArray(node)) return node.map(resolve);
    if (!node || typeof node !== 'object') return node;
    if (typeof node.$ref === 'string') {
      if (!node.$ref.startsWith('#/')) throw new Error(`common.yaml: only local references are read here: ${node.$ref}`);
      return resolve(
        node.$ref
          .slice(2)
          .split('/')
          .reduce((at, key) => at[key], common),
      );
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v)]));
  };
  const responses = {};
  for (const [status, name] of Object.entries(common['x-outside-operations'] ?? {})) {
    const response = common.responses?.[name];
    if (!response) throw new Error(`common.yaml#/x-outside-operations: no response ${name}`);
    responses[status] = resolve(response);
  }
  return responses;
}

/** status → the codes these responses declare, each recorded in the catalogue. */
function declaredErrors(responses, where, catalogue) {
  const out = {};
  for (const [status, response] of Object.entries(responses ?? {})) {
    if (!/^[45]\d\d$/.test(status)) continue;
    const media = response.content?.['application/json'];
    if (!media?.schema) throw new Error(`${where} ${status}: an error response needs an application/json schema`);
    const variants = variantsOf(media.schema);
    const exampleCodes = new Set();
    if (media.example?.code) exampleCodes.add(media.example.code);
    for (const e of Object.values(media.examples ?? {})) if (e.value?.code) exampleCodes.add(e.value.code);
    const codes = new Set();
    const enumerated = new Set(variants.flatMap((v) => v.codes ?? []));
    for (const v of variants) {
      // A free `code` (CodedError) stands for the example codes no enumerated variant claims.
      const own = v.codes ?? [...exampleCodes].filter((c) => !enumerated.has(c));
      for (const c of own) {
        codes.add(c);
        catalogue.add(c, Number(status), v.fields);
      }
    }
    for (const c of exampleCodes) {
      if (!codes.has(c)) throw new Error(`${where} ${status}: example code ${c} is not one its schema allows`);
    }
    if (!codes.size) {
      throw new Error(`${where} ${status}: declares no code (give CodedError an example for each code it answers)`);
    }
    out[status] = [...codes].sort();
  }
  return out;
}

/** The error bodies a response schema admits: each one's codes (undefined: any string) and its other fields. */
function variantsOf(schema) {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return alternatives.flatMap(variantsOf);
  const props = schema.properties ?? {};
  if (!props.code) throw new Error(`an error body without a code: ${JSON.stringify(schema).slice(0, 200)}`);
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(props)
    .filter(([name]) => !ENVELOPE.has(name))
    .map(([name, s]) => `${JSON.stringify(name)}${required.has(name) ? '' : '?'}: ${tsType(s)}`);
  return [{ codes: props.code.enum, fields: fields.length ? `{ ${fields.join('; ')} }` : 'Record<string, never>' }];
}

/** A field's TypeScript type: the small part of JSON Schema error bodies use. */
function tsType(s) {
  let t;
  if (s.enum) t = s.enum.map((v) => JSON.stringify(v)).join(' | ');
  else if (s.anyOf || s.oneOf) t = (s.anyOf ?? s.oneOf).map(tsType).join(' | ');
  else if (s.type === 'string') t = 'string';
  else if (s.type === 'integer' || s.type === 'number') t = 'number';
  else if (s.type === 'boolean') t = 'boolean';
  else if (s.type === 'array') t = `Array<${s.items ? tsType(s.items) : 'unknown'}>`;
  else if (s.type === 'object' && s.properties) {
    const required = new Set(s.required ?? []);
    t = `{ ${Object.entries(s.properties)
      .map(([k, v]) => `${JSON.stringify(k)}${required.has(k) ? '' : '?'}: ${tsType(v)}`)
      .join('; ')} }`;
  } else t = 'unknown';
  return s.nullable ? `${t} | null` : t;
}

class Catalogue {
  statuses = new Map();
  fields = new Map();
  add(code, status, fields) {
    if (!this.statuses.has(code)) {
      this.statuses.set(code, new Set());
      this.fields.set(code, new Set());
    }
    this.statuses.get(code).add(status);
    this.fields.get(code).add(fields);
  }
  codes() {
    return [...this.statuses.keys()].sort();
  }
}

function sortKeys(o) {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function render(catalogue, operations, outside) {
  const codes = catalogue.codes();
  const map = (o) =>
    `{\n${Object.entries(o)
      .map(([status, cs]) => `    ${status}: [${cs.map((c) => `'${c}'`).join(', ')}],`)
      .join('\n')}\n  }`;
  return `// Generated from openapi/ by scripts/gen-errors.js (npm run gen); do not edit.

/** Every error code the contract declares. */
export type ErrorCode =
${codes.map((c) => `  | '${c}'`).join('\n')};

/** The HTTP statuses at which the contract declares each code. */
export const ERROR_STATUSES = {
${codes.map((c) => `  ${c}: [${[...catalogue.statuses.get(c)].sort().join(', ')}],`).join('\n')}
} as const;

/** The statuses an error with code C may have. */
export type ErrorStatus<C extends ErrorCode> = (typeof ERROR_STATUSES)[C][number];

/** The fields an error body with each code carries beside result, msg and code: one shape per schema declaring it. */
export type ErrorFields = {
${codes.map((c) => `  ${c}: ${[...catalogue.fields.get(c)].sort().join(' | ')};`).join('\n')}
};

/** Each operation's declared error codes, by status. */
export const OPERATION_ERRORS = {
${Object.entries(operations)
  .map(([id, o]) => `  '${id}': ${map(o)},`)
  .join('\n')}
} as const satisfies Record<string, Record<number, readonly ErrorCode[]>>;

/**
 * The codes answered outside any operation's declarations, by status: a path
 * the server does not serve, a method the path lacks, an operation not
 * implemented yet (openapi/components/common.yaml#/x-outside-operations).
 */
export const OUTSIDE_OPERATION_ERRORS = ${map(outside)
    .replace(/\n {4}/g, '\n  ')
    .replace(/\n {2}\}$/, '\n}')} as const satisfies Record<number, readonly ErrorCode[]>;
`;
}

main().catch((err) => {
  console.error(err.message ?? err);
  process.exit(1);
});
