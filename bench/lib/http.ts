import http from 'node:http';
import type { Credential } from './dataset';

export interface Reply {
  status: number;
  body: any;
  ms: number;
}

/** A request body: URL-encoded fields, or a multipart body with its boundary. */
export type RequestBody = { form: Record<string, string> } | { multipart: Buffer; boundary: string };

/** A request with URL-encoded fields (when given), answered within 90 s. */
export function request(
  agent: http.Agent,
  port: number,
  method: string,
  pathAndQuery: string,
  auth: string | null,
  form?: Record<string, string>,
  headers?: Record<string, string>,
): Promise<Reply> {
  return requestWith(agent, port, method, pathAndQuery, auth, form && { form }, 90_000, headers);
}

/**
 * A request to 127.0.0.1:`port`, its answer parsed as JSON when it is JSON.
 * Fails when no answer comes within `timeoutMs`, or the connection fails,
 * with an error naming the method and path.
 */
export function requestWith(
  agent: http.Agent,
  port: number,
  method: string,
  pathAndQuery: string,
  auth: string | null,
  body: RequestBody | undefined,
  timeoutMs: number,
  /** Further request headers (a scenario's `Accept-Encoding`); a body they make binary is returned as text, unparsed. */
  headers: Record<string, string> = {},
): Promise<Reply> {
  let payload: Buffer | undefined;
  let type: string | undefined;
  if (body && 'form' in body) {
    const form = new URLSearchParams(body.form).toString();
    if (form) payload = Buffer.from(form);
    type = 'application/x-www-form-urlencoded';
  } else if (body) {
    payload = body.multipart;
    type = `multipart/form-data; boundary=${body.boundary}`;
  }
  const what = `${method} ${pathAndQuery.split('?')[0]}`;
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: pathAndQuery,
        agent,
        headers: {
          ...headers,
          ...(auth ? { authorization: auth } : {}),
          ...(payload ? { 'content-type': type, 'content-length': payload.length } : {}),
        },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: any = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, ms: Number(process.hrtime.bigint() - t0) / 1e6 });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs / 1000} s`)));
    req.on('error', (err: NodeJS.ErrnoException) => reject(new Error(`${what}: ${err.message}${err.code ? ` (${err.code})` : ''}`)));
    req.end(payload);
  });
}

export const basic = (c: Credential) => 'Basic ' + Buffer.from(`${c.email}:${c.api_key}`).toString('base64');
/**
 * A query string with %20 for spaces: Parley (this tree) answers "Invalid narrow" when a
 * JSON-valued query parameter carries `+` for a space, as URLSearchParams and Python's
 * requests encode it — reported, not worked around in the server.
 */
export const qs = (params: Record<string, unknown>) =>
  '?' +
  Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`)
    .join('&');
