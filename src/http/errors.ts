import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import { zulipMessageForValidation } from './validation';

/**
 * The one place errors become responses: typed ApiErrors with their code,
 * status and extra fields; validator errors in Zulip's wording; body-parser
 * errors as 400s; anything else a 500 that reveals nothing (details logged).
 */
export function errorMiddleware(log: Logger) {
  // Express recognises error middleware by its four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const { status, body, headers } = toErrorResponse(err);
    if (status >= 500) log.error({ err, method: req.method, url: req.originalUrl }, 'request failed');
    if (res.headersSent) return;
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.status(status).json(body);
  };
}

export function toErrorResponse(err: unknown): { status: number; body: Record<string, unknown>; headers: Record<string, string> } {
  if (err instanceof ApiError) {
    return {
      status: err.status,
      body: { result: 'error', msg: err.message, code: err.code, ...err.data },
      headers: err.headers,
    };
  }
  const e = err as { status?: number; errors?: Array<{ path: string; message: string; errorCode?: string }>; type?: string; code?: string };
  if (Array.isArray(e?.errors) && typeof e.status === 'number' && e.status < 500) {
    if (e.status === 415) {
      return { status: 400, body: { result: 'error', msg: 'Unsupported content type', code: 'BAD_REQUEST' }, headers: {} };
    }
    const { msg, code, data } = zulipMessageForValidation(e.errors);
    return { status: 400, body: { result: 'error', msg, code, ...data }, headers: {} };
  }
  if (e?.type === 'entity.too.large' || e?.code === 'LIMIT_FILE_SIZE') {
    return { status: 413, body: { result: 'error', msg: 'Request is too large', code: 'BAD_REQUEST' }, headers: {} };
  }
  if (e?.type === 'entity.parse.failed' || e?.type === 'encoding.unsupported' || (typeof e?.code === 'string' && e.code.startsWith('LIMIT_'))) {
    return { status: 400, body: { result: 'error', msg: 'Malformed request body', code: 'BAD_REQUEST' }, headers: {} };
  }
  return { status: 500, body: { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' }, headers: {} };
}
