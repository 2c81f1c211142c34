import http from 'node:http';
import type { Credential } from './dataset';

export interface Reply {
  status: number;
  body: any;
  ms: number;
}

export function request(
  agent: http.Agent,
  port: number,
  method: string,
  pathAndQuery: string,
  auth: string | null,
  form?: Record<string, string>,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = form ? new URLSearchParams(form).toString() : undefined;
    const t0 = process.hrtime.bigint();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: pathAndQuery,
        agent,
        headers: {
          ...(auth ? { authorization: auth } : {}),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } : {}),
        },
        timeout: 90_000,
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
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${pathAndQuery}: timed out`)));
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
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
