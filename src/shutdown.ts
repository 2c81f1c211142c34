import type { Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { AppContext } from './context';

/**
 * The requests a server is answering, so that a stop can wait for them.
 * Installed on the server as soon as it exists.
 */
export class RequestTracker {
  private readonly open = new Set<ServerResponse>();
  private closing = false;
  private idle: (() => void) | null = null;

  constructor(server: Server) {
    server.on('request', (_req, res: ServerResponse) => {
      this.open.add(res);
      // While stopping, a request that still arrives on a kept-alive connection is
      // answered, and its connection closed after it.
      if (this.closing) res.setHeader('Connection', 'close');
      res.once('close', () => {
        this.open.delete(res);
        if (this.open.size === 0) this.idle?.();
      });
    });
  }

  get inFlight(): number {
    return this.open.size;
  }

  /**
   * Every open connection closes once its response is sent; resolves when no
   * request is left, or after `timeoutMs` (false then).
   */
  drain(timeoutMs: number): Promise<boolean> {
    this.closing = true;
    for (const res of this.open) if (!res.headersSent) res.setHeader('Connection', 'close');
    if (this.open.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idle = null;
        resolve(false);
      }, timeoutMs);
      this.idle = () => {
        clearTimeout(timer);
        this.idle = null;
        resolve(true);
      };
    });
  }
}

export interface Running {
  ctx: AppContext;
  log: Logger;
  server: Server;
  tracker: RequestTracker;
  metricsServer: Server | null;
  /**
   * Stops the timers that are not the context's own (the unclaimed-upload
   * sweep, the retention archiver); resolves once work they started and
   * must finish before the database closes (a retention batch) is done.
   */
  stopTimers: () => void | Promise<void>;
  timeoutMs: number;
  /** The incoming email gateway (EMAIL_GATEWAY_PORT), when listening: it stops taking mail with the API. */
  emailGateway?: { close(): Promise<void> } | null;
}

/**
 * SIGTERM / SIGINT: stop accepting connections, answer the waiting long-polls
 * at once (a heartbeat: src/events/manager.ts drain), let the requests in
 * flight finish (at most `timeoutMs`, then their connections are cut), stop
 * the background work, close the Redis connections and the database. Resolves when all is done; the
 * caller exits.
 */
export async function shutDown(r: Running): Promise<void> {
  r.log.info({ inFlight: r.tracker.inFlight, timeoutMs: r.timeoutMs }, 'shutting down');
  const closed = new Promise<void>((resolve) => r.server.close(() => resolve()));
  r.server.closeIdleConnections();
  r.metricsServer?.close();
  r.metricsServer?.closeAllConnections();
  // Mail being received is finished within the same bound as requests (the listener's closeTimeout).
  const gatewayClosed = r.emailGateway?.close();
  r.ctx.queues.drain();
  const finished = await r.tracker.drain(r.timeoutMs);
  if (!finished)
    r.log.warn({ inFlight: r.tracker.inFlight }, `requests still in flight after ${r.timeoutMs} ms: their connections are cut`);
  r.server.closeAllConnections();
  await closed;
  await gatewayClosed;
  await r.stopTimers();
  r.ctx.push?.stop(); // notifications not yet delivered are dropped with the process
  r.ctx.outgoingWebhooks.stop(); // so are webhooks not yet called, as the push relay's jobs
  r.ctx.missedMessages.stop(); // and missed-message decisions not yet stored (their messages stay unread)
  r.ctx.queues.close();
  // The Redis connections (event bus, rate limits): the bus first sends the events it still
  // holds. Each close is bounded in time, so a Redis that is away or hung does not hold the stop.
  await Promise.all([r.ctx.bus.close?.(), r.ctx.rateLimits.close()]);
  await r.ctx.db.destroy();
  r.log.info('stopped');
}
