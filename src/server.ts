import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { buildApp } from './app';
import type { Config } from './config';
import { AppContext, createContext } from './context';
import { createDb } from './db/connection';
import { migrateLatest } from './db/migrate';
import { loadSpec } from './http/spec';

/** Opens the database, migrates it, loads the contract and builds the context. */
export async function startContext(config: Config): Promise<AppContext> {
  const db = createDb(config);
  await migrateLatest(db);
  return createContext(db, config);
}

/** Starts listening; resolves once the port is bound. */
export async function listen(ctx: AppContext, log: Logger): Promise<Server> {
  const spec = await loadSpec();
  const app = buildApp({ ctx, spec, log });
  return new Promise((resolve, reject) => {
    const server = app.listen(ctx.config.port, ctx.config.host, (err?: Error) => (err ? reject(err) : resolve(server)));
    server.keepAliveTimeout = 65_000;
    answerClientErrors(server);
  });
}

/**
 * Requests node's HTTP parser refuses before Express sees them (a request
 * line and headers over 16 KB, malformed framing) get a Zulip error body too,
 * instead of node's bare status line.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // The statuses node itself would send, with a body.
    const [status, reason, msg] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'Request is too large']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'Request timeout']
          : [400, 'Bad Request', 'Malformed request'];
    const body = JSON.stringify({ result: 'error', msg, code: 'BAD_REQUEST' });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
