import net from 'node:net';
import request from 'supertest';
import { buildApp } from '../src/app';
import { createContext } from '../src/context';
import { createDb, type Dialect } from '../src/db/connection';
import { MIGRATION_NAMES } from '../src/db/migrate';
import { ContractChecker } from './support/contract';
import { eachDatabase, MYSQL_URL } from './support/databases';
import { register } from './support/events';
import { ApiClient, startTestServer, type TestServer } from './support/server';

/** A TCP port on 127.0.0.1 where nothing listens: one the kernel gave out and that is closed again. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A database that does not answer, for real: SQLite whose connection is
 * closed, or a MariaDB URL pointing at a port where no server listens.
 */
async function unreachableDb(dialect: Dialect) {
  if (dialect === 'sqlite') {
    const db = createDb({ databaseUrl: null, dataDir: '' }, ':memory:');
    await db.raw('SELECT 1');
    await db.destroy();
    return db;
  }
  const url = new URL(MYSQL_URL!);
  url.port = String(await closedPort());
  url.pathname = '/parley_nowhere';
  return createDb({ databaseUrl: url.toString(), dataDir: '' });
}

eachDatabase('GET /health', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  it('answers 200 with every check passed and this process’s queue counts, without credentials', async () => {
    await register(t, t.cast.member);
    const res = await t.api.get('/health', null);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      result: 'success',
      msg: '',
      status: 'ok',
      checks: {
        database: { status: 'ok' },
        migrations: { status: 'ok', pending: [] },
        event_queues: { queues: 1, events: 0, waiting_polls: 0 },
        push_relay: { configured: false, backlog: 0 },
        // Neither the event bus nor the rate limits use Redis here (test/health-redis.test.ts: they do).
        redis: { status: 'skipped', used_by: [] },
      },
    });
    // Zulip's place for it, outside the API: the same answer.
    const outside = await request(t.app).get('/health');
    expect(outside.status).toBe(200);
    expect(outside.body).toEqual(res.body);
  });

  it('answers 503 naming the migrations the database lacks', async () => {
    const newest = MIGRATION_NAMES[MIGRATION_NAMES.length - 1]!;
    const row = await t.ctx.db('knex_migrations').where({ name: newest }).first();
    expect(row).toBeDefined();
    await t.ctx.db('knex_migrations').where({ name: newest }).delete();
    try {
      const res = await t.api.get('/health', null);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        result: 'error',
        msg: 'Database migrations are pending',
        code: 'SERVER_NOT_READY',
        status: 'failed',
        checks: { database: { status: 'ok' }, migrations: { status: 'failed', pending: [newest] } },
      });
      expect((await request(t.app).get('/health')).status).toBe(503);
    } finally {
      await t.ctx.db('knex_migrations').insert(row);
    }
    expect((await t.api.get('/health', null)).status).toBe(200);
  });

  it('answers 503 when the database does not answer', async () => {
    const db = await unreachableDb(dialect);
    const ctx = createContext(db, t.ctx.config);
    const app = buildApp({ ctx, spec: t.spec });
    try {
      const api = new ApiClient(app, new ContractChecker(t.spec));
      const res = await api.get('/health', null);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        result: 'error',
        msg: 'Cannot query the database',
        code: 'SERVER_NOT_READY',
        status: 'failed',
        checks: { database: { status: 'failed' }, migrations: { status: 'skipped', pending: [] } },
      });
      expect(typeof res.body.checks.database.error).toBe('string');
      const outside = await request(app).get('/health');
      expect(outside.status).toBe(503);
      expect(outside.body.checks.database.status).toBe('failed');
    } finally {
      ctx.queues.close();
      await db.destroy();
    }
  });
});
