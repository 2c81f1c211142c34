import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from '@rocicorp/zero-sqlite3';
import type { Knex } from 'knex';
import * as tar from 'tar';
import { readManifest } from '../src/db/backup/archive';
import type { Manifest } from '../src/db/backup/manifest';
import type { Dialect } from '../src/db/connection';
import { MIGRATION_NAMES, migrateLatest, migrateUpTo } from '../src/db/migrate';
import { rawRows } from '../src/queries/rows';
import type { UserRow } from '../src/queries/rows';
import { CliResult, lastLine, runCli } from './support/cli';
import { eachDatabase } from './support/databases';
import { snapshotDigest } from './support/db-snapshot';
import { Instance, newInstance } from './support/instances';
import { createChannel, createMembers, encodeFields, startTestServer, TestServer } from './support/server';
import { addReceivers } from '../src/queries/message-receivers';

/**
 * `backup` and `restore` as an operator runs them (the CLI in its own process),
 * against a server that keeps writing over real HTTP. The restored database
 * must be one moment of the source: every message with all its recipients'
 * rows and its search-index entry, each writer's work a prefix of what it did,
 * every row identical to the source's; and, once writes stop, every table equal.
 */

/** Messages written straight into the database first, so copying it takes more than an instant. */
const HISTORY_MESSAGES = 10_000;
const FILLER = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor '.repeat(12);
const NO_STACK = /\n\s+at /;

eachDatabase('backup and restore', (dialect) => {
  let source: Instance;
  let t: TestServer;
  let server: Server;
  let base = '';
  let liveMembers: UserRow[] = [];
  let historyRecipients = 0;
  const instances: Instance[] = [];
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-backup-test-'));
  const archive = (name: string) => path.join(work, name);

  const instance = async () => {
    const i = await newInstance(dialect);
    instances.push(i);
    return i;
  };

  beforeAll(async () => {
    source = await newInstance(dialect);
    const db = source.open();
    await migrateLatest(db);
    t = await startTestServer(dialect, { db, drop: async () => {} });
    const crowd = await createMembers(t, 'writer', 9);
    liveMembers = [t.cast.owner, t.cast.member, t.cast.moderator, ...crowd];
    await createChannel(t, 'live', liveMembers);
    historyRecipients = await preloadHistory(t, HISTORY_MESSAGES);
    await new Promise<void>((resolve) => {
      server = t.app.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }, 120_000);

  afterAll(async () => {
    if (server) await new Promise((resolve) => server.close(resolve));
    t?.ctx.queues.close();
    for (const i of instances) await i.drop();
    await source?.drop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  /** A request over real HTTP, as a Zulip client sends it. */
  async function call(user: UserRow, method: string, p: string, fields: Record<string, unknown>) {
    const res = await fetch(`${base}/api/v1${p}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`${user.email}:${user.api_key}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(encodeFields(fields)),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  it('backs up a server under concurrent writes; the restore is one consistent moment of it', async () => {
    const src = t.ctx.db;
    const writers = startWriters(call, t, liveMembers);
    await until(() => writers.sent() >= 40);
    const before = await countRows(src, 'messages');
    // Messages acknowledged before the CLI announces the copy were committed before its snapshot began.
    let acknowledged: number[] | null = null;
    const backup = await runCli(['backup', '--output', archive('during.tar.gz')], source.env, (stderr) => {
      if (!acknowledged && /^(Copying|Dumping) the/m.test(stderr)) acknowledged = writers.acknowledged();
    });
    const after = await countRows(src, 'messages');
    await writers.stop();

    expect(writers.errors).toEqual([]);
    expectSuccess(backup);
    expect(backup.stdout).toMatch(/^Wrote .*during\.tar\.gz/);
    // The writers kept committing while the backup process ran.
    expect(after).toBeGreaterThan(before);

    const target = await instance();
    const restore = await runCli(['restore', '--input', archive('during.tar.gz')], target.env);
    expectSuccess(restore);
    const restored = target.open();

    const count = await countRows(restored, 'messages');
    // The snapshot is a moment inside the backup's run.
    expect(count).toBeGreaterThanOrEqual(before);
    expect(count).toBeLessThanOrEqual(after);

    // Each writer works sequentially, so the moment holds a prefix of each one's messages.
    const live = await liveMessages(restored);
    expect(live.length).toBeGreaterThan(0);
    const byWriter = groupBy(live, (m) => m.writer);
    for (const [w, ks] of byWriter) {
      expect({ w, ks: ks.map((m) => m.k).sort((a, b) => a - b) }).toEqual({ w, ks: range(ks.length) });
    }
    // ... and that prefix holds everything acknowledged before the copy began.
    expect(acknowledged).not.toBeNull();
    for (const [w, n] of acknowledged!.entries()) {
      expect({ w, restored: byWriter.get(w)?.length ?? 0 }).toEqual({ w, restored: Math.max(n, byWriter.get(w)?.length ?? 0) });
    }

    // Every message has all its recipients' rows: channel members, the two DM participants, the history's members.
    const perMessage = new Map(
      rawRows<{ message_id: number; n: number }>(
        await restored.raw('SELECT message_id, count(*) AS n FROM user_messages GROUP BY message_id'),
      ).map((r) => [Number(r.message_id), Number(r.n)]),
    );
    for (const m of live) expect({ id: m.id, rows: perMessage.get(m.id) }).toEqual({ id: m.id, rows: m.direct ? 2 : liveMembers.length });
    const history = await restored('messages')
      .whereNotIn(
        'id',
        live.map((m) => m.id),
      )
      .pluck('id');
    expect(history).toHaveLength(HISTORY_MESSAGES);
    for (const id of history) expect(perMessage.get(Number(id))).toBe(historyRecipients);
    expect(perMessage.size).toBe(count); // and no rows for messages the snapshot does not hold
    await expectNoOrphans(restored);

    // Reactions follow their message: the reacting writer's reactions are the first R of its messages, R = K or K-1.
    const reacting = live.filter((m) => m.writer === REACTING_WRITER).sort((a, b) => a.k - b.k);
    const reacted = new Set((await restored('reactions').pluck('message_id')).map(Number));
    const r = reacting.filter((m) => reacted.has(m.id)).length;
    expect([reacting.length, reacting.length - 1]).toContain(r);
    expect(reacting.slice(0, r).every((m) => reacted.has(m.id))).toBe(true);

    // Every message is found by full-text search through the restored index, and only it.
    await expectSearchIndexComplete(dialect, restored, live);

    // Every restored row of the written tables is the source's row, unchanged.
    for (const table of ['messages', 'user_messages', 'reactions']) {
      const theirs = await rowsByKey(src, table);
      const ours = await rowsByKey(restored, table);
      for (const [id, row] of ours) expect({ table, id, row }).toEqual({ table, id, row: theirs.get(id) });
    }
  }, 180_000);

  it('with writes stopped, restores every table exactly, and the uploads', async () => {
    const upload = crypto.randomBytes(150_000);
    fs.mkdirSync(path.join(source.dataDir, 'uploads', '2', 'ab'), { recursive: true });
    fs.writeFileSync(path.join(source.dataDir, 'uploads', '2', 'ab', 'diagram.png'), upload);

    const backup = await runCli(['backup', '--output', archive('quiet.tar.gz')], source.env);
    expectSuccess(backup);
    // The uploads are still there: the backup's scratch directory only linked to them.
    expect(fs.readFileSync(path.join(source.dataDir, 'uploads', '2', 'ab', 'diagram.png'))).toEqual(upload);
    expect(fs.statSync(archive('quiet.tar.gz')).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(work).filter((f) => f.includes('.tmp-'))).toEqual([]);

    const target = await instance();
    const restore = await runCli(['restore', '--input', archive('quiet.tar.gz')], target.env);
    expectSuccess(restore);
    if (dialect === 'mysql') {
      // A restore is a bulk load: every table's statistics are recomputed, as the generator's settling does.
      const tables = Number(
        (
          await target
            .open()
            .raw("SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'")
        )[0][0].n,
      );
      expect(restore.stderr).toMatch(new RegExp(`warning: statistics of ${tables} tables recomputed; \\d+ of \\d+ buffer pool pages`));
    }

    const sourceDigest = await snapshotDigest(t.ctx.db);
    expect(await snapshotDigest(target.open())).toEqual(sourceDigest);
    expect(fs.readFileSync(path.join(target.dataDir, 'uploads', '2', 'ab', 'diagram.png'))).toEqual(upload);

    const manifest = await readManifest(archive('quiet.tar.gz'));
    expect(manifest).toMatchObject({
      format: 'parley-backup',
      format_version: 1,
      dialect,
      migration: MIGRATION_NAMES.at(-1),
      uploads: { files: 1, bytes: upload.length },
    });
    for (const [table, { rows }] of Object.entries(sourceDigest)) {
      if (table in manifest.tables) expect({ table, rows: manifest.tables[table] }).toEqual({ table, rows });
    }
    expect(Object.keys(manifest.tables)).toEqual(
      expect.arrayContaining(['messages', 'user_messages', 'reactions', 'users', 'knex_migrations']),
    );
  }, 120_000);

  it('refuses to overwrite an archive or a database that holds data, in one line each', async () => {
    const file = archive('quiet.tar.gz');
    const sha = sha256(file);
    const again = await runCli(['backup', '--output', file], source.env);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(`${file} already exists; pass --force to replace it.`);
    expect(sha256(file)).toBe(sha);

    const target = await instance();
    expect((await runCli(['restore', '--input', file], target.env)).code).toBe(0);
    const refused = await runCli(['restore', '--input', file], target.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/already holds data \(table \w+ has rows\); pass --force to replace it with the backup\.$/);

    // The source is in use by the running server (a query leaves its connection open): even --force does not replace it.
    await t.ctx.db.raw('SELECT 1');
    const busy = await runCli(['restore', '--force', '--input', file], source.env);
    expect(busy.code).toBe(1);
    expect(lastLine(busy.stderr)).toMatch(/is in use .*stop the server before restoring\.$/);

    const missing = await runCli(['restore', '--input', archive('nowhere.tar.gz')], target.env);
    expect(missing.stderr.trim()).toBe(`No such file: ${archive('nowhere.tar.gz')}`);
    fs.writeFileSync(archive('notes.txt'), 'not an archive\n'.repeat(100));
    const garbage = await runCli(['restore', '--input', archive('notes.txt')], target.env);
    expect(garbage.stderr.trim()).toMatch(/notes\.txt is damaged or not a Parley backup \(.+\)\.$/);
    for (const r of [missing, garbage]) {
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  }, 120_000);

  it('a damaged or tampered archive leaves the target exactly as it was', async () => {
    const target = await instance();
    expect((await runCli(['restore', '--input', archive('during.tar.gz')], target.env)).code).toBe(0);
    const db = target.open();
    const digest = await snapshotDigest(db);
    await db.destroy();

    // Bytes flipped inside the compressed database entry: gzip's checks catch it.
    const damaged = fs.readFileSync(archive('quiet.tar.gz'));
    for (let i = 0; i < 16; i++) damaged[Math.floor(damaged.length / 2) + i * 97] ^= 0x5a;
    fs.writeFileSync(archive('damaged.tar.gz'), damaged);
    const r1 = await runCli(['restore', '--force', '--input', archive('damaged.tar.gz')], target.env);
    expect(r1.code).toBe(1);
    expect(lastLine(r1.stderr)).toMatch(/damaged\.tar\.gz is damaged or not a Parley backup/);

    // A table's rows removed from the database entry, checksum recomputed: the row counts catch it.
    await repack(archive('quiet.tar.gz'), archive('tampered.tar.gz'), (dir, manifest) => {
      const file = path.join(dir, manifest.database.path);
      if (dialect === 'sqlite') {
        const copy = new Database(file);
        copy.exec('DELETE FROM reactions');
        copy.close();
      } else {
        fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^INSERT INTO `reactions` VALUES[^;]*;$/m, ''));
      }
      const bytes = fs.readFileSync(file);
      manifest.database.bytes = bytes.length;
      manifest.database.sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    });
    const r2 = await runCli(['restore', '--force', '--input', archive('tampered.tar.gz')], target.env);
    expect(r2.code).toBe(1);
    expect(lastLine(r2.stderr)).toMatch(/does not match the backup's manifest: table reactions has 0 rows, the manifest says [1-9]\d*\.$/);

    for (const r of [r1, r2]) expect(r.stderr).not.toMatch(NO_STACK);
    const reopened = target.open();
    expect(await snapshotDigest(reopened)).toEqual(digest);
    expect(fs.readdirSync(target.dataDir).filter((f) => f.startsWith('.restore-'))).toEqual([]);
    if (dialect === 'mysql') {
      const name = new URL(target.databaseUrl!).pathname.slice(1);
      const left = rawRows<{ n: string }>(
        await reopened.raw('SELECT schema_name AS n FROM information_schema.schemata WHERE schema_name LIKE ?', [`${name}\\_restore%`]),
      );
      expect(left).toEqual([]);
    }
  }, 120_000);

  it('restores a backup of an older schema and migrates it; refuses a schema it does not know', async () => {
    const old = await instance();
    await migrateUpTo(old.open(), MIGRATION_NAMES.at(-2)!);
    const backup = await runCli(['backup', '--output', archive('old.tar.gz')], old.env);
    expect(backup.code).toBe(0);
    expect((await readManifest(archive('old.tar.gz'))).migration).toBe(MIGRATION_NAMES.at(-2));

    const target = await instance();
    const restore = await runCli(['restore', '--input', archive('old.tar.gz')], target.env);
    expect(restore.code).toBe(0);
    expect(restore.stdout).toContain(`applied migrations ${MIGRATION_NAMES.at(-1)}`);
    expect(await target.open()('knex_migrations').max({ m: 'name' }).first()).toEqual({ m: MIGRATION_NAMES.at(-1) });

    await repack(archive('old.tar.gz'), archive('future.tar.gz'), (_dir, manifest) => {
      manifest.migration = '999_from_the_future';
    });
    const fresh = await instance();
    const refused = await runCli(['restore', '--input', archive('future.tar.gz')], fresh.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(
      /holds a database at migration 999_from_the_future \(Parley .+\), which this Parley does not know/,
    );
  }, 120_000);

  it('a failed backup leaves no file behind', async () => {
    const broken = await instance();
    const env =
      dialect === 'sqlite' ? broken.env : { ...broken.env, DATABASE_URL: broken.databaseUrl!.replace(/:[^:@/]*@/, ':wrong-password@') };
    const failed = await runCli(['backup', '--output', archive('failed.tar.gz')], env);
    expect(failed.code).toBe(1);
    expect(lastLine(failed.stderr)).toMatch(
      dialect === 'sqlite' ? /^No SQLite database at .*parley\.sqlite3 \(check DATA_DIR\)\.$/ : /^mariadb-dump failed: .*Access denied/,
    );
    expect(failed.stderr).not.toMatch(NO_STACK);
    expect(fs.readdirSync(work).filter((f) => f.includes('failed'))).toEqual([]);
  }, 60_000);

  if (dialect === 'mysql') {
    it('refuses a backup of the other kind of database', async () => {
      const lite = await newInstance('sqlite');
      instances.push(lite);
      await migrateLatest(lite.open());
      expect((await runCli(['backup', '--output', archive('lite.tar.gz')], lite.env)).code).toBe(0);
      const target = await instance();
      const intoMaria = await runCli(['restore', '--input', archive('lite.tar.gz')], target.env);
      expect(intoMaria.code).toBe(1);
      expect(intoMaria.stderr.trim()).toMatch(
        /is a SQLite backup, but this server uses MariaDB \(DATABASE_URL is set\); restoring from one kind of database into the other is not supported\.$/,
      );
      const intoLite = await runCli(['restore', '--input', archive('quiet.tar.gz')], { DATA_DIR: target.dataDir });
      expect(intoLite.code).toBe(1);
      expect(intoLite.stderr.trim()).toMatch(
        /is a MariaDB backup, but this server uses SQLite \(DATABASE_URL is not set\); restoring from one kind of database into the other is not supported\.$/,
      );
    }, 60_000);
  }
});

// ---------------------------------------------------------------- writers

/** Writer 0 and 1 post to the channel, 2 sends DMs, 3 posts and then reacts to its own message. */
const REACTING_WRITER = 3;
const TOKEN = /\bw(\d+)n(\d+)\b/;

type Call = (
  user: UserRow,
  method: string,
  p: string,
  fields: Record<string, unknown>,
) => Promise<{ status: number; body: Record<string, any> }>;

function startWriters(call: Call, t: TestServer, members: UserRow[]) {
  let stopping = false;
  let sent = 0;
  const errors: string[] = [];
  const check = (what: string, res: { status: number; body: Record<string, any> }) => {
    if (res.status !== 200) errors.push(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.status === 200;
  };
  const acked = [0, 0, 0, 0];
  const loop = async (w: number) => {
    const user = members[w]!;
    for (let k = 0; !stopping; k++) {
      // Quotes, backslashes, parentheses, semicolons and line breaks: the dump must carry them exactly.
      const content = `bkmark w${w}n${k} it's (a) "quoted"; back\\slash);\nsecond line 😀 ${FILLER}`;
      const res =
        w === 2
          ? await call(user, 'POST', '/messages', { type: 'direct', to: [t.cast.guest.id], content })
          : await call(user, 'POST', '/messages', { type: 'channel', to: 'live', topic: `topic ${k % 3}`, content });
      if (!check(`w${w}n${k}`, res)) return;
      sent++;
      acked[w] = k + 1;
      if (
        w === REACTING_WRITER &&
        !check(`react w${w}n${k}`, await call(user, 'POST', `/messages/${res.body.id}/reactions`, { emoji_name: 'octopus' }))
      )
        return;
    }
  };
  const running = [0, 1, 2, REACTING_WRITER].map(loop);
  return {
    errors,
    sent: () => sent,
    /** Messages each writer has had acknowledged (200) so far. */
    acknowledged: () => [...acked],
    stop: async () => {
      stopping = true;
      await Promise.all(running);
    },
  };
}

interface LiveMessage {
  id: number;
  writer: number;
  k: number;
  direct: boolean;
}

async function liveMessages(db: Knex): Promise<LiveMessage[]> {
  const rows = await db('messages').where('content', 'like', 'bkmark %').select('id', 'content', 'recipient_id');
  const personal = new Set((await db('recipients').where({ type: 1 }).orWhere({ type: 3 }).pluck('id')).map(Number));
  return rows.map((r) => {
    const [, w, k] = TOKEN.exec(r.content)!;
    return { id: Number(r.id), writer: Number(w), k: Number(k), direct: personal.has(Number(r.recipient_id)) };
  });
}

// ---------------------------------------------------------------- checks

async function expectSearchIndexComplete(_dialect: Dialect, db: Knex, live: LiveMessage[]): Promise<void> {
  // The search rows (migration 021) must name exactly the live messages.
  const search = async (word: string): Promise<number[]> =>
    (await db('message_search_terms').where('term', word).pluck('message_id')).map(Number);
  expect((await search('bkmark')).sort((a, b) => a - b)).toEqual(live.map((m) => m.id).sort((a, b) => a - b));
  for (const m of live)
    expect({ token: `w${m.writer}n${m.k}`, ids: await search(`w${m.writer}n${m.k}`) }).toEqual({
      token: `w${m.writer}n${m.k}`,
      ids: [m.id],
    });
}

/** Exit code 0; on failure the CLI's stderr shows in the test's message. */
function expectSuccess(result: CliResult): void {
  if (result.code !== 0) throw new Error(`the CLI exited with ${result.code}:\n${result.stderr}`);
  expect(result.stderr).not.toMatch(NO_STACK);
}

async function expectNoOrphans(db: Knex): Promise<void> {
  for (const [table, column] of [
    ['user_messages', 'message_id'],
    ['reactions', 'message_id'],
    ['user_messages', 'user_id'],
  ] as const) {
    const parent = column === 'user_id' ? 'users' : 'messages';
    const [row] = rawRows<{ n: number }>(
      await db.raw(`SELECT count(*) AS n FROM ${table} c LEFT JOIN ${parent} p ON p.id = c.${column} WHERE p.id IS NULL`),
    );
    expect({ table, column, orphans: Number(row!.n) }).toEqual({ table, column, orphans: 0 });
  }
}

// ---------------------------------------------------------------- helpers

/** Old messages in a channel of three, inserted in bulk (FTS triggers included on SQLite). Returns recipients per message. */
async function preloadHistory(t: TestServer, n: number): Promise<number> {
  const members = [t.cast.owner, t.cast.member, t.cast.moderator];
  const channel = await createChannel(t, 'history', members);
  const db = t.ctx.db;
  const now = Math.floor(Date.now() / 1000);
  await db.transaction(async (trx) => {
    for (let i = 0; i < n; i += 250) {
      const rows = Array.from({ length: Math.min(250, n - i) }, (_, j) => ({
        realm_id: t.realmId,
        sender_id: members[(i + j) % 3]!.id,
        recipient_id: channel.recipient_id,
        topic: `history ${(i + j) % 20}`,
        topic_key: `history ${(i + j) % 20}`,
        content: `old message ${i + j} ${FILLER}`,
        rendered_content: `<p>old message ${i + j} ${FILLER}</p>`,
        rendered_content_version: 1,
        date_sent: now - n + i + j,
      }));
      await trx('messages').insert(rows);
    }
    const ids = await trx('messages').where({ recipient_id: channel.recipient_id }).pluck('id');
    // knex inserts many rows into SQLite as one compound SELECT, limited to 500 terms.
    for (let i = 0; i < ids.length; i += 150) {
      await trx('user_messages').insert(
        ids.slice(i, i + 150).flatMap((id) => members.map((u) => ({ user_id: u.id, message_id: id, flags: 0 }))),
      );
    }
    await addReceivers(
      trx,
      ids.map(Number),
      members.map((u) => u.id),
    );
  });
  return members.length;
}

/** Extracts an archive, lets `edit` change its files and manifest, and writes it back in the same order. */
async function repack(from: string, to: string, edit: (dir: string, manifest: Manifest) => void): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-repack-'));
  try {
    await tar.x({ file: from, cwd: dir });
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
    edit(dir, manifest);
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    const entries = ['manifest.json', 'database', ...(fs.existsSync(path.join(dir, 'uploads')) ? ['uploads'] : [])];
    await tar.c({ file: to, cwd: dir, gzip: true }, entries);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function countRows(db: Knex, table: string): Promise<number> {
  return Number((await db(table).count({ n: '*' }).first())!.n);
}

/** A table's rows by their key: user_messages by (user_id, message_id), which is its primary key on MariaDB; the others by id. */
async function rowsByKey(db: Knex, table: string): Promise<Map<string, string>> {
  const rows: Record<string, unknown>[] = await db(table).select('*');
  const key = (r: Record<string, unknown>) => (table === 'user_messages' ? `${r.user_id}/${r.message_id}` : String(r.id));
  return new Map(rows.map((r) => [key(r), JSON.stringify(r, Object.keys(r).sort())]));
}

function sha256(file: string): string {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function groupBy<T, K>(items: T[], key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) out.set(key(item), [...(out.get(key(item)) ?? []), item]);
  return out;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the writers');
    await new Promise((r) => setTimeout(r, 20));
  }
}
