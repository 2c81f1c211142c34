import net from 'node:net';
import type http from 'node:http';
import type { Express } from 'express';
import { listen, send } from './fuzz/wire';

/**
 * The app behind Parley's own HTTP server, listening on 127.0.0.1, with a
 * client that sends bytes exactly as given: malformed percent-escapes, raw
 * or compressed bodies and odd headers reach the server unchanged (supertest
 * and fetch normalise them). Built on the fuzzer's wire client.
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
  const server = await listen(app);
  return {
    port: server.port,
    request: async (req) => {
      const headers: Record<string, string> = { ...(req.headers ?? {}) };
      if (req.user) headers.Authorization = 'Basic ' + Buffer.from(`${req.user.email}:${req.user.api_key}`).toString('base64');
      const body = req.body === undefined ? null : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
      const res = await send(server.port, { method: req.method, target: req.path, headers, body }, 30_000);
      let parsed: unknown;
      try {
        parsed = JSON.parse(res.text);
      } catch {
        parsed = undefined;
      }
      return { ...res, body: parsed };
    },
    socket: (bytes) => rawSocket(server.port, bytes),
    close: () => server.close(),
  };
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
