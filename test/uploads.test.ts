import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { LEFTOVER_AGE_MS, sweepUnclaimedUploads, sweepUploadLeftovers } from '../src/actions/uploads';
import { listUploads } from '../src/db/backup/uploads';
import { filePartType, sanitizeFileName } from '../src/domain/uploads';
import { dialectOf } from '../src/db/connection';
import { ManualClock, until } from './support/clock';
import { eachDatabase } from './support/databases';
import { pending, register, sendDirect, sendToChannel } from './support/events';
import { startRawServer, type RawServer } from './support/raw-http';
import { createChannel, startTestServer, TestServer } from './support/server';
import { filesOnDisk, tempDataDir, uploadFiles } from './support/uploads';
import { ContractChecker } from './support/contract';
import request from 'supertest';

const pathIdOf = (url: string) => url.slice('/user_uploads/'.length);

eachDatabase('POST /user_uploads', (dialect) => {
  let t: TestServer;
  let raw: RawServer;
  const clock = new ManualClock();
  const data = tempDataDir();
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { dataDir: data.dir, clock, config: { maxFileUploadSizeMib: 10 } });
    await createChannel(t, 'general', [t.cast.owner, t.cast.member, t.cast.guest]);
    raw = await startRawServer(t.app);
  });
  afterAll(async () => {
    await raw.close();
    await t.close();
    data.remove();
  });

  const countAttachments = async () => Number((await t.ctx.db('attachments').count({ n: '*' }).first())!.n);

  it('stores one file under a Zulip path id, with its record', async () => {
    const res = await uploadFiles(t, t.cast.member, [{ name: 'notes.txt', content: 'hello world', type: 'text/plain' }]);
    expect(res.status).toBe(200);
    const url: string = res.body.url;
    expect(url).toMatch(new RegExp(`^/user_uploads/${t.realmId}/[0-9a-f]{1,2}/[A-Za-z0-9_-]{24}/notes\\.txt$`));
    expect(res.body).toEqual({ result: 'success', msg: '', url, uri: url, filename: 'notes.txt' });
    const pathId = pathIdOf(url);
    expect(fs.readFileSync(path.join(data.dir, 'uploads', pathId), 'utf8')).toBe('hello world');
    const row = await t.ctx.db('attachments').where({ path_id: pathId }).first();
    expect(row).toMatchObject({ owner_id: t.cast.member.id, realm_id: t.realmId, file_name: 'notes.txt', content_type: 'text/plain' });
    expect(Number(row!.size)).toBe(11);
    expect(Number(row!.create_time)).toBe(Math.floor(clock.now() / 1000));
    // Nothing left behind in the in-progress directory.
    expect(filesOnDisk(data.dir).filter((f) => f.startsWith('.incoming'))).toEqual([]);
  });

  it('guesses the content type from the name when the client declares none', async () => {
    const res = await uploadFiles(t, t.cast.member, [{ name: 'pic.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47]) }]);
    const row = await t.ctx
      .db('attachments')
      .where({ path_id: pathIdOf(res.body.url) })
      .first();
    expect(row!.content_type).toBe('image/png');
  });

  it('refuses a body without a file, and one with two, storing nothing', async () => {
    const before = filesOnDisk(data.dir);
    const attachments = await countAttachments();
    const none = await uploadFiles(t, t.cast.member, [], { note: 'no file here' });
    expect(none).toEqual({ status: 400, body: { result: 'error', msg: 'You must specify a file to upload', code: 'BAD_REQUEST' } });
    const two = await uploadFiles(t, t.cast.member, [
      { name: 'a.txt', content: 'a' },
      { name: 'b.txt', content: 'b' },
    ]);
    expect(two).toEqual({ status: 400, body: { result: 'error', msg: 'You may only upload one file at a time', code: 'BAD_REQUEST' } });
    expect(filesOnDisk(data.dir)).toEqual(before);
    expect(await countAttachments()).toBe(attachments);
  });

  it('answers a form body or an empty body as a body without a file, after authentication', async () => {
    const before = filesOnDisk(data.dir);
    const noFile = { result: 'error', msg: 'You must specify a file to upload', code: 'BAD_REQUEST' };
    const form = await request(t.app)
      .post('/api/v1/user_uploads')
      .auth(t.cast.member.email, t.cast.member.api_key)
      .type('form')
      .send('filename=notes.txt');
    expect({ status: form.status, body: form.body }).toEqual({ status: 400, body: noFile });
    const empty = await request(t.app).post('/api/v1/user_uploads').auth(t.cast.member.email, t.cast.member.api_key);
    expect({ status: empty.status, body: empty.body }).toEqual({ status: 400, body: noFile });
    const anonymous = await request(t.app).post('/api/v1/user_uploads').type('form').send('filename=notes.txt');
    expect(anonymous.status).toBe(401);
    for (const r of [form, empty, anonymous]) new ContractChecker(t.spec).check('post', '/api/v1/user_uploads', r.status, r.body);
    expect(filesOnDisk(data.dir)).toEqual(before);
  });

  it('needs credentials before reading the body', async () => {
    const before = filesOnDisk(data.dir);
    const res = await uploadFiles(t, null, [{ name: 'a.txt', content: 'a' }]);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
    expect(filesOnDisk(data.dir)).toEqual(before);
  });

  it.each([
    ['my file (1).txt', 'my-file-1.txt'],
    // The multipart parser keeps only the last segment of a path, as Django's does.
    ['../../etc/passwd', 'passwd'],
    ['..', 'uploaded-file'],
    ['<script>alert(1)</script>.html', 'script.html'],
    ['résumé  2024.pdf', 'résumé-2024.pdf'],
    ['\uFB01le.txt', 'file.txt'],
    ['a\\b:c*d?.txt', 'bcd.txt'],
  ])('sanitises the name %j to %j, in the path id and the record', async (given, expected) => {
    const res = await uploadFiles(t, t.cast.member, [{ name: given, content: 'x' }]);
    expect(res.status).toBe(200);
    expect(res.body.filename).toBe(expected);
    expect(res.body.url.endsWith(`/${expected}`)).toBe(true);
    const row = await t.ctx
      .db('attachments')
      .where({ path_id: pathIdOf(res.body.url) })
      .first();
    expect(row!.file_name).toBe(expected);
  });

  it('sanitises names as Zulip does, separators included', () => {
    expect(sanitizeFileName('../../etc/passwd')).toBe('....etcpasswd');
    expect(sanitizeFileName('<script>alert(1)</script>.html')).toBe('scriptalert1script.html');
    expect(sanitizeFileName('a\\b:c*d?.txt')).toBe('abcd.txt');
    expect(sanitizeFileName(' - ')).toBe('-');
    expect(sanitizeFileName(' ?! ')).toBe('uploaded-file');
    expect(sanitizeFileName('a -- b\t\tc.txt')).toBe('a-b-c.txt');
  });

  it('reads a file part reported as text/plain (no Content-Type sent) by its name, unless the name says text', () => {
    expect(filePartType('text/plain', 'report.pdf')).toBe('application/pdf');
    expect(filePartType('text/plain', 'IMG.JPG')).toBe('image/jpeg');
    expect(filePartType('text/plain', 'notes.md')).toBe('text/plain');
    expect(filePartType('text/plain', 'README')).toBe('text/plain');
    expect(filePartType('image/png', 'photo.jpg')).toBe('image/png');
  });

  it('keeps a long name to its last 100 characters', () => {
    expect(sanitizeFileName(`${'a'.repeat(300)}.txt`)).toBe(`${'a'.repeat(96)}.txt`);
  });

  it('refuses a 50 MB file against a 10 MB limit while it streams: flat memory, nothing on disk', async () => {
    const before = filesOnDisk(data.dir);
    const attachments = await countAttachments();
    // Memory the process holds (JS heap and Buffers), measured after a full
    // collection so that garbage from socket reads does not count: every
    // 2 MiB the client pauses until the server has taken what was sent.
    const gc = collector();
    const held = () => {
      gc();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const baseline = held();
    let peak = 0;
    const res = await streamUpload(raw.port, t.cast.member, 50 * 1024 * 1024, async () => {
      await new Promise((r) => setTimeout(r, 30));
      peak = Math.max(peak, held() - baseline);
    });
    peak = Math.max(peak, held() - baseline);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toEqual({
      result: 'error',
      msg: "File is larger than this server's configured maximum upload size (10 MiB).",
      code: 'BAD_REQUEST',
    });
    // The server answered once the limit was crossed, well before the 50 MB were sent (about
    // 12 MB on an idle machine; a loaded one lets the client write 24 MB and more before it
    // reads the answer, with two test workers and other processes sharing two cores).
    expect(res.sent).toBeLessThan(40 * 1024 * 1024);
    expect(res.sent).toBeGreaterThan(10 * 1024 * 1024);
    // Holding the part in memory would be at least 10 MiB at the limit; streaming holds a
    // few chunks (1-3 MiB on an idle machine, up to 7 MiB when a loaded machine lets socket
    // buffers pile up between collections), so the bound sits below the limit, not near 0.
    expect(peak).toBeLessThan(8 * 1024 * 1024);
    expect(filesOnDisk(data.dir)).toEqual(before);
    expect(await countAttachments()).toBe(attachments);
  });

  it('deletes the partial file of a client that goes away mid-upload', async () => {
    const before = filesOnDisk(data.dir);
    const boundary = 'cutboundary';
    const head =
      `POST /api/v1/user_uploads HTTP/1.1\r\nHost: localhost\r\nAuthorization: Basic ${Buffer.from(`${t.cast.member.email}:${t.cast.member.api_key}`).toString('base64')}\r\n` +
      `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 5000000\r\n\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n`;
    const socket = net.connect(raw.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(head);
    socket.write(Buffer.alloc(256 * 1024, 0x62));
    // The part is being written to storage…
    await until(() => filesOnDisk(data.dir).some((f) => f.startsWith('.incoming')), 'a partial file');
    socket.destroy();
    // …and is gone once the connection is.
    await until(() => filesOnDisk(data.dir).length === before.length, 'the partial file removed');
    expect(filesOnDisk(data.dir)).toEqual(before);
  });

  it('accepts a file of exactly the limit, streamed', async () => {
    const res = await streamUpload(raw.port, t.cast.member, 10 * 1024 * 1024);
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text);
    expect(fs.statSync(path.join(data.dir, 'uploads', pathIdOf(body.url))).size).toBe(10 * 1024 * 1024);
  });

  it('leaves uploads still being received out of a backup', async () => {
    const stored = await uploadFiles(t, t.cast.member, [{ name: 'kept.txt', content: 'kept' }]);
    fs.mkdirSync(path.join(data.dir, 'uploads', '.incoming'), { recursive: true });
    fs.writeFileSync(path.join(data.dir, 'uploads', '.incoming', 'partial'), 'half');
    const listing = listUploads(data.dir)!;
    expect(listing.entries).toContain(`uploads/${pathIdOf(stored.body.url)}`);
    expect(listing.entries.filter((e) => e.includes('.incoming'))).toEqual([]);
    fs.rmSync(path.join(data.dir, 'uploads', '.incoming', 'partial'));
  });

  describe('attachment events and has:', () => {
    it('announces the upload to its owner, then each message that links it', async () => {
      const mine = await register(t, t.cast.member, { event_types: ['attachment'] });
      const other = await register(t, t.cast.owner, { event_types: ['attachment'] });
      const up = await uploadFiles(t, t.cast.member, [{ name: 'plan.pdf', content: '%PDF-1', type: 'application/pdf' }]);
      const row = await t.ctx
        .db('attachments')
        .where({ path_id: pathIdOf(up.body.url) })
        .first();
      const used = Number((await t.ctx.db('attachments').where({ realm_id: t.realmId }).sum({ s: 'size' }).first())!.s);
      const attachment = {
        id: row!.id,
        name: 'plan.pdf',
        path_id: pathIdOf(up.body.url),
        size: 6,
        create_time: Math.floor(clock.now() / 1000),
        message_ids: [],
      };
      expect(await pending(t, mine)).toEqual([
        { id: expect.any(Number), type: 'attachment', op: 'add', attachment, upload_space_used: used },
      ]);
      const id = await sendToChannel(t, t.cast.member, 'general', 'files', `[plan.pdf](${up.body.url})`);
      expect(await pending(t, mine)).toEqual([
        {
          id: expect.any(Number),
          type: 'attachment',
          op: 'update',
          attachment: { ...attachment, message_ids: [id] },
          upload_space_used: used,
        },
      ]);
      expect(await pending(t, other)).toEqual([]);
    });

    it('sets has_attachment only for a link to an existing upload the sender may read; has:attachment and has:image follow', async () => {
      const up = await uploadFiles(t, t.cast.member, [{ name: 'cat.png', content: 'png', type: 'image/png' }]);
      const linked = await sendDirect(t, t.cast.member, [t.cast.owner], `look [cat.png](${up.body.url})`);
      const bogus = await sendDirect(
        t,
        t.cast.member,
        [t.cast.owner],
        `[nothing](/user_uploads/${t.realmId}/ab/AAAAAAAAAAAAAAAAAAAAAAAA/none.png)`,
      );
      // Someone else's upload the sender cannot read is not theirs to attach; one they can read (they received it) is.
      const unseen = await uploadFiles(t, t.cast.member, [{ name: 'dog.png', content: 'png', type: 'image/png' }]);
      const foreign = await sendDirect(t, t.cast.owner, [t.cast.member], `[dog.png](${unseen.body.url})`);
      const quoted = await sendDirect(t, t.cast.owner, [t.cast.member], `> [cat.png](${up.body.url})`);
      const image = await sendDirect(t, t.cast.member, [t.cast.owner], 'https://example.com/a.png');
      const plain = await sendDirect(t, t.cast.member, [t.cast.owner], 'just words');
      const flags = async (id: number) => t.ctx.db('messages').where({ id }).first('has_attachment', 'has_image', 'has_link');
      expect(Boolean((await flags(linked))!.has_attachment)).toBe(true);
      expect(Boolean((await flags(bogus))!.has_attachment)).toBe(false);
      expect(Boolean((await flags(foreign))!.has_attachment)).toBe(false);
      expect(Boolean((await flags(quoted))!.has_attachment)).toBe(true);
      const narrow = async (operand: string) => {
        const res = await t.api.get('/messages', t.cast.owner, {
          anchor: 'newest',
          num_before: 100,
          num_after: 0,
          narrow: [
            { operator: 'has', operand },
            { operator: 'dm', operand: [t.cast.member.id] },
          ],
        });
        expect(res.status).toBe(200);
        return (res.body.messages as Array<{ id: number }>).map((m) => m.id);
      };
      const withAttachment = await narrow('attachment');
      expect(withAttachment).toContain(linked);
      expect(withAttachment).not.toContain(bogus);
      expect(withAttachment).not.toContain(foreign);
      const withImage = await narrow('image');
      expect(withImage).toContain(image);
      expect(withImage).not.toContain(plain);
    });

    it('an edit that removes the link clears has_attachment and tells the owner', async () => {
      const up = await uploadFiles(t, t.cast.member, [{ name: 'e.txt', content: 'e' }]);
      const id = await sendDirect(t, t.cast.member, [t.cast.owner], `[e.txt](${up.body.url})`);
      const mine = await register(t, t.cast.member, { event_types: ['attachment'] });
      const res = await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'gone' });
      expect(res.status).toBe(200);
      expect(Boolean((await t.ctx.db('messages').where({ id }).first('has_attachment'))!.has_attachment)).toBe(false);
      const events = await pending(t, mine);
      expect(events).toEqual([
        expect.objectContaining({ type: 'attachment', op: 'update', attachment: expect.objectContaining({ message_ids: [] }) }),
      ]);
    });
    it('deleting a message that links a file, or its topic, tells the owner which messages link it still', async () => {
      const up = await uploadFiles(t, t.cast.member, [{ name: 'gone.txt', content: 'g' }]);
      const row = await t.ctx
        .db('attachments')
        .where({ path_id: pathIdOf(up.body.url) })
        .first();
      const first = await sendToChannel(t, t.cast.member, 'general', 'doomed', `[gone.txt](${up.body.url})`);
      const second = await sendToChannel(t, t.cast.owner, 'general', 'doomed', `again [gone.txt](${up.body.url})`);
      const third = await sendDirect(t, t.cast.member, [t.cast.owner], `[gone.txt](${up.body.url})`);
      const mine = await register(t, t.cast.member, { event_types: ['attachment'] });
      const other = await register(t, t.cast.owner, { event_types: ['attachment'] });
      const update = (messageIds: number[]) => ({
        id: expect.any(Number),
        type: 'attachment',
        op: 'update',
        attachment: {
          id: row!.id,
          name: 'gone.txt',
          path_id: pathIdOf(up.body.url),
          size: 1,
          create_time: row!.create_time,
          message_ids: messageIds,
        },
        upload_space_used: expect.any(Number),
      });

      expect((await t.api.delete(`/messages/${first}`, t.cast.member)).status).toBe(200);
      expect(await pending(t, mine)).toEqual([update([second, third])]);

      const channelId = (await t.ctx.db('channels').where({ realm_id: t.realmId, name: 'general' }).first('id'))!.id;
      const topic = await t.api.post(`/streams/${channelId}/delete_topic`, t.cast.owner, { topic_name: 'doomed' });
      expect(topic.body).toEqual({ result: 'success', msg: '', complete: true });
      expect(await pending(t, mine)).toEqual([update([third])]);

      // The owner of the file hears it, whoever deletes; nobody else does.
      expect(await pending(t, other)).toEqual([]);
    });
  });

  describe('the unclaimed-upload sweep', () => {
    it('removes an old upload no message links, keeps linked, archived-linked and young ones', async () => {
      const old = await uploadFiles(t, t.cast.member, [{ name: 'old.txt', content: 'old' }]);
      const linked = await uploadFiles(t, t.cast.member, [{ name: 'linked.txt', content: 'l' }]);
      const archived = await uploadFiles(t, t.cast.member, [{ name: 'archived.txt', content: 'a' }]);
      const young = await uploadFiles(t, t.cast.member, [{ name: 'young.txt', content: 'y' }]);
      await sendToChannel(t, t.cast.member, 'general', 'sweep', `[linked](${linked.body.url})`);
      const doomed = await sendToChannel(t, t.cast.member, 'general', 'sweep', `[archived](${archived.body.url})`);
      expect((await t.api.delete(`/messages/${doomed}`, t.cast.owner)).status).toBe(200);
      // Every other upload of this file is older than the grace period too: the sweep takes them all.
      const days = t.ctx.config.unclaimedUploadsGraceDays;
      const aged = Math.floor(clock.now() / 1000) - days * 86_400 - 1;
      await t.ctx.db('attachments').whereNot('path_id', pathIdOf(young.body.url)).update({ create_time: aged });
      const owner = await register(t, t.cast.member, { event_types: ['attachment'] });
      const oldRow = await t.ctx
        .db('attachments')
        .where({ path_id: pathIdOf(old.body.url) })
        .first();

      let removed = 0;
      for (let i = 0; i < 100; i++) {
        const r = await sweepUnclaimedUploads(t.ctx);
        removed += r.removed;
        if (r.removed === 0) break;
      }
      expect(removed).toBeGreaterThan(0);
      const left = new Set((await t.ctx.db('attachments').select('path_id')).map((r: { path_id: string }) => r.path_id));
      expect(left.has(pathIdOf(old.body.url))).toBe(false);
      expect(fs.existsSync(path.join(data.dir, 'uploads', pathIdOf(old.body.url)))).toBe(false);
      for (const kept of [linked, archived, young]) {
        expect(left.has(pathIdOf(kept.body.url))).toBe(true);
        expect(fs.existsSync(path.join(data.dir, 'uploads', pathIdOf(kept.body.url)))).toBe(true);
      }
      const events = await pending(t, owner);
      expect(events).toContainEqual({
        id: expect.any(Number),
        type: 'attachment',
        op: 'remove',
        attachment: { id: oldRow!.id },
        upload_space_used: expect.any(Number),
      });
      // What is left on disk is exactly what the records name.
      expect(filesOnDisk(data.dir)).toEqual([...left].sort());
    });

    it('removes what a crashed upload left in the staging area once it is old, never a file still being written', async () => {
      const incoming = path.join(data.dir, 'uploads', '.incoming');
      fs.mkdirSync(incoming, { recursive: true });
      const crashed = path.join(incoming, 'crashed-upload');
      const live = path.join(incoming, 'live-upload');
      fs.writeFileSync(crashed, 'half a file');
      fs.writeFileSync(live, 'arriving');
      const longAgo = new Date(Date.now() - LEFTOVER_AGE_MS - 60_000);
      fs.utimesSync(crashed, longAgo, longAgo);
      expect(await sweepUploadLeftovers(t.ctx)).toEqual({ staged: 1, expiredTus: 0 });
      expect(fs.existsSync(crashed)).toBe(false);
      expect(fs.existsSync(live)).toBe(true);
      fs.rmSync(live);
    });

    it('records an upload before publishing its file: while the database waits, no file without a record appears', async () => {
      const published = () => filesOnDisk(data.dir).filter((f) => !f.startsWith('.'));
      const before = published();
      const incoming = path.join(data.dir, 'uploads', '.incoming');
      const staged = () => (fs.existsSync(incoming) ? fs.readdirSync(incoming) : []);
      const size = 4 * 1024 * 1024;
      let release: () => Promise<void> = async () => undefined;
      let blocked = false;
      const upload = streamUpload(raw.port, t.cast.member, size, async () => {
        if (blocked) return;
        blocked = true;
        // The body is read only after authentication: once it is being staged, hold the database.
        await until(() => staged().length > 0, 'the body is being staged');
        release = await holdAttachmentsTable(t);
      });
      // The whole body has arrived and sits staged; the record cannot be written yet.
      await until(() => staged().some((f) => fs.statSync(path.join(incoming, f)).size >= size), 'the whole body is staged', 20_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(published()).toEqual(before);
      await release();
      const res = await upload;
      expect(res.status).toBe(200);
      const stored = pathIdOf(JSON.parse(res.text).url);
      expect(published()).toEqual([...before, stored].sort());
      expect(await t.ctx.db('attachments').where({ path_id: stored }).first('id')).toBeDefined();
    });

    it('works in batches of the configured size', async () => {
      for (let i = 0; i < 3; i++) await uploadFiles(t, t.cast.member, [{ name: `b${i}.txt`, content: 'b' }]);
      await t.ctx.db('attachments').where('file_name', 'like', 'b_.txt').update({ create_time: 1 });
      const size = t.ctx.config.uploadSweepBatchSize;
      t.ctx.config.uploadSweepBatchSize = 2;
      try {
        expect(await sweepUnclaimedUploads(t.ctx)).toEqual({ removed: 2 });
        expect(await sweepUnclaimedUploads(t.ctx)).toEqual({ removed: 1 });
        expect(await sweepUnclaimedUploads(t.ctx)).toEqual({ removed: 0 });
      } finally {
        t.ctx.config.uploadSweepBatchSize = size;
      }
    });
  });
});

/**
 * Keeps every other session from writing attachments until the returned
 * function is called: SQLite's one connection held by an open transaction,
 * or a write lock on the table in MariaDB.
 */
async function holdAttachmentsTable(t: TestServer): Promise<() => Promise<void>> {
  const mysql = dialectOf(t.ctx.db) === 'mysql';
  const trx = await t.ctx.db.transaction();
  if (mysql) await trx.raw('LOCK TABLES attachments WRITE');
  return async () => {
    if (mysql) await trx.raw('UNLOCK TABLES');
    await trx.commit();
  };
}

/** A full garbage collection (V8's gc, exposed at run time). */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/**
 * A multipart upload of `size` bytes written by a plain HTTP client from one
 * reused 64 KiB chunk, so the test process holds no copy of the file; stops
 * writing once the server has answered.
 */
function streamUpload(
  port: number,
  user: { email: string; api_key: string },
  size: number,
  /** Called after every 2 MiB written; writing resumes when it resolves. */
  checkpoint?: () => Promise<void>,
): Promise<{ status: number; text: string; sent: number }> {
  const boundary = 'parleyboundary7MA4YWxkTrZu0gW';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  return new Promise((resolve, reject) => {
    let answered = false;
    let sent = 0;
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/v1/user_uploads',
      headers: {
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(head.length + size + tail.length),
        Authorization: 'Basic ' + Buffer.from(`${user.email}:${user.api_key}`).toString('base64'),
      },
    });
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8'), sent }));
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const write = () => {
      while (sent < size && !answered) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        const more = req.write(n === chunk.length ? chunk : chunk.subarray(0, n));
        if (checkpoint && sent % (2 * 1024 * 1024) === 0) {
          void checkpoint().then(write, reject);
          return;
        }
        if (!more) {
          req.once('drain', write);
          return;
        }
      }
      if (!answered) req.end(tail);
    };
    req.write(head);
    write();
  });
}
