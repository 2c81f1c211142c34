import http, { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

/**
 * Request lines and headers may hold this much: a GET /messages with 5,000
 * message_ids in its query string needs about 40 KB (Node's default is 16 KB).
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/**
 * The HTTP server around the app. Requests Node's parser refuses before
 * Express sees them (a request line that is not HTTP, headers over the
 * limit) are answered with a Zulip error body too, not Node's empty one.
 */
export function createHttpServer(app: Express): http.Server {
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const msg = status === 431 ? 'Request headers are too large' : status === 408 ? 'Request timed out' : 'Malformed HTTP request';
    const body = JSON.stringify({ result: 'error', msg, code: 'BAD_REQUEST' });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
