import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ContractChecker } from './support/contract';
import { eachDatabase, freshMigratedMysqlDatabase } from './support/databases';
import { redisAvailable, TestRedis } from './support/redis';
import { ProcessClient, startServerProcess, type ServerProcess } from './support/server-process';
import { testSpec } from './support/server';

const haveRedis = redisAvailable();

/** A demo user of the seeded organization (src/cli/demo.ts). */
const MAX = { email: 'max@example.com', password: 'parley-demo-password' };

/**
 * Two server processes on one database and one redis-server (EVENT_BUS=redis),
 * as `make cluster` runs them: a user's presence and typing, reported to node
 * a, reach a client long-polling on node b. Neither is stored through the
 * message path: typing changes nothing in the database, presence only its
 * own row, so node b can learn of them through the bus alone.
 */
eachDatabase('presence and typing across nodes (EVENT_BUS=redis)', (dialect) => {
  if (!haveRedis) {
    it.skip('needs redis-server', () => undefined);
    return;
  }
  let redis: TestRedis;
  let dataDir: string;
  let dropDatabase = async () => {};
  let a: ServerProcess;
  let b: ServerProcess;
  let onA: ProcessClient;
  let onB: ProcessClient;
  let max: { email: string; apiKey: string; id: number };
  let ownerId: number;

  beforeAll(async () => {
    redis = await TestRedis.start();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-cluster-events-'));
    let databaseUrl = '';
    if (dialect === 'mysql') {
      const mysql = await freshMigratedMysqlDatabase();
      databaseUrl = mysql.url;
      dropDatabase = mysql.drop;
    }
    // LOG_LEVEL info: the stop's own log lines are read at the end.
    const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, EVENT_BUS: 'redis', REDIS_URL: redis.url, LOG_LEVEL: 'info' };
    // One after the other: the first seeds the demo organization.
    a = await startServerProcess({ ...env, NODE_ID: 'a' }, 120_000);
    b = await startServerProcess({ ...env, NODE_ID: 'b' }, 60_000);
    const contract = new ContractChecker(await testSpec());
    onA = new ProcessClient(a.url, contract);
    onB = new ProcessClient(b.url, contract);
    const key = await onA.call('POST', '/fetch_api_key', null, { username: MAX.email, password: MAX.password });
    expect(key.status).toBe(200);
    max = { email: MAX.email, apiKey: key.body.api_key as string, id: key.body.user_id as number };
    ownerId = (await onB.call('GET', '/users/me', b.owner)).body.user_id as number;
  }, 200_000);
  afterAll(async () => {
    onA?.close();
    onB?.close();
    for (const p of [a, b]) await p?.kill();
    await redis?.destroy();
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** The owner's queue on node b, for `types`. */
  async function registerOnB(types: string[]): Promise<{ queueId: string; lastEventId: number }> {
    const reg = await onB.call('POST', '/register', b.owner, { event_types: types });
    expect(reg.status).toBe(200);
    expect(reg.body.queue_id).toMatch(/^b:/);
    return { queueId: reg.body.queue_id as string, lastEventId: reg.body.last_event_id as number };
  }

  /** Long-polls the owner's queue on node b until it holds an event other than a heartbeat. */
  async function nextEventsOnB(queue: { queueId: string; lastEventId: number }): Promise<Array<Record<string, any>>> {
    for (;;) {
      const poll = await onB.call('GET', '/events', b.owner, { queue_id: queue.queueId, last_event_id: queue.lastEventId });
      expect(poll.status).toBe(200);
      const events = (poll.body.events as Array<Record<string, any>>).filter((e) => e.type !== 'heartbeat');
      if (events.length) return events;
    }
  }

  it('a typing notification sent to node a reaches the long-poll waiting on node b', async () => {
    const queue = await registerOnB(['typing']);
    const poll = nextEventsOnB(queue);
    const typing = await onA.call('POST', '/typing', max, { op: 'start', to: [ownerId] });
    expect(typing.status).toBe(200);
    expect(await poll).toEqual([
      expect.objectContaining({
        type: 'typing',
        op: 'start',
        message_type: 'direct',
        sender: { user_id: max.id, email: max.email },
        recipients: expect.arrayContaining([{ user_id: max.id, email: max.email }]),
      }),
    ]);
  });

  it('a presence report to node a reaches the long-poll waiting on node b', async () => {
    const queue = await registerOnB(['presence']);
    const poll = nextEventsOnB(queue);
    // Max's first report: he comes online, which is what sends an event.
    const report = await onA.call('POST', '/users/me/presence', max, { status: 'active', ping_only: true });
    expect(report.status).toBe(200);
    expect(await poll).toEqual([
      expect.objectContaining({
        type: 'presence',
        user_id: max.id,
        email: max.email,
        presence: { website: expect.objectContaining({ status: 'active' }) },
      }),
    ]);
  });

  it('with Redis gone, a SIGTERM still stops both nodes promptly, with events not yet sent', async () => {
    await redis.stop();
    // Published while Redis is away: the append waits in node a's queue for a Redis that is not coming back.
    const typing = await onA.call('POST', '/typing', max, { op: 'stop', to: [ownerId] });
    expect(typing.status).toBe(200);
    onA.close();
    onB.close();
    // Exit code 0: the stop finished (a stop stuck on Redis would be killed after 10 s: no code).
    expect(await Promise.all([a.stop(), b.stop()])).toEqual([0, 0]);
    for (const p of [a, b]) expect(p.output()).toMatch(/"msg":"stopped"/);
  });
});
