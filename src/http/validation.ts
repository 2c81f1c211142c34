import Ajv, { type ValidateFunction } from 'ajv';
import * as OpenApiValidator from 'express-openapi-validator';
import { ApiError, type ErrorFields } from '../errors';
import type { RequestHandler } from 'express';
import type { OpenAPIV3 as EovOpenApi } from 'express-openapi-validator/dist/framework/types';
import { validatorAliases, type Document, type OperationInfo, type SchemaObject } from './spec';
import { scopeIfAny } from './scope';

/**
 * express-openapi-validator, configured for a pipeline that has already
 * matched the route, parsed and normalised the parameters and authenticated
 * the caller: it only validates. Security is ours (src/http/auth.ts);
 * multipart is parsed by our multer before normalisation.
 */
export function requestValidator(document: Document, validateResponses: boolean): RequestHandler {
  // The validator is a function of the contract and the one option alone (no state of an
  // app, a context or a request): an app built again on the same loaded contract, as the
  // tests build one per test server, reuses it instead of preparing the contract and
  // compiling each operation's schemas again (about a second of CPU per app, and a third
  // of one per operation it serves). A server process builds one app: nothing changes there.
  let built = validators.get(document);
  if (!built) validators.set(document, (built = new Map()));
  let validator = built.get(validateResponses);
  if (!validator) built.set(validateResponses, (validator = newRequestValidator(document, validateResponses)));
  return validator;
}

const validators = new WeakMap<Document, Map<boolean, RequestHandler>>();

function newRequestValidator(document: Document, validateResponses: boolean): RequestHandler {
  const aliases = validatorAliases(document);
  const middlewares = OpenApiValidator.middleware({
    // openapi-types and EOV each declare OpenAPI 3.0; both describe the same
    // bundled document swagger-parser has validated.
    apiSpec: withAliasedPaths(structuredClone(document), aliases) as EovOpenApi.DocumentV3,
    validateApiSpec: false, // swagger-parser validated it at load
    validateRequests: { allowUnknownQueryParameters: true },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    validateSecurity: false,
    ignoreUndocumented: true,
    fileUploader: false,
    validateFormats: false,
  }) as unknown as RequestHandler[];
  const i = middlewares.findIndex((m) => m.name === 'metadataMiddleware');
  if (i < 0) throw new Error('express-openapi-validator: metadataMiddleware not found (layout changed on upgrade?)');
  middlewares[i] = cachedMetadata(middlewares[i]!, aliases);
  const response = middlewares.findIndex((m) => m.name === 'responseMiddleware');
  if (validateResponses && response < 0)
    throw new Error('express-openapi-validator: responseMiddleware not found (layout changed on upgrade?)');
  // An operation without parameters or body has nothing to validate in a request (the
  // pipeline has dropped undeclared query parameters): only the response check, in tests,
  // needs EOV, and it needs just the route's metadata.
  const forParameterless = validateResponses ? [middlewares[i]!, middlewares[response]!] : [];
  return chained(middlewares, forParameterless);
}

/**
 * The validator's middlewares as one step of the pipeline (each router layer costs a
 * dispatch per request), with the shorter list for operations that take no parameters.
 */
function chained(all: RequestHandler[], forParameterless: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    const info = scopeIfAny(res)?.info;
    const list = info && takesNothing(info) ? forParameterless : all;
    let i = 0;
    const step = (err?: unknown): void => {
      if (err || i === list.length) {
        next(err);
        return;
      }
      const mw = list[i++]!;
      try {
        const result = mw(req, res, step) as unknown;
        if (result instanceof Promise) result.catch(step);
      } catch (e) {
        step(e);
      }
    };
    step();
  };
}

// Per operation of the loaded contract, not per request: a fact of its schema, worked out once.
const parameterless = new WeakMap<OperationInfo, boolean>();
function takesNothing(info: OperationInfo): boolean {
  let known = parameterless.get(info);
  if (known === undefined) {
    known = info.queryParams.size === 0 && info.pathParamNames.length === 0 && info.bodyFields.size === 0 && !info.op.requestBody;
    parameterless.set(info, known);
  }
  return known;
}

interface OpenApiMetadata {
  pathParams: Record<string, string>;
  [key: string]: unknown;
}

/**
 * EOV's metadata step finds the request's route by compiling every path of
 * the contract to a regular expression, on every request (about a tenth of
 * the CPU of a small request, profiled). The pipeline has already matched
 * the operation (src/http/spec.ts), so EOV's answer is kept per operation and
 * reused with this request's path parameters.
 */
/** The document with each aliased template renamed (the order of paths is kept). */
function withAliasedPaths(document: Document, aliases: Map<string, string>): Document {
  if (aliases.size === 0) return document;
  const paths: Document['paths'] = {};
  for (const [t, item] of Object.entries(document.paths)) paths[aliases.get(t) ?? t] = item;
  return { ...document, paths };
}

function cachedMetadata(original: RequestHandler, aliases: Map<string, string>): RequestHandler {
  const byOperation = new Map<string, Omit<OpenApiMetadata, 'pathParams'>>();
  return (req, res, next) => {
    const route = scopeIfAny(res);
    const key = route ? `${req.method} ${route.info.operationId}` : undefined;
    const known = key === undefined ? undefined : byOperation.get(key);
    if (known && route) {
      const pathParams = { ...route.pathParams };
      (req as unknown as { openapi: OpenApiMetadata }).openapi = { ...known, pathParams };
      req.params = pathParams;
      next();
      return;
    }
    // The validator finds the operation by the URL, once per operation: an
    // aliased sibling's URL gets the alias's last segment for that lookup, so
    // the validator cannot take it for its sibling (validatorAliases).
    const alias = route && aliases.get(route.info.pathTemplate);
    const url = req.originalUrl;
    // The contract's server is /api/v1: a /json request (the same operations, by session) is
    // looked up under it, or the validator, ignoring what it calls undocumented, would pass its
    // parameters on undecoded (narrow as text, last_event_id as "-1") until an /api/v1 request
    // of the operation had filled the cache below.
    if (url.startsWith('/json/')) req.originalUrl = `/api/v1${url.slice('/json'.length)}`;
    if (alias) req.originalUrl = req.originalUrl.replace(/\/?(\?|$)/, `${alias.slice(alias.lastIndexOf('/'))}$1`);
    void original(req, res, (err?: unknown) => {
      req.originalUrl = url;
      const found = (req as unknown as { openapi?: OpenApiMetadata }).openapi;
      if (!err && key !== undefined && found) {
        const { pathParams: _omitted, ...rest } = found;
        byOperation.set(key, rest);
      }
      next(err);
    });
  };
}

interface EovErrorItem {
  path: string;
  message: string;
  errorCode?: string;
}

/**
 * Rewrites a validator error into Zulip's wording (zerver/lib/typed_endpoint.py
 * templates): the clients' users read these messages.
 */
type ValidationFailure =
  | { msg: string; code: 'BAD_REQUEST'; data: ErrorFields['BAD_REQUEST'] }
  | { msg: string; code: 'REQUEST_VARIABLE_MISSING'; data: ErrorFields['REQUEST_VARIABLE_MISSING'] };

export function zulipMessageForValidation(errors: EovErrorItem[]): ValidationFailure {
  let e = errors[0];
  if (!e) return { msg: 'Invalid request', code: 'BAD_REQUEST', data: {} };
  // A value matching no branch of a union fails each branch first; the union
  // itself is what to report ("Invalid to", not "to is not an integer").
  const first = e;
  const union = errors.find(
    (x) => /^(anyOf|oneOf)\./.test(x.errorCode ?? '') && (first.path === x.path || first.path.startsWith(x.path + '/')),
  );
  if (union) e = union;
  const kind = (e.errorCode ?? '').replace(/\.openapi\.validation$/, '');
  const segments = e.path.split('/').filter(Boolean);
  const location = ['body', 'query', 'path', 'params', 'headers'].includes(segments[0] ?? '') ? segments.slice(1) : segments;
  if (kind === 'required') {
    const missing = /required property '([^']+)'/.exec(e.message)?.[1];
    const varPath = missing && location[location.length - 1] !== missing ? [...location, missing] : location;
    if (varPath.length <= 1) {
      const name = varPath[0] ?? missing ?? 'unknown';
      return { msg: `Missing '${name}' argument`, code: 'REQUEST_VARIABLE_MISSING', data: { var_name: name } };
    }
    const parent = formatVar(varPath.slice(0, -1));
    return { msg: `${parent} field is missing: ${varPath[varPath.length - 1]}`, code: 'BAD_REQUEST', data: {} };
  }
  const v = formatVar(location);
  switch (kind) {
    case 'type': {
      const expected = /must be (\w+)/.exec(e.message)?.[1] ?? '';
      const noun: Record<string, string> = {
        integer: 'an integer',
        boolean: 'a boolean',
        string: 'a string',
        array: 'a list',
        object: 'a dict',
        number: 'a float',
      };
      return { msg: noun[expected] ? `${v} is not ${noun[expected]}` : `Invalid ${v}`, code: 'BAD_REQUEST', data: {} };
    }
    case 'maxLength': {
      const limit = /more than (\d+)/.exec(e.message)?.[1];
      return { msg: `${v} is too long (limit: ${limit} characters)`, code: 'BAD_REQUEST', data: {} };
    }
    case 'minLength':
      return { msg: /fewer than 1 /.test(e.message) ? `${v} cannot be blank` : `${v} is too short.`, code: 'BAD_REQUEST', data: {} };
    case 'minimum':
    case 'exclusiveMinimum':
      return { msg: `${v} is too small`, code: 'BAD_REQUEST', data: {} };
    case 'maximum':
    case 'exclusiveMaximum':
      return { msg: `${v} is too large`, code: 'BAD_REQUEST', data: {} };
    case 'maxItems':
      return { msg: `${v} has too many items`, code: 'BAD_REQUEST', data: {} };
    case 'additionalProperties': {
      const extra = /additional propert(?:y|ies)[^']*'([^']+)'/.exec(e.message)?.[1] ?? '';
      return { msg: `Argument "${extra}" at ${v} is unexpected`, code: 'BAD_REQUEST', data: {} };
    }
    case 'pattern':
    case 'format':
      return { msg: `${v} has invalid format`, code: 'BAD_REQUEST', data: {} };
    default:
      // enum, anyOf, oneOf, const, ...: Zulip says "Invalid x".
      return { msg: `Invalid ${v}`, code: 'BAD_REQUEST', data: {} };
  }
}

/** ['subscriptions', '0', 'name'] → subscriptions[0]["name"], as Zulip names nested values. */
function formatVar(segments: string[]): string {
  if (segments.length === 0) return 'request';
  let out = decodeSegment(segments[0]!);
  for (const s of segments.slice(1)) out += /^\d+$/.test(s) ? `[${s}]` : `["${decodeSegment(s)}"]`;
  return out;
}

const decodeSegment = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

/**
 * JSON query parameters, validated as sent. The validator decodes them with
 * type coercion on (it must, for plain query parameters), and coerces inside
 * them too: message_ids=[null] would pass as [0], [true] as [1], where Zulip
 * answers "message_ids[0] is not an integer". A second, strict validation of
 * the value as the client sent it (decoded once, by the parameter
 * normalisation of src/http/params.ts) closes that gap.
 */
const strict = new Ajv({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false, validateFormats: false });
const strictValidators = new Map<string, ValidateFunction>();

export function checkJsonQueryAsSent(info: OperationInfo, asSent: Readonly<Record<string, unknown>>): void {
  for (const [name, value] of Object.entries(asSent)) {
    const key = `${info.operationId} ${name}`;
    let validate = strictValidators.get(key);
    if (!validate) {
      const param = (info.op.parameters ?? []).find((p) => 'name' in p && p.name === name && p.in === 'query') as
        { content?: Record<string, { schema?: SchemaObject }> } | undefined;
      validate = strict.compile(param?.content?.['application/json']?.schema ?? {});
      strictValidators.set(key, validate);
    }
    if (validate(value)) continue;
    const errors = (validate.errors ?? []).map((e) => ({
      path: `/query/${name}${e.instancePath}`,
      message: e.message ?? '',
      errorCode: `${e.keyword}.openapi.validation`,
    }));
    const { msg, code, data } = zulipMessageForValidation(errors);
    throw new ApiError(msg, code, 400, data);
  }
}
