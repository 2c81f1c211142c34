import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { createHttpServer } from '../../../src/http/transport';

/** A request exactly as it goes on the wire (the target is sent as is: no normalisation of escapes). */
export interface WireRequest {
  method: string;
  /** Path and query string, e.g. `/api/v1/users/%FF?x=1`. */
  target: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

export interface WireResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  ms: number;
}

/** The app listening on 127.0.0.1 (an ephemeral port), in the HTTP server src/server.ts serves it with. */
export async function listen(app: Express): Promise<{ port: number; close(): Promise<void> }> {
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Sends one request over a fresh connection (node:http, no agent: nothing is
 * reused between requests) and reads the whole answer. Rejects when the server
 * closes the connection without answering, or does not finish within `timeoutMs`.
 */
export function send(port: number, req: WireRequest, timeoutMs: number): Promise<WireResponse> {
  const started = performance.now();
  return new Promise<WireResponse>((resolve, reject) => {
    const headers: Record<string, string> = { Host: '127.0.0.1', Connection: 'close', ...req.headers };
    if (req.body && !('Content-Length' in headers) && !('Transfer-Encoding' in headers))
      headers['Content-Length'] = String(req.body.length);
    const r = http.request({ host: '127.0.0.1', port, method: req.method, path: req.target, headers, agent: false, setHost: false });
    const timer = setTimeout(() => r.destroy(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    r.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    // The server may answer (and close) before reading a body it refuses: a write error then is not ours to report.
    r.on('socket', (s) => s.on('error', () => undefined));
    if (req.body) r.end(req.body);
    else r.end();
  });
}
