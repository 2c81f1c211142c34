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
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES, ...messageClassesOf(app) }, app);
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

interface MessageClasses {
  IncomingMessage: typeof http.IncomingMessage;
  ServerResponse: typeof http.ServerResponse;
}

// Per app, not per request: the classes are made once for an app and live as long as it
// (a test builds several apps in one process, so not a single module constant).
const classesByApp = new WeakMap<Express, MessageClasses>();

/**
 * Request and response classes whose instances are born with the app's
 * prototypes, so that Express's `Object.setPrototypeOf(req, app.request)`
 * (and the same for `res`) as a request enters the app finds nothing to do:
 * V8 returns early when the prototype is already the one asked for.
 *
 * Why it matters: on V8, a request whose prototype was changed keeps what it
 * allocated alive through young-generation collections. On an Express
 * hello-world, 22 % of what was allocated survived each scavenge (0 % on
 * bare node:http), and every survivor is copied, then promoted and left for
 * a full collection. Parley's GET /users/me promoted 1.65 MB per scavenge
 * (paused 3.3 ms) with Express's change of prototype and 13 KB (1.0 ms)
 * without it, for a quarter less CPU per request (ADR 0022).
 *
 * They are subclasses, one level under the app's own prototypes: Node builds
 * them with `new`, on V8's fast path. (A plain function handing a foreign
 * `new.target` to Reflect.construct made every request dearer; ADR 0021.)
 * Requests built elsewhere (a test's own server around the app) still get
 * Express's change of prototype, to the same methods.
 */
function messageClassesOf(app: Express): MessageClasses {
  const classes = classesByApp.get(app);
  if (classes) return classes;
  class AppRequest extends http.IncomingMessage {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  class AppResponse<Request extends http.IncomingMessage = http.IncomingMessage> extends http.ServerResponse<Request> {}
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  // Express reads these for every request (app.handle).
  app.request = AppRequest.prototype as unknown as Express['request'];
  app.response = AppResponse.prototype as unknown as Express['response'];
  const made = { IncomingMessage: AppRequest, ServerResponse: AppResponse };
  classesByApp.set(app, made);
  return made;
}
