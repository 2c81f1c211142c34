import fs from 'node:fs';
import path from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';

export type Document = OpenAPIV3.Document;
export type Operation = OpenAPIV3.OperationObject;
export type SchemaObject = OpenAPIV3.SchemaObject;

export const SPEC_ROOT = path.join(__dirname, '..', '..', '..', 'openapi', 'openapi.yaml');
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** How a form field's text becomes a value: as is, JSON always, or JSON when it parses (unions with a string branch). */
export type FieldDecoding = 'raw' | 'json' | 'json-or-raw';

export interface OperationInfo {
  operationId: string;
  method: HttpMethod;
  pathTemplate: string;
  regex: RegExp;
  pathParamNames: string[];
  /** Path parameters declared as integers (converted from the URL text). */
  integerPathParams: Set<string>;
  op: Operation;
  authenticated: boolean;
  /** Declared query parameter names. */
  queryParams: Set<string>;
  /** Query parameters sent as JSON text (`content: application/json`). */
  jsonQueryParams: Set<string>;
  /** Declared body fields and how each is decoded (empty when there is no body). */
  bodyFields: Map<string, FieldDecoding>;
  acceptsFiles: boolean;
  /** The file part may be left out: the operation takes a form body too (POST and PATCH /bots). */
  filesOptional: boolean;
  /** An incoming webhook bot's API key may call it (x-allow-incoming-webhooks; Zulip's allow_incoming_webhooks). */
  allowIncomingWebhooks: boolean;
  /** Served by a router of its own ahead of the pipeline (x-own-router): the pipeline answers 404 for it. */
  ownRouter: boolean;
}

export interface SpecIndex {
  document: Document;
  operations: OperationInfo[];
  byId: Map<string, OperationInfo>;
}

/** Loads openapi/ (validated and fully dereferenced) and indexes its operations. */
export async function loadSpec(root: string = resolveSpecRoot()): Promise<SpecIndex> {
  // Loaded lazily: its ESM dependencies load under Node but not inside jest,
  // which reads the dereferenced document written by scripts/bundle-spec.js.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const SwaggerParser = require('@apidevtools/swagger-parser') as typeof import('@apidevtools/swagger-parser');
  const document = (await SwaggerParser.validate(root)) as Document;
  return indexSpec(document);
}

/**
 * The contract a server starts with: dist/openapi.dereferenced.json, which
 * scripts/bundle-spec.js validated and wrote and jest and dredd read, when
 * it is newer than every file of openapi/; otherwise openapi/ itself,
 * validated here. Validating takes about a second, every restart paid it
 * (ADR 0030); a contract edited after the last bundle is still what runs.
 */
export async function loadServedSpec(): Promise<SpecIndex> {
  const root = resolveSpecRoot();
  const built = builtContractFile('openapi.dereferenced.json', path.dirname(root));
  return built ? loadSpecFile(built) : loadSpec(root);
}

/**
 * A file scripts/bundle-spec.js wrote into dist/ (beside src/ when run from
 * the sources, beside dist/src/ when built), if it exists and no file under
 * `sources` is newer; null otherwise.
 */
export function builtContractFile(name: string, sources: string = path.dirname(resolveSpecRoot())): string | null {
  const candidates = [path.join(__dirname, '..', '..', 'dist', name), path.join(__dirname, '..', '..', name)];
  const file = candidates.find((f) => fs.existsSync(f));
  if (!file) return null;
  const built = fs.statSync(file).mtimeMs;
  return newestFile(sources) <= built ? file : null;
}

function newestFile(dir: string): number {
  let newest = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestFile(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/** Loads an already validated and dereferenced document (dist/openapi.dereferenced.json). */
export function loadSpecFile(file: string): SpecIndex {
  return indexSpec(JSON.parse(fs.readFileSync(file, 'utf8')) as Document);
}

/** openapi/ sits beside src/ in the repository and beside dist/src/ when built. */
function resolveSpecRoot(): string {
  const fromSource = path.join(__dirname, '..', '..', 'openapi', 'openapi.yaml');
  return fs.existsSync(fromSource) ? fromSource : SPEC_ROOT;
}

export function indexSpec(document: Document): SpecIndex {
  const operations: OperationInfo[] = [];
  const siblings = siblingTemplates(Object.keys(document.paths ?? {}));
  for (const [pathTemplate, item] of Object.entries(document.paths ?? {})) {
    if (!item) continue;
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      if (!op.operationId) throw new Error(`${method.toUpperCase()} ${pathTemplate} has no operationId`);
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])] as OpenAPIV3.ParameterObject[];
      const integerPathParams = new Set(
        params.filter((p) => p.in === 'path' && (p.schema as SchemaObject | undefined)?.type === 'integer').map((p) => p.name),
      );
      const pathParamNames: string[] = [];
      const regex = new RegExp(
        '^' +
          pathTemplate.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_m, name: string) => {
            pathParamNames.push(name);
            // Beside a sibling template, an integer parameter takes digits only
            // (Django's <int:...>), leaving every other segment to the sibling.
            return siblings.has(pathTemplate) && integerPathParams.has(name) ? '([0-9]+)' : '([^/]+)';
          }) +
          '/?$',
      );
      const body = (op.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content;
      const form = body?.['application/x-www-form-urlencoded'];
      const multipart = body?.['multipart/form-data'];
      const media = form ?? multipart;
      const bodyFields = new Map<string, FieldDecoding>();
      const schema = media?.schema as SchemaObject | undefined;
      for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
        const p = prop as SchemaObject;
        const jsonEncoded = /^application\/json/.test(media?.encoding?.[name]?.contentType ?? '');
        bodyFields.set(name, decodingFor(p, jsonEncoded));
      }
      // A file part is declared in the multipart schema; an operation that also takes a form
      // body (POST /bots: the avatar) takes it optionally.
      const multipartProps = (multipart?.schema as SchemaObject | undefined)?.properties ?? {};
      const acceptsFiles = Object.values(multipartProps).some((p) => (p as SchemaObject).format === 'binary');
      const security = op.security ?? document.security ?? [];
      operations.push({
        operationId: op.operationId,
        method,
        pathTemplate,
        regex,
        pathParamNames,
        integerPathParams,
        op,
        authenticated: security.length > 0,
        queryParams: new Set(params.filter((p) => p.in === 'query').map((p) => p.name)),
        jsonQueryParams: new Set(params.filter((p) => p.in === 'query' && p.content?.['application/json']).map((p) => p.name)),
        bodyFields,
        acceptsFiles,
        filesOptional: acceptsFiles && form !== undefined,
        allowIncomingWebhooks: (op as { 'x-allow-incoming-webhooks'?: boolean })['x-allow-incoming-webhooks'] === true,
        ownRouter: (op as { 'x-own-router'?: boolean })['x-own-router'] === true,
      });
    }
  }
  // Literal segments beat parameters: /messages/flags before /messages/{message_id};
  // of sibling templates, the one whose integer parameters take digits only goes first.
  operations.sort((a, b) => literalWeight(b.pathTemplate) - literalWeight(a.pathTemplate) || digitsOnly(b) - digitsOnly(a));
  return { document, operations, byId: new Map(operations.map((o) => [o.operationId, o])) };
}

/**
 * Templates that differ only in their parameters' names, such as
 * /users/{user_id} and /users/{email}. Zulip routes such pairs by type: its
 * integer route is tried first and takes digits only, so /users/12 is a user
 * ID and /users/iago@zulip.com (or any other word) an email. The contract
 * describes both, as Zulip's documentation does, and the router gives each
 * sibling's integer parameters a digits-only pattern.
 */
export function siblingTemplates(templates: string[]): Set<string> {
  const byShape = new Map<string, string[]>();
  for (const t of templates) {
    const shape = t.replace(/\{[^}]+\}/g, '{}');
    byShape.set(shape, [...(byShape.get(shape) ?? []), t]);
  }
  return new Set([...byShape.values()].filter((group) => group.length > 1).flat());
}

/**
 * For express-openapi-validator, which matches paths by their shape alone and
 * would take /users/{email} for /users/12 (src/http/validation.ts): a unique
 * literal last segment for each sibling template without an integer parameter.
 */
export function validatorAliases(document: Document): Map<string, string> {
  const paths = document.paths ?? {};
  const aliases = new Map<string, string>();
  for (const t of siblingTemplates(Object.keys(paths))) {
    const item = paths[t] ?? {};
    const params = [...(item.parameters ?? []), ...HTTP_METHODS.flatMap((m) => item[m]?.parameters ?? [])] as OpenAPIV3.ParameterObject[];
    const hasInteger = params.some((p) => p.in === 'path' && (p.schema as SchemaObject | undefined)?.type === 'integer');
    if (!hasInteger) aliases.set(t, `${t}/~sibling-${aliases.size + 1}`);
  }
  return aliases;
}

const digitsOnly = (o: OperationInfo) => (o.regex.source.includes('([0-9]+)') ? 1 : 0);

const literalWeight = (t: string) => t.split('/').filter((s) => s && !s.startsWith('{')).length * 100 - t.split('{').length;

/** A field whose schema cannot be a string is always JSON; a union with a string branch is JSON when it parses. */
function decodingFor(schema: SchemaObject, jsonEncoded: boolean): FieldDecoding {
  const types = schemaTypes(schema);
  if (types.size === 0) return jsonEncoded ? 'json-or-raw' : 'raw';
  if (!types.has('string')) return 'json';
  if (types.size === 1) return 'raw';
  return 'json-or-raw';
}

function schemaTypes(schema: SchemaObject): Set<string> {
  const out = new Set<string>();
  if (schema.type) out.add(schema.type);
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    for (const t of schemaTypes(branch as SchemaObject)) out.add(t);
  }
  return out;
}

export type RouteMatch =
  | { kind: 'operation'; info: OperationInfo; pathParams: Record<string, string> }
  | { kind: 'bad-path-parameter'; name: string }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

/** Finds the operation for a path under /api/v1 (404 and 405 are decided here, before authentication). */
export function matchRoute(index: SpecIndex, apiPath: string, method: string): RouteMatch {
  const m = method.toLowerCase();
  const allowed: string[] = [];
  let template: string | null = null;
  for (const info of index.operations) {
    const found = info.regex.exec(apiPath);
    if (!found) continue;
    if (template !== null && info.pathTemplate !== template) continue;
    template = info.pathTemplate;
    if (info.method === m || (m === 'head' && info.method === 'get')) {
      const pathParams: Record<string, string> = Object.create(null);
      for (const [i, name] of info.pathParamNames.entries()) {
        const value = decodePathSegment(found[i + 1]!);
        // A malformed escape (%FF, a lone %, a cut UTF-8 sequence) names no object.
        if (value === null) return { kind: 'bad-path-parameter', name };
        pathParams[name] = value;
      }
      return { kind: 'operation', info, pathParams };
    }
    allowed.push(info.method.toUpperCase());
  }
  return allowed.length ? { kind: 'method-not-allowed', allowed: allowed.sort() } : { kind: 'not-found' };
}

/** decodeURIComponent, or null when the segment's percent-escapes are not valid UTF-8. */
function decodePathSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
