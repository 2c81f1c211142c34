import type { Server } from 'node:http';
import path from 'node:path';
import type { Logger } from 'pino';
import { buildApp } from './app';
import type { Config } from './config';
import { AppContext, createContext } from './context';
import { createDb } from './db/connection';
import { migrateLatest } from './db/migrate';
import { loadServedSpec } from './http/spec';
import { createHttpServer } from './http/transport';
import type { Metrics } from './metrics';
import { redisBusFor } from './events/redis-bus-config';
import { describeDatabase, listenFailure, reasonOf, StartupError } from './startup-errors';

/**
 * Opens the database, migrates it, loads the contract and builds the context.
 * A database that cannot be opened or migrated is a StartupError naming it.
 */
export async function startContext(config: Config, log?: Logger): Promise<AppContext> {
  const db = createDb(config, undefined, log);
  try {
    await migrateLatest(db);
  } catch (err) {
    await db.destroy().catch(() => undefined);
    const where = describeDatabase(config.databaseUrl, path.join(config.dataDir, 'parley.sqlite3'));
    throw new StartupError(`Parley failed to start: cannot use the database ${where}: ${reasonOf(err)}`);
  }
  if (config.eventBus !== 'redis') return createContext(db, config);
  const bus = redisBusFor(config, log);
  const ctx = createContext(db, config, bus);
  bus.onReset(() => ctx.queues.dropAll());
  await bus.start();
  return ctx;
}

/** Starts listening; resolves once the port is bound. */
export async function listen(ctx: AppContext, log: Logger, metrics: Metrics | null = null): Promise<Server> {
  const spec = await loadServedSpec();
  ctx.push?.setLogger(log);
  ctx.outgoingWebhooks.setLogger(log);
  ctx.missedMessages.setLogger(log);
  ctx.rateLimits.setLogger(log);
  const app = buildApp({ ctx, spec, log, metrics });
  const server = createHttpServer(app);
  return new Promise((resolve, reject) => {
    server.once('error', (err) => reject(listenFailure(err, 'PORT', ctx.config.host, ctx.config.port)));
    server.listen(ctx.config.port, ctx.config.host, () => resolve(server));
  });
}
