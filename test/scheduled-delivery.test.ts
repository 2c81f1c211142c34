import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createDb } from '../src/db/connection';
import { DeliveryType, insertScheduledMessage } from '../src/queries/scheduled-messages';
import { ContractChecker } from './support/contract';
import { eachDatabase, freshMigratedMysqlDatabase } from './support/databases';
import { ProcessClient, type ServerProcess, startServerProcess } from './support/server-process';
import { testSpec } from './support/server';

/**
 * The delivery scheduler as it runs in production: Parley processes
 * (src/main.ts) over one database. Scheduled messages are durable (a
 * restart or a SIGKILL mid-delivery loses none and sends none twice) and
 * delivered by one process of several (the lease).
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

eachDatabase('scheduled delivery across restarts, crashes and processes', (dialect) => {
  let dataDir: string;
  let databaseUrl = '';
  let dropDatabase = async () => {};
  let contract: ContractChecker;
  const running: ServerProcess[] = [];
  let db: Knex | null = null;

  beforeEach(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-sched-'));
    if (dialect === 'mysql') {
      const mysql = await freshMigratedMysqlDatabase();
      databaseUrl = mysql.url;
      dropDatabase = mysql.drop;
    }
    contract ??= new ContractChecker(await testSpec());
  });
  afterEach(async () => {
    for (const p of running.splice(0)) await p.kill();
    await db?.destroy();
    db = null;
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async (nodeId: string, dir = dataDir) => {
    const p = await startServerProcess({ DATA_DIR: dir, DATABASE_URL: databaseUrl, NODE_ID: nodeId }, 150_000);
    running.push(p);
    return p;
  };
  const forget = (p: ServerProcess) => running.splice(running.indexOf(p), 1);
  // Opened once a server has started on the database; reads only, besides the bulk scheduling below.
  const database = () => (db ??= createDb({ databaseUrl: databaseUrl || null, dataDir }));

  async function organization(p: ServerProcess) {
    const client = new ProcessClient(p.url, contract);
    const owner = { email: p.owner.email, apiKey: p.owner.apiKey };
    const me = await client.call('GET', '/users/me', owner);
    const subs = await client.call('GET', '/users/me/subscriptions', owner);
    const general = (subs.body.subscriptions as Array<{ name: string; stream_id: number }>).find((c) => c.name === 'general')!;
    client.close();
    return {
      owner,
      ownerId: me.body.user_id as number,
      realmId: (await database()('users').where({ id: me.body.user_id }).first('realm_id'))!.realm_id as number,
      general,
    };
  }

  /** Schedules `n` channel messages due at `dueSeconds`, written straight to the table (the API would take minutes for thousands). */
  async function scheduleMany(org: Awaited<ReturnType<typeof organization>>, n: number, dueSeconds: number, tag: string): Promise<void> {
    await database().transaction(async (trx) => {
      for (let i = 0; i < n; i++) {
        await insertScheduledMessage(trx, {
          realm_id: org.realmId,
          sender_id: org.ownerId,
          delivery_type: DeliveryType.SEND_LATER,
          channel_id: org.general.stream_id,
          to_user_ids: [],
          topic: 'scheduled',
          content: `${tag} ${i}`,
          rendered_content: `<p>${tag} ${i}</p>`,
          sending_client: 'test',
          read_by_sender: false,
          scheduled_timestamp: dueSeconds,
          reminder_target_message_id: null,
          reminder_note: null,
        });
      }
    });
  }

  /** Every scheduled message of `tag`: delivered once, its message stored once with its content; none pending or failed. */
  async function expectDeliveredOnce(tag: string, n: number) {
    const rows: Array<{ content: string; delivered: unknown; failed: unknown; delivered_message_id: number | null }> = await database()(
      'scheduled_messages',
    )
      .where('content', 'like', `${tag} %`)
      .select('content', 'delivered', 'failed', 'delivered_message_id');
    expect(rows).toHaveLength(n);
    expect(rows.filter((r) => !r.delivered || r.failed)).toEqual([]);
    const messages: Array<{ id: number; content: string }> = await database()('messages')
      .where('content', 'like', `${tag} %`)
      .select('id', 'content');
    const byContent = new Map<string, number[]>();
    for (const m of messages) byContent.set(m.content, [...(byContent.get(m.content) ?? []), Number(m.id)]);
    const twice = [...byContent].filter(([, ids]) => ids.length !== 1);
    expect(twice).toEqual([]);
    expect(messages).toHaveLength(n);
    for (const r of rows) expect(byContent.get(r.content)).toEqual([Number(r.delivered_message_id)]);
  }

  async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await sleep(50);
    }
  }
  const delivered = async (tag: string) =>
    Number(
      (
        (await database()('scheduled_messages').where('content', 'like', `${tag} %`).where({ delivered: true }).count('* as n')) as Array<{
          n: number;
        }>
      )[0]!.n,
    );

  it('a graceful restart keeps what is scheduled; it is sent at its time by the restarted server, once', async () => {
    const p = await start('a');
    const org = await organization(p);
    const client = new ProcessClient(p.url, contract);
    const due = Math.floor(Date.now() / 1000) + 4;
    for (let i = 0; i < 3; i++) {
      const res = await client.call('POST', '/scheduled_messages', org.owner, {
        type: 'stream',
        to: org.general.stream_id,
        topic: 'later',
        content: `restart ${i}`,
        scheduled_delivery_timestamp: due,
      });
      expect(res.status).toBe(200);
    }
    client.close();
    expect(await p.stop()).toBe(0);
    forget(p);
    expect(await delivered('restart')).toBe(0);
    await start('a');
    await waitUntil('delivered', async () => (await delivered('restart')) === 3);
    await sleep(1500); // a second run finds nothing more to send
    await expectDeliveredOnce('restart', 3);
  }, 120_000);

  it('a SIGKILL in the middle of delivering loses none and sends none twice', async () => {
    const p = await start('k');
    const org = await organization(p);
    // Enough that the kill lands mid-way on either engine (MariaDB delivers a few hundred a second).
    const N = dialect === 'mysql' ? 1500 : 3000;
    await scheduleMany(org, N, Math.floor(Date.now() / 1000) + 2, 'crash');
    await waitUntil('deliveries under way', async () => (await delivered('crash')) > 100);
    await p.kill();
    forget(p);
    const before = await delivered('crash');
    expect(before).toBeLessThan(N); // killed mid-way, or the test proved nothing
    await start('k');
    await waitUntil('all delivered', async () => (await delivered('crash')) === N, 120_000);
    await expectDeliveredOnce('crash', N);
  }, 480_000);

  it('two processes over one database: each message is sent once, by the lease holder', async () => {
    if (dialect === 'sqlite') return; // several nodes share a MariaDB (docs/architecture/cluster.md)
    const a = await start('a');
    const org = await organization(a);
    const b = await start('b', fs.mkdtempSync(path.join(os.tmpdir(), 'parley-sched-b-')));
    // Scheduled through both nodes' API as well as in bulk, far enough ahead for a loaded machine
    // (ten API calls and a thousand rows in one transaction: a few seconds at worst).
    const due = Math.floor(Date.now() / 1000) + 10;
    for (const p of [a, b]) {
      const client = new ProcessClient(p.url, contract);
      for (let i = 0; i < 5; i++) {
        const res = await client.call('POST', '/scheduled_messages', org.owner, {
          type: 'stream',
          to: org.general.stream_id,
          topic: 'both',
          content: `both ${p === a ? 'a' : 'b'}${i}`,
          scheduled_delivery_timestamp: due,
        });
        expect(res.status).toBe(200);
      }
      client.close();
    }
    await scheduleMany(org, 1000, due, 'both bulk');
    await waitUntil('all delivered', async () => (await delivered('both')) === 1010, 120_000);
    await sleep(1500);
    await expectDeliveredOnce('both', 1010);
    const lease = (await database()('leases').where({ name: 'scheduled_delivery' }).first('holder'))!;
    expect(['node:a', 'node:b']).toContain(lease.holder);

    // The holder dies: the other node takes over once the lease lapses.
    const holder = lease.holder === 'node:a' ? a : b;
    await holder.kill();
    forget(holder);
    await scheduleMany(org, 20, Math.floor(Date.now() / 1000) + 1, 'takeover');
    await waitUntil('the other node delivers', async () => (await delivered('takeover')) === 20, 60_000);
    await expectDeliveredOnce('takeover', 20);
    expect((await database()('leases').where({ name: 'scheduled_delivery' }).first('holder'))!.holder).not.toBe(lease.holder);
  }, 240_000);
});
