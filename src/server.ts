import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { buildApp } from './app';
import type { Config } from './config';
import { AppContext, createContext } from './context';
import { createDb } from './db/connection';
import { migrateLatest } from './db/migrate';
import { loadSpec } from './http/spec';
import { createHttpServer } from './http/transport';
import type { Metrics } from './metrics';
import { redisBusFor } from './events/redis-bus-config';

/** Opens the database, migrates it, loads the contract and builds the context. */
export async function startContext(config: Config, log?: Logger): Promise<AppContext> {
  const db = createDb(config);
  await migrateLatest(db);
  if (config.eventBus !== 'redis') return createContext(db, config);
  const bus = redisBusFor(config, log);
  const ctx = createContext(db, config, bus);
  bus.onReset(() => ctx.queues.dropAll());
  await bus.start();
  return ctx;
}

/** Starts listening; resolves once the port is bound. */
export async function listen(ctx: AppContext, log: Logger, metrics: Metrics | null = null): Promise<Server> {
  const spec = await loadSpec();
  ctx.push?.setLogger(log);
  ctx.rateLimits.setLogger(log);
  const app = buildApp({ ctx, spec, log, metrics });
  const server = createHttpServer(app);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(ctx.config.port, ctx.config.host, () => resolve(server));
  });
}
