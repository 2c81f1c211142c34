import type { NextFunction, Request, Response } from 'express';
import type { OpenAPIV3 } from 'openapi-types';
import { ApiError } from '../errors';
import type { RequestScope } from './scope';

/**
 * Parameter normalisation, driven by the operation:
 * - PATCH/DELETE/POST parameters may arrive in the query string (Zulip reads
 *   both); those the body declares move into the body, the body winning.
 * - Fields whose schema is not a plain string arrive as JSON text and are
 *   decoded here (the validator does not decode form fields).
 * - Parameters the operation does not declare are dropped and reported back
 *   in `ignored_parameters_unsupported` (feature level 167).
 * What it finds (parameters as sent, ignored, sent) goes into the request's scope.
 * Parameters are `Record<string, unknown>` here: nothing has validated them yet.
 */
export function normalizeParams(req: Request, scope: RequestScope): void {
  const { info } = scope;
  if (info.method === 'get' && req.body === undefined && !req.originalUrl.includes('?') && scope.uploadedFiles.length === 0) {
    // Nothing sent (most GETs of a client's start-up): nothing to move, decode or drop. Express's
    // req.query stays (an empty object), which saves redefining a property of every request.
    // The scope's empty defaults stand.
    return;
  }
  const ignored = new Set<string>();
  // Prototype-free copies: a parameter named __proto__ or constructor is a plain key here.
  const query: Record<string, unknown> = Object.assign(Object.create(null), req.query);
  if (info.method === 'get') {
    // A GET's parameters are its query string. Zulip (Django) never reads a GET's body, and
    // nothing here validates one: it must not reach a handler.
    req.body = undefined;
    for (const key of Object.keys(query)) {
      if (!info.queryParams.has(key)) {
        ignored.add(key);
        delete query[key];
      }
    }
    // The validator decodes JSON query parameters and coerces what it finds
    // inside them ([null] → [0], [true] → [1]); the value as sent is kept so
    // the pipeline can refuse a value that only passed by coercion. Text that
    // is not JSON at all is Zulip's "is not valid JSON", as for a body field
    // (the validator would call it by the type it expected: "is not a list").
    const asSent: Record<string, unknown> = {};
    for (const name of info.jsonQueryParams) {
      if (typeof query[name] === 'string') asSent[name] = decodeField(name, query[name], 'json');
    }
    scope.jsonQueryAsSent = asSent;
  } else {
    const body: Record<string, unknown> = Object.assign(Object.create(null), isPlainObject(req.body) ? req.body : {});
    for (const [key, value] of Object.entries(query)) {
      if (info.queryParams.has(key)) continue;
      if (info.bodyFields.has(key) && !(key in body)) body[key] = value;
      else if (!info.bodyFields.has(key)) ignored.add(key);
      delete query[key];
    }
    for (const key of Object.keys(body)) {
      const decoding = info.bodyFields.get(key);
      if (decoding === undefined) {
        ignored.add(key);
        delete body[key];
        continue;
      }
      body[key] = decodeField(key, body[key], decoding);
    }
    req.body = body;
    // The bundled document is dereferenced (src/http/spec.ts): no $ref is left.
    const content = (info.op.requestBody as OpenAPIV3.RequestBodyObject | undefined)?.content ?? {};
    const multipart = req.is('multipart/form-data');
    if (info.op.requestBody && !req.is('application/x-www-form-urlencoded') && !multipart) {
      // Parameters came only in the query string (or nothing came): present them
      // to the validator as the form body Zulip clients would have sent.
      req.headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (multipart && 'application/x-www-form-urlencoded' in content) {
      // The body is parsed and decoded already. The validator would JSON.parse
      // array/object fields of a multipart body a second time (turning [5]
      // into 5), so it validates the decoded fields as the form body they are.
      req.headers['content-type'] = 'application/x-www-form-urlencoded';
    }
  }
  if (!info.acceptsFiles && scope.uploadedFiles.length > 0) {
    for (const f of scope.uploadedFiles) ignored.add(f.fieldname);
    scope.uploadedFiles = [];
  }
  Object.defineProperty(req, 'query', { value: query, writable: true, configurable: true, enumerable: true });
  if (info.method === 'get') {
    // The validator re-reads the raw query string and refuses RFC 3986
    // reserved characters in it ('+' for a space, as Python and browsers
    // encode forms; '!', '(' … in JSON text). Hand it the same parameters
    // with every reserved character percent-encoded.
    const i = req.originalUrl.indexOf('?');
    const path = i < 0 ? req.originalUrl : req.originalUrl.slice(0, i);
    const qs = Object.entries(query)
      .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${strictEncode(k)}=${strictEncode(String(x))}`))
      .join('&');
    req.originalUrl = qs ? `${path}?${qs}` : path;
  }
  scope.ignoredParameters = [...ignored].sort();
  // What the client actually sent (before the validator fills defaults): some
  // rules depend on presence, e.g. message_ids with anchor.
  scope.sentParams = new Set([...Object.keys(query), ...Object.keys(isPlainObject(req.body) ? req.body : {})]);
}

function decodeField(name: string, value: unknown, decoding: 'raw' | 'json' | 'json-or-raw'): unknown {
  // A repeated form field arrives as an array; like Django's QueryDict, the last one wins.
  if (Array.isArray(value)) value = value[value.length - 1];
  if (typeof value !== 'string' || decoding === 'raw') return value;
  try {
    return JSON.parse(value);
  } catch {
    if (decoding === 'json-or-raw') return value;
    throw new ApiError(`${name} is not valid JSON`);
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/** encodeURIComponent, plus the reserved characters it leaves alone (! ' ( ) *). */
const strictEncode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
