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
  const server = http.createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      IncomingMessage: withPrototype(http.IncomingMessage, app.request),
      ServerResponse: withPrototype(http.ServerResponse, app.response),
    },
    app,
  );
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

/**
 * A constructor that builds `base`'s objects with `proto` as their prototype.
 *
 * Express gives every request and response its own prototype
 * (`Object.setPrototypeOf(req, app.request)`) as it enters the app. On V8
 * that change of prototype makes objects allocated while serving a request
 * survive the young generation's collections: on an Express hello-world 36 %
 * of what was allocated survived each scavenge, which paused the process
 * 3.7 ms, against 0 % and 0.3 ms for bare node:http. Built with the app's
 * prototypes from the start, the objects make Express's call a no-op (V8
 * returns early when the prototype is already the one asked for). In
 * Parley's send path the gain is smaller, since knex's transactions were most
 * of what survived (src/db/mysql/transactor.ts): 44 → 39 KB a send left for
 * the old generation (bench/alloc.ts, ADR 0021).
 */
function withPrototype<T>(base: T, proto: object): T {
  const construct = base as unknown as new (...args: unknown[]) => object;
  function WithPrototype(...args: unknown[]): object {
    // Reflect.construct takes the prototype from its third argument, whether base is a class or a plain function.
    return Reflect.construct(construct, args, WithPrototype) as object;
  }
  WithPrototype.prototype = proto;
  return WithPrototype as unknown as T;
}
