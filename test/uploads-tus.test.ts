import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import net from 'node:net';
import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import { startRawServer, type RawServer } from './support/raw-http';
import { startTestServer, TestServer } from './support/server';
import { filesOnDisk, tempDataDir } from './support/uploads';
import { sweepUploadLeftovers } from '../src/actions/uploads';
import { listUploads } from '../src/db/backup/uploads';
import type { UserRow } from '../src/queries/rows';

const TUS = { 'Tus-Resumable': '1.0.0' };
const b64 = (s: string) => Buffer.from(s).toString('base64');
const basic = (u: UserRow) => 'Basic ' + Buffer.from(`${u.email}:${u.api_key}`).toString('base64');

eachDatabase('resumable uploads (tus) at /api/v1/tus', (dialect) => {
  let t: TestServer;
  let raw: RawServer;
  const data = tempDataDir();
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { dataDir: data.dir, config: { maxFileUploadSizeMib: 1 } });
    raw = await startRawServer(t.app);
  });
  afterAll(async () => {
    await raw.close();
    await t.close();
    data.remove();
  });

  const create = (
    user: UserRow | null,
    length: number,
    metadata = `filename ${b64('report [v2].pdf')},filetype ${b64('application/pdf')}`,
  ) =>
    raw.request({
      method: 'POST',
      path: '/api/v1/tus',
      user,
      headers: { ...TUS, 'Upload-Length': String(length), 'Upload-Metadata': metadata, 'Content-Length': '0' },
    });
  const patch = (user: UserRow | null, location: string, offset: number, body: Buffer) =>
    raw.request({
      method: 'PATCH',
      path: location,
      user,
      headers: { ...TUS, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
      body,
    });
  const head = (user: UserRow | null, location: string) => raw.request({ method: 'HEAD', path: location, user, headers: TUS });

  /** A PATCH that declares `declared` bytes, sends `sent` of them, then drops the connection. */
  const interruptedPatch = async (user: UserRow, location: string, offset: number, body: Buffer, sent: number) => {
    const socket = net.connect(raw.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      [
        `PATCH ${location} HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: ${basic(user)}`,
        'Tus-Resumable: 1.0.0',
        `Upload-Offset: ${offset}`,
        'Content-Type: application/offset+octet-stream',
        `Content-Length: ${body.length}`,
        '',
        '',
      ].join('\r\n'),
    );
    await new Promise<void>((resolve) => socket.write(body.subarray(0, sent), () => resolve()));
    await new Promise((r) => setTimeout(r, 200));
    socket.destroy();
  };

  it('takes a file in parts, survives an interruption, and ends as POST /user_uploads does', async () => {
    const queue = await register(t, t.cast.member, { event_types: ['attachment'] });
    const file = randomBytes(300_000);
    const created = await create(t.cast.member, file.length);
    expect(created.status).toBe(201);
    const location = String(created.headers.location);
    expect(location).toMatch(/^\/api\/v1\/tus\/[^/]+$/);

    // A first part.
    const first = await patch(t.cast.member, location, 0, file.subarray(0, 100_000));
    expect(first.status).toBe(204);
    expect(first.headers['upload-offset']).toBe('100000');

    // The connection drops in the middle of the second part.
    await interruptedPatch(t.cast.member, location, 100_000, file.subarray(100_000), 80_000);
    // The server keeps what arrived before the drop (once the aborted request is over).
    let offset = 0;
    for (let i = 0; i < 100 && offset <= 100_000; i++) {
      const h = await head(t.cast.member, location);
      expect(h.status).toBe(200);
      offset = Number(h.headers['upload-offset']);
      if (offset <= 100_000) await new Promise((r) => setTimeout(r, 50));
    }
    expect(offset).toBeGreaterThan(100_000);
    expect(offset).toBeLessThanOrEqual(180_000);
    expect(Number((await head(t.cast.member, location)).headers['upload-length'])).toBe(file.length);

    // The rest, from where the server says it stands.
    const last = await patch(t.cast.member, location, offset, file.subarray(offset));
    expect(last.status).toBe(200);
    expect(last.headers['upload-offset']).toBe(String(file.length));
    const url: string = last.body.url;
    expect(url).toMatch(new RegExp(`^/user_uploads/${t.realmId}/[0-9a-f]{1,2}/[A-Za-z0-9_-]{24}/report-v2\\.pdf$`));
    expect(last.body).toEqual({ result: 'success', msg: '', url, uri: url, filename: 'report-v2.pdf' });

    // The uploader reads identical bytes where the URL says.
    const read = await raw.request({ method: 'GET', path: url, user: t.cast.member });
    expect(read.status).toBe(200);
    expect(read.headers['content-type']).toBe('application/pdf');
    const got = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      const s = net.connect(raw.port, '127.0.0.1', () =>
        s.write(`GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basic(t.cast.member)}\r\nConnection: close\r\n\r\n`),
      );
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('end', () => resolve(Buffer.concat(chunks)));
      s.on('error', reject);
    });
    const bodyStart = got.indexOf('\r\n\r\n') + 4;
    expect(got.subarray(bodyStart).equals(file)).toBe(true);

    const pathId = url.slice('/user_uploads/'.length);
    const row = await t.ctx.db('attachments').where({ path_id: pathId }).first();
    expect(row).toMatchObject({
      owner_id: t.cast.member.id,
      realm_id: t.realmId,
      file_name: 'report-v2.pdf',
      content_type: 'application/pdf',
    });
    expect(Number(row!.size)).toBe(file.length);
    const events = await pending(t, queue);
    expect(events).toEqual([
      expect.objectContaining({ type: 'attachment', op: 'add', attachment: expect.objectContaining({ id: row!.id, path_id: pathId }) }),
    ]);

    // The partial copy is gone once the file is stored.
    expect(filesOnDisk(data.dir).filter((f) => f.startsWith('.tus') || f.startsWith('.incoming'))).toEqual([]);
  });

  it('lets no one but the uploader inspect or continue an upload', async () => {
    const created = await create(t.cast.member, 10);
    const location = String(created.headers.location);
    const missing = await head(t.cast.owner, location.replace(/[^/]+$/, 'nosuchupload'));
    const other = await head(t.cast.owner, location);
    expect(other.status).toBe(404);
    expect(other.status).toBe(missing.status);
    const otherPatch = await patch(t.cast.owner, location, 0, Buffer.from('0123456789'));
    expect(otherPatch.status).toBe(404);
    // Nothing was written by the refused PATCH.
    const mine = await head(t.cast.member, location);
    expect(mine.status).toBe(200);
    expect(mine.headers['upload-offset']).toBe('0');
  });

  it('refuses an Upload-Length over the limit with 413 and keeps nothing', async () => {
    const before = filesOnDisk(data.dir);
    const res = await create(t.cast.member, 1024 * 1024 + 1);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ result: 'error', msg: 'Uploaded file is larger than the allowed limit of 1 MiB', code: 'BAD_REQUEST' });
    expect(filesOnDisk(data.dir)).toEqual(before);
    expect((await create(t.cast.member, 1024 * 1024)).status).toBe(201);
  });

  it('needs the API credentials', async () => {
    const before = filesOnDisk(data.dir);
    const none = await create(null, 10);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ result: 'error', msg: 'Not logged in: API authentication or user session required', code: 'UNAUTHORIZED' });
    expect(none.headers['www-authenticate']).toBe('Basic realm="zulip"');
    const wrong = await create({ ...t.cast.member, api_key: 'x'.repeat(32) }, 10);
    expect(wrong.status).toBe(401);
    expect(wrong.body.msg).toBe('Invalid API key');
    expect(filesOnDisk(data.dir)).toEqual(before);
  });

  it("answers every refusal, tus' own included, with Zulip's JSON error", async () => {
    const cases: Array<[string, Promise<Awaited<ReturnType<typeof create>>>, number, string]> = [
      [
        'a negative Upload-Length',
        raw.request({
          method: 'POST',
          path: '/api/v1/tus',
          user: t.cast.member,
          headers: { ...TUS, 'Upload-Length': '-1', 'Content-Length': '0' },
        }),
        400,
        'Invalid upload-length',
      ],
      [
        'no Tus-Resumable header',
        raw.request({ method: 'POST', path: '/api/v1/tus', user: t.cast.member, headers: { 'Upload-Length': '4', 'Content-Length': '0' } }),
        412,
        'Tus-Resumable Required',
      ],
      [
        'an unknown method',
        raw.request({ method: 'PUT', path: '/api/v1/tus', user: t.cast.member, headers: { ...TUS, 'Content-Length': '0' } }),
        404,
        'Not found',
      ],
      ['an upload that does not exist', head(t.cast.member, '/api/v1/tus/0123456789abcdef'), 404, ''],
    ];
    for (const [what, answer, status, msg] of cases) {
      const res = await answer;
      expect([what, res.status, res.headers['content-type']]).toEqual([what, status, 'application/json']);
      // A HEAD has no body to carry one.
      if (what.includes('does not exist')) continue;
      expect([what, res.body]).toEqual([what, { result: 'error', msg, code: 'BAD_REQUEST' }]);
    }
  });

  it('refuses a deferred length, as Zulip does', async () => {
    const res = await raw.request({
      method: 'POST',
      path: '/api/v1/tus',
      user: t.cast.member,
      headers: { ...TUS, 'Upload-Defer-Length': '1', 'Upload-Metadata': `filename ${b64('a.txt')}`, 'Content-Length': '0' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: 'error', msg: 'Deferred file size not allowed.', code: 'BAD_REQUEST' });
  });

  it('answers protocol discovery without credentials, announcing the limit', async () => {
    const res = await raw.request({ method: 'OPTIONS', path: '/api/v1/tus', headers: TUS });
    expect(res.status).toBe(204);
    expect(res.headers['tus-max-size']).toBe(String(1024 * 1024));
    expect(res.headers['tus-version']).toBe('1.0.0');
  });

  it('leaves unfinished uploads out of backups', async () => {
    const created = await create(t.cast.member, 10);
    expect((await patch(t.cast.member, String(created.headers.location), 0, Buffer.from('01234'))).status).toBe(204);
    expect(filesOnDisk(data.dir).some((f) => f.startsWith('.tus/'))).toBe(true);
    expect(listUploads(data.dir)!.entries.filter((e) => e.includes('.tus'))).toEqual([]);
  });
  const tusDir = () => path.join(data.dir, 'uploads', '.tus');
  const idOf = (location: string) => location.slice(location.lastIndexOf('/') + 1);
  /** Moves an upload's creation back by `hours` (tus keeps it in the upload's record). */
  const backdate = (id: string, hours: number) => {
    const record = path.join(tusDir(), `${id}.json`);
    const info = JSON.parse(fs.readFileSync(record, 'utf8'));
    info.creation_date = new Date(Date.now() - hours * 3_600_000).toISOString();
    fs.writeFileSync(record, JSON.stringify(info));
  };

  it('lets an unfinished upload expire: 410 Gone, and the upload sweep deletes it', async () => {
    const created = await create(t.cast.member, 10);
    const location = String(created.headers.location);
    expect((await patch(t.cast.member, location, 0, Buffer.from('01234'))).status).toBe(204);
    const young = await create(t.cast.member, 10);
    backdate(idOf(location), t.ctx.config.tusUploadExpiryHours + 1);

    const late = await patch(t.cast.member, location, 5, Buffer.from('56789'));
    expect(late.status).toBe(410);
    const swept = await sweepUploadLeftovers(t.ctx);
    expect(swept.expiredTus).toBe(1);
    expect(fs.existsSync(path.join(tusDir(), idOf(location)))).toBe(false);
    expect(fs.existsSync(path.join(tusDir(), `${idOf(location)}.json`))).toBe(false);
    // A younger upload goes on.
    expect((await patch(t.cast.member, String(young.headers.location), 0, Buffer.from('0123456789'))).status).toBe(200);
  });

  it('moves the finished file into place (no copy), and leaves nothing in .tus when storing it fails', async () => {
    // Stored: the very file tus assembled (same inode), nothing left behind.
    const created = await create(t.cast.member, 6);
    const location = String(created.headers.location);
    expect((await patch(t.cast.member, location, 0, Buffer.from('abc'))).status).toBe(204);
    const inode = fs.statSync(path.join(tusDir(), idOf(location))).ino;
    const done = await patch(t.cast.member, location, 3, Buffer.from('def'));
    expect(done.status).toBe(200);
    const stored = path.join(data.dir, 'uploads', String(done.body.url).slice('/user_uploads/'.length));
    expect(fs.readFileSync(stored, 'utf8')).toBe('abcdef');
    expect(fs.statSync(stored).ino).toBe(inode);
    expect(fs.existsSync(path.join(tusDir(), idOf(location)))).toBe(false);

    // Failing: the organization's upload directory cannot be created (a file stands in its way).
    const realmDir = path.join(data.dir, 'uploads', String(t.realmId));
    const aside = `${realmDir}.aside`;
    fs.renameSync(realmDir, aside);
    fs.writeFileSync(realmDir, 'in the way');
    const attachments = Number((await t.ctx.db('attachments').count({ n: '*' }).first())!.n);
    try {
      const doomed = await create(t.cast.member, 3);
      const failed = await patch(t.cast.member, String(doomed.headers.location), 0, Buffer.from('xyz'));
      expect(failed.status).toBe(500);
      expect(failed.body).toEqual({ result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' });
      const id = idOf(String(doomed.headers.location));
      expect(fs.existsSync(path.join(tusDir(), id))).toBe(false);
      expect(fs.existsSync(path.join(tusDir(), `${id}.json`))).toBe(false);
      expect(filesOnDisk(data.dir).filter((f) => f.startsWith('.incoming'))).toEqual([]);
      // Neither the record: the upload did not happen.
      expect(Number((await t.ctx.db('attachments').count({ n: '*' }).first())!.n)).toBe(attachments);
    } finally {
      fs.rmSync(realmDir);
      fs.renameSync(aside, realmDir);
    }
  });

  it('removes a finished upload whose process died while storing it, once as old as the expiry', async () => {
    const created = await create(t.cast.member, 4);
    const id = idOf(String(created.headers.location));
    // What a crash in the middle of finishing leaves: every byte, in .tus.
    fs.writeFileSync(path.join(tusDir(), id), 'full');
    expect((await sweepUploadLeftovers(t.ctx)).expiredTus).toBe(0);
    backdate(id, t.ctx.config.tusUploadExpiryHours + 1);
    expect(await sweepUploadLeftovers(t.ctx)).toEqual({ staged: 0, expiredTus: 1 });
    expect(fs.existsSync(path.join(tusDir(), id))).toBe(false);
    expect(fs.existsSync(path.join(tusDir(), `${id}.json`))).toBe(false);
  });
});
