/**
 * One line for a log entry, for people reading a terminal (JSON lines go to
 * anything else). A request's line says what an operator looks for first:
 * method, path, status, duration, operation, caller, request id, and for a
 * refused request Zulip's `code` and `msg`, so a 400 can be read from the
 * log alone. Any other entry: its message, then its fields as key=value;
 * an error's stack goes below it, the only thing that does.
 */
export function prettyLine(entry: Record<string, unknown>): string {
  const req = entry.req as { method?: string; url?: string } | undefined;
  if (req && typeof entry.status === 'number') return requestLine(entry, req);
  const skip = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err']);
  const fields = Object.entries(entry)
    .filter(([k, v]) => !skip.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const err = entry.err as { message?: string; stack?: string } | undefined;
  const head = [String(entry.msg ?? ''), ...fields, ...(err?.message ? [`error=${JSON.stringify(err.message)}`] : [])].join(' ');
  return err?.stack ? `${head}\n${err.stack}` : head;
}

function requestLine(entry: Record<string, unknown>, req: { method?: string; url?: string }): string {
  const parts = [req.method ?? '?', req.url ?? '?', String(entry.status), `${String(entry.durationMs)}ms`];
  if (typeof entry.operationId === 'string') parts.push(entry.operationId);
  if (typeof entry.userId === 'number') parts.push(`user=${entry.userId}`);
  const error = entry.error as { code?: string; msg?: string } | undefined;
  if (error?.code) parts.push(error.code, JSON.stringify(error.msg ?? ''));
  if (typeof entry.reqId === 'string') parts.push(`req=${entry.reqId}`);
  return parts.join(' ');
}
