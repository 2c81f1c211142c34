import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { createHttpServer } from '../../src/http/transport';

/**
 * The app behind Parley's own HTTP server, listening on 127.0.0.1, with a
 * client that sends bytes exactly as given: malformed percent-escapes, raw
 * or compressed bodies and odd headers reach the server unchanged (supertest
 * and fetch normalise them).
 */
export interface RawServer {
  port: number;
  request(req: RawRequest): Promise<RawResponse>;
  /** Writes bytes on a fresh connection and returns what came back. */
  socket(bytes: string | Buffer): Promise<string>;
  close(): Promise<void>;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** HTTP Basic credentials. */
  user?: { email: string; api_key: string } | null;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: any;
  ms: number;
}

export async function startRawServer(app: Express): Promise<RawServer> {
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const agent = new http.Agent({ keepAlive: false });
  return {
    port,
    request: (req) => send(port, agent, req),
    socket: (bytes) => rawSocket(port, bytes),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(port: number, agent: http.Agent, req: RawRequest): Promise<RawResponse> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(req.headers ?? {}) };
    if (req.user) headers.Authorization = 'Basic ' + Buffer.from(`${req.user.email}:${req.user.api_key}`).toString('base64');
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
    if (body && headers['Content-Length'] === undefined) headers['Content-Length'] = String(body.length);
    const r = http.request({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed, ms: Date.now() - started });
      });
      res.on('error', reject);
    });
    // The server may answer and close before reading a refused body.
    r.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    if (body) r.end(body);
    else r.end();
  });
}

function rawSocket(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNRESET' ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(err),
    );
    socket.write(bytes);
  });
}
