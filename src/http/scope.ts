import type { Response } from 'express';
import type { Caller } from '../access/viewer';
import type { RateLimitNotes } from '../domain/rate-limits';
import type { ReceivedFile, UploadedFile } from './body';
import type { OperationInfo } from './spec';

/**
 * One API request's own data, as the pipeline's steps (src/http/pipeline.ts)
 * hand it on: Express passes only `req` and `res` from one middleware to the
 * next, so the scope rides in `res.locals` under one key, typed here. The
 * route match creates it; each later step fills its part; the handler then
 * gets what it needs of it as parameters (src/http/handler.ts `Call`).
 */
export interface RequestScope {
  info: OperationInfo;
  pathParams: Record<string, string>;
  /** Who is calling, once authenticated (null for operations without security). */
  caller: Caller | null;
  /** The browser session the caller came with (/json), null for an API key (/api/v1). */
  sessionId: number | null;
  /** The rate limits applied to this request (their headers follow). */
  limits: RateLimitNotes;
  /** A multipart body to an operation that takes files: read after authentication (`receiveUploads`). */
  deferUploads: boolean;
  /** A form or empty body to an operation that takes files: refused after authentication. */
  noFilePart: boolean;
  /**
   * JSON query parameters as the client sent them, decoded but not coerced
   * (src/http/params.ts), for the strict check of src/http/validation.ts.
   * Arbitrary JSON: that check is what validates them.
   */
  jsonQueryAsSent: Readonly<Record<string, unknown>>;
  /** Parameters the operation does not declare, reported in `ignored_parameters_unsupported`. */
  ignoredParameters: readonly string[];
  /** Names of the parameters the client sent (defaults not included). */
  sentParams: ReadonlySet<string>;
  /** File parts read and dropped from a multipart body to an operation that takes none. */
  uploadedFiles: readonly UploadedFile[];
  /** Files `receiveUploads` stored, not yet published. */
  receivedFiles: readonly ReceivedFile[];
}

// What a request that sent nothing holds (most GETs): shared, never written.
const NO_PARAMS: RequestScope['jsonQueryAsSent'] = Object.freeze({});
const NO_NAMES: readonly string[] = Object.freeze([]);
const NO_FILES: readonly never[] = Object.freeze([]);
const NONE_SENT: ReadonlySet<string> = new Set();

/** A new request's scope, once its route is matched. */
export function openScope(res: Response, info: OperationInfo, pathParams: Record<string, string>, limits: RateLimitNotes): RequestScope {
  const scope: RequestScope = {
    info,
    pathParams,
    caller: null,
    sessionId: null,
    limits,
    deferUploads: false,
    noFilePart: false,
    jsonQueryAsSent: NO_PARAMS,
    ignoredParameters: NO_NAMES,
    sentParams: NONE_SENT,
    uploadedFiles: NO_FILES,
    receivedFiles: NO_FILES,
  };
  res.locals.pipeline = scope;
  return scope;
}

/** The request's scope, for a step of the pipeline (the route match has opened it). */
export function scopeOf(res: Response): RequestScope {
  return res.locals.pipeline as RequestScope;
}

/** The scope, for code that also runs outside the API pipeline (the access log, the validator alone in a test). */
export function scopeIfAny(res: Response): RequestScope | undefined {
  return res.locals?.pipeline as RequestScope | undefined;
}
