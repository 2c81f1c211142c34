import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Rng } from '../bench/lib/random';
import { DEMO_PASSWORD } from '../src/cli/demo';
import { createDb } from '../src/db/connection';
import { ContractChecker } from './support/contract';
import { eachDatabase, freshMigratedMysqlDatabase } from './support/databases';
import { NoResponseError, ProcessClient, ServerProcess, startServerProcess } from './support/server-process';
import { testSpec } from './support/server';

/**
 * The crash test: concurrent senders against a real Parley process, which is
 * killed with SIGKILL mid-load and restarted on the same data, twice. Every
 * acknowledged message (HTTP 200 with an id) must then exist exactly once,
 * with its content and a user_messages row for each of its receivers; a send
 * the kill cut off may or may not have landed, but never twice and never in
 * part. CRASH_SEED=<n> repeats a run's choices (the timing of the kill
 * against the server's work is the machine's).
 */
const SEED = Number(process.env.CRASH_SEED ?? crypto.randomInt(1, 2 ** 31));
const SENDERS = 8;
const CYCLES = 2;
/** Per sender and cycle: a bound on the load should the kill be late; the kill comes long before. */
const MAX_SENDS = 1000;
const KILL_AFTER_MS: [number, number] = [500, 2000];
/** The demo organization's users who send (main.ts seeds them on a fresh database). */
const EMAILS = ['olivia@example.com', 'adam@example.com', 'mona@example.com', 'max@example.com', 'mia@example.com'];
const TOKEN = /^crash (c\d+s\d+n\d+) /;

interface Person {
  id: number;
  email: string;
  apiKey: string;
}

type Target = { kind: 'channel'; topic: string } | { kind: 'direct'; to: Person[] };

interface Send {
  token: string;
  sender: Person;
  target: Target;
  content: string;
  /** acked: HTTP 200 with an id; cut: the kill came before a complete response. */
  outcome: 'pending' | 'acked' | 'cut';
  id?: number;
  /** Acknowledged, its answer read only after the kill was ordered. */
  ackedAfterKill?: boolean;
}

/** Who receives a message: the channel's subscribers, or the DM's participants (the sender included). */
const receiversOf = (s: Send, channelSubscribers: number[]): number[] =>
  s.target.kind === 'channel'
    ? [...channelSubscribers].sort((a, b) => a - b)
    : [...new Set([s.sender.id, ...s.target.to.map((p) => p.id)])].sort((a, b) => a - b);

const conversationKey = (s: Send) => (s.target.kind === 'channel' ? 'channel' : receiversOf(s, []).join(','));

eachDatabase('crash: SIGKILL mid-load, restart on the same data', (dialect) => {
  let dataDir: string;
  let databaseUrl = '';
  let dropDatabase = async () => {};
  let server: ServerProcess | null = null;
  let contract: ContractChecker;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-crash-'));
    if (dialect === 'mysql') {
      const mysql = await freshMigratedMysqlDatabase();
      databaseUrl = mysql.url;
      dropDatabase = mysql.drop;
    }
    contract = new ContractChecker(await testSpec());
  });

  afterAll(async () => {
    await server?.kill();
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged message exactly once and whole (seed ${SEED})`, async () => {
    const rng = new Rng(SEED);
    const start = () => startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
    const stats: string[] = [];
    const fail = (what: string, problems: string[]) => {
      throw new Error(
        `[${dialect}, CRASH_SEED=${SEED}] ${what}:\n  ${problems.slice(0, 30).join('\n  ')}${problems.length > 30 ? `\n  … ${problems.length - 30} more` : ''}` +
          `\n${stats.join('\n')}\n--- server output ---\n${server?.output().slice(-3000) ?? ''}`,
      );
    };

    server = await start();
    let client = new ProcessClient(server.url, contract);
    const zuliprc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
    expect(zuliprc).toContain(`email=${server.owner.email}\nkey=${server.owner.apiKey}\n`);

    // The cast: API keys through the password login Zulip's apps use.
    const people: Person[] = [];
    for (const email of EMAILS) {
      const res = await client.call('POST', '/fetch_api_key', null, { username: email, password: DEMO_PASSWORD });
      expect(res.status).toBe(200);
      people.push({ id: res.body.user_id, email, apiKey: res.body.api_key });
    }
    expect(people[0]!.apiKey).toBe(server.owner.apiKey);
    const subs = await client.call('GET', '/users/me/subscriptions', people[0]!, { include_subscribers: true });
    const general = (subs.body.subscriptions as Array<{ name: string; stream_id: number; subscribers: number[] }>).find(
      (c) => c.name === 'general',
    )!;
    expect(general.subscribers.length).toBeGreaterThan(1);

    // Each sender writes to #general and to one DM conversation of its own (1:1 or a group).
    const senders = Array.from({ length: SENDERS }, (_, i) => ({
      person: people[i % people.length]!,
      dm: i < people.length ? [people[(i + 1) % people.length]!] : [people[(i + 1) % people.length]!, people[(i + 2) % people.length]!],
    }));
    const ledger = new Map<string, Send>();

    const send = async (client: ProcessClient, token: string, sender: (typeof senders)[number], r: Rng, killed: () => boolean) => {
      const target: Target = r.chance(0.5) ? { kind: 'channel', topic: `crash ${r.int(1, 3)}` } : { kind: 'direct', to: sender.dm };
      const s: Send = { token, sender: sender.person, target, content: `crash ${token} grüße 🎉 **${r.int(0, 1e6)}**`, outcome: 'pending' };
      ledger.set(token, s);
      const fields =
        target.kind === 'channel'
          ? { type: 'channel', to: general.stream_id, topic: target.topic, content: s.content }
          : { type: 'direct', to: target.to.map((p) => p.id), content: s.content };
      try {
        const res = await client.call('POST', '/messages', sender.person, fields);
        if (res.status !== 200) fail(`send ${token} answered ${res.status}`, [JSON.stringify(res.body)]);
        s.outcome = 'acked';
        s.id = res.body.id;
        if (killed()) s.ackedAfterKill = true;
      } catch (err) {
        if (!(err instanceof NoResponseError) || !killed()) throw err;
        s.outcome = 'cut';
      }
    };

    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const killAfter = rng.int(...KILL_AFTER_MS);
      const seeds = senders.map(() => rng.int(0, 2 ** 31));
      let killed = false;
      const t0 = Date.now();
      const load = Promise.all(
        senders.map(async (sender, i) => {
          const r = new Rng(seeds[i]!);
          for (let n = 0; n < MAX_SENDS && !killed; n++) await send(client, `c${cycle}s${i}n${n}`, sender, r, () => killed);
        }),
      );
      await Promise.race([load, new Promise((r) => setTimeout(r, killAfter))]);
      killed = true;
      await server.kill();
      await load;
      client.close();
      const sends = [...ledger.values()].filter((s) => s.token.startsWith(`c${cycle}s`));
      const acked = sends.filter((s) => s.outcome === 'acked').length;
      const cut = sends.filter((s) => s.outcome === 'cut').length;

      const t1 = Date.now();
      server = await start();
      client = new ProcessClient(server.url, contract);
      const t2 = Date.now();
      const { problems, cutLanded } = await verify(client, ledger, general);
      stats.push(
        `cycle ${cycle}: killed after ${killAfter} ms; ${acked} acknowledged, ${cut} cut by the kill (${cutLanded} of those landed); restart ${t2 - t1} ms; verify ${Date.now() - t2} ms`,
      );
      if (problems.length) fail(`after kill ${cycle}`, problems);
      // The kill must have landed mid-load, or the cycle proved nothing: sends acknowledged before
      // it, and sends outstanding when it was ordered: cut, or answered and read only after it
      // (on a loaded machine the answers can sit unread in the sockets when the kill lands).
      const late = sends.filter((s) => s.ackedAfterKill).length;
      if (acked === 0 || cut + late === 0)
        fail(`cycle ${cycle} did not kill a loaded server`, [
          `${acked} acknowledged (${late} of them read after the kill was ordered), ${cut} cut (${Date.now() - t0} ms)`,
        ]);
    }

    // The restarted server answers as usual: every sender sends once more, read back by verify.
    await Promise.all(senders.map((sender, i) => send(client, `c${CYCLES + 1}s${i}n0`, sender, new Rng(SEED + i), () => false)));
    const { problems } = await verify(client, ledger, general);
    if (problems.length) fail('after the last restart', problems);
    client.close();
    expect(await server.stop()).toBe(0);
    server = null;
    if (process.env.CRASH_VERBOSE) console.log(`crash [${dialect}] seed ${SEED}\n${stats.join('\n')}`);
  }, 120_000);

  /**
   * Compares the ledger with the database (read directly) and with what the
   * server answers: every token at most once, each acknowledged message with
   * its id, sender, content and conversation, every landed message with
   * exactly its receivers' user_messages rows.
   */
  async function verify(
    client: ProcessClient,
    ledger: Map<string, Send>,
    general: { stream_id: number; subscribers: number[] },
  ): Promise<{ problems: string[]; cutLanded: number }> {
    const problems: string[] = [];
    // Opened after the restart and closed before the next kill, so that the
    // restarted server alone recovers the database (SQLite: the WAL).
    const db = createDb({ databaseUrl: databaseUrl || null, dataDir });
    try {
      const rows: Array<{ id: number; content: string; sender_id: number; recipient_id: number }> = await db('messages')
        .where('content', 'like', 'crash c%')
        .select('id', 'content', 'sender_id', 'recipient_id');
      const receiverRows: Array<{ message_id: number; user_id: number }> = await db('user_messages as um')
        .join('messages as m', 'm.id', 'um.message_id')
        .where('m.content', 'like', 'crash c%')
        .select('um.message_id', 'um.user_id');
      const generalRecipient = (await db('channels').where({ id: general.stream_id }).first('recipient_id'))!.recipient_id as number;

      const receivers = new Map<number, number[]>();
      for (const r of receiverRows) receivers.set(r.message_id, [...(receivers.get(r.message_id) ?? []), r.user_id]);
      const byToken = new Map<string, typeof rows>();
      for (const row of rows) {
        const token = TOKEN.exec(row.content)?.[1];
        if (!token || !ledger.has(token)) problems.push(`message ${row.id} was never sent: ${JSON.stringify(row.content)}`);
        else byToken.set(token, [...(byToken.get(token) ?? []), row]);
      }
      const recipientOf = new Map<string, number>([['channel', generalRecipient]]);
      let cutLanded = 0;
      for (const s of ledger.values()) {
        const found = byToken.get(s.token) ?? [];
        if (found.length > 1) problems.push(`${s.token} stored ${found.length} times: ids ${found.map((r) => r.id).join(', ')}`);
        const row = found[0];
        if (!row) {
          if (s.outcome === 'acked') problems.push(`${s.token} was acknowledged as message ${s.id} but is missing`);
          continue;
        }
        if (s.outcome === 'cut') cutLanded++;
        if (s.outcome === 'acked' && row.id !== s.id)
          problems.push(`${s.token} was acknowledged as message ${s.id} but is stored as ${row.id}`);
        if (row.content !== s.content)
          problems.push(`${s.token}: content ${JSON.stringify(row.content)}, sent ${JSON.stringify(s.content)}`);
        if (row.sender_id !== s.sender.id) problems.push(`${s.token}: sender ${row.sender_id}, sent by ${s.sender.id}`);
        const key = conversationKey(s);
        if (!recipientOf.has(key)) recipientOf.set(key, row.recipient_id);
        if (row.recipient_id !== recipientOf.get(key))
          problems.push(`${s.token}: recipient ${row.recipient_id}, its conversation is ${recipientOf.get(key)}`);
        const want = receiversOf(s, general.subscribers).join(',');
        const got = (receivers.get(row.id) ?? []).sort((a, b) => a - b).join(',');
        if (got !== want) problems.push(`${s.token} (message ${row.id}): user_messages for [${got}], receivers are [${want}]`);
      }
      if (new Set(recipientOf.values()).size !== recipientOf.size)
        problems.push(`two conversations share a recipient: ${JSON.stringify([...recipientOf])}`);

      // What the server answers: each sender reads back its acknowledged messages by id.
      const acked = [...ledger.values()].filter((s) => s.outcome === 'acked');
      for (const email of new Set(acked.map((s) => s.sender.email))) {
        const mine = acked.filter((s) => s.sender.email === email);
        for (let i = 0; i < mine.length; i += 200) {
          const slice = mine.slice(i, i + 200);
          const res = await client.call('GET', '/messages', slice[0]!.sender, {
            message_ids: slice.map((s) => s.id),
            apply_markdown: false,
          });
          if (res.status !== 200) {
            problems.push(`GET /messages as ${email} answered ${res.status}: ${JSON.stringify(res.body)}`);
            continue;
          }
          const got = new Map((res.body.messages as Array<Record<string, any>>).map((m) => [m.id as number, m]));
          for (const s of slice) {
            const m = got.get(s.id!);
            const where =
              s.target.kind === 'channel'
                ? m?.stream_id === general.stream_id && m?.subject === s.target.topic
                : (m?.display_recipient as Array<{ id: number }> | undefined)
                    ?.map((u) => u.id)
                    .sort((a, b) => a - b)
                    .join(',') === receiversOf(s, []).join(',');
            if (!m) problems.push(`GET /messages as ${email}: message ${s.id} (${s.token}) missing`);
            else if (m.content !== s.content || m.sender_id !== s.sender.id || !where)
              problems.push(`GET /messages as ${email}: message ${s.id} (${s.token}) is ${JSON.stringify(m)}`);
          }
        }
      }
      return { problems, cutLanded };
    } finally {
      await db.destroy();
    }
  }
});
