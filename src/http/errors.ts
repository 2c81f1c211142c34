import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { bounded } from '../domain/bounded';
import { ApiError, DatabaseUnavailableError, isConnectionLost } from '../errors';
import { zulipMessageForValidation } from './validation';

/**
 * The one place errors become responses: typed ApiErrors with their code,
 * status and extra fields; validator errors in Zulip's wording; anything
 * else a 500 that reveals nothing. A 500 is logged once, with the operation
 * and the request id the client also got in `X-Request-Id`, so an operator
 * can find it; neither the SQL nor the stack ever reaches the client.
 */
export function errorMiddleware(log: Logger) {
  // Express recognises error middleware by its four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const { status, body, headers } = toErrorResponse(err);
    if (status >= 500) {
      log.error(
        {
          err: boundedError(err),
          requestId: res.getHeader('X-Request-Id'),
          operationId: res.locals.operationId ?? null,
          method: req.method,
          path: bounded(req.originalUrl.split('?')[0] ?? '', 300),
        },
        'request failed',
      );
    }
    if (res.headersSent) return;
    // For the request's log line (src/app.ts requestFacts).
    res.locals.error = { code: body.code, msg: body.msg };
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(status).json(body);
  };
}

/** The error for the log, with its message cut (a driver error repeats the whole SQL, bound values included). */
function boundedError(err: unknown): unknown {
  if (!(err instanceof Error)) return { message: bounded(String(err), 2000) };
  const e = err as Error & { code?: unknown; errno?: unknown; sqlMessage?: unknown };
  return {
    type: e.name,
    message: bounded(e.message, 2000),
    // The server's own words: knex puts the statement (or a whole packet of them) before them in `message`.
    sqlMessage: typeof e.sqlMessage === 'string' ? bounded(e.sqlMessage, 1000) : undefined,
    code: e.code,
    errno: e.errno,
    stack: bounded(e.stack ?? '', 4000),
  };
}

/** Zulip's error body: the envelope, then the fields the code declares (typed where the error is made, generated/errors.ts). */
export interface ErrorBody {
  result: 'error';
  msg: string;
  code: string;
  [field: string]: unknown;
}

export function toErrorResponse(err: unknown): { status: number; body: ErrorBody; headers: Record<string, string> } {
  // A read outside a transaction that met a lost connection or a Galera node
  // without quorum (1047): the request did not change anything, so the client
  // may simply try again — a 503 with Retry-After says so, where a 500 would not.
  if (!(err instanceof ApiError) && (isConnectionLost(err) || (err as { errno?: number })?.errno === 1047)) {
    err = new DatabaseUnavailableError();
  }
  if (err instanceof ApiError) {
    return {
      status: err.status,
      // Messages may quote client input (a channel name, an email): never at length.
      body: { result: 'error', msg: bounded(err.message, 1000), code: err.code, ...boundedData(err.data) },
      headers: err.headers,
    };
  }
  const e = err as { status?: number; errors?: Array<{ path: string; message: string; errorCode?: string }>; type?: string; code?: string };
  if (Array.isArray(e?.errors) && typeof e.status === 'number' && e.status < 500) {
    if (e.status === 415) {
      return { status: 400, body: { result: 'error', msg: 'Unsupported content type', code: 'BAD_REQUEST' }, headers: {} };
    }
    const { msg, code, data } = zulipMessageForValidation(e.errors);
    // The validator's messages name the client's own keys (an unexpected property, a map
    // key): bounded like any other message, so a 5 MB key is not a 5 MB answer and log line.
    return { status: 400, body: { result: 'error', msg: bounded(msg, 1000), code, ...boundedData(data) }, headers: {} };
  }
  return { status: 500, body: { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' }, headers: {} };
}

function boundedData(data: object): Omit<ErrorBody, 'result' | 'msg' | 'code'> {
  const out: Omit<ErrorBody, 'result' | 'msg' | 'code'> = {};
  for (const [k, v] of Object.entries(data)) out[k] = typeof v === 'string' ? bounded(v, 1000) : v;
  return out;
}
