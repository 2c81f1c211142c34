import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { doCreateRealm } from '../src/actions/realms';
import { createUserInTx } from '../src/actions/users';
import { inTransaction } from '../src/db/transaction';
import { Role } from '../src/domain/roles';
import type { UserRow } from '../src/queries/rows';
import { ManualClock } from './support/clock';
import { eachDatabase } from './support/databases';
import { sendDirect, sendToChannel } from './support/events';
import { startRawServer, type RawServer } from './support/raw-http';
import { createChannel, createMembers, startTestServer, subscribe, TestServer } from './support/server';
import { tempDataDir, uploadFiles } from './support/uploads';

const NOT_FOUND = { result: 'error', msg: 'File not found.', code: 'BAD_REQUEST' };
const pathIdOf = (url: string) => url.slice('/user_uploads/'.length);

eachDatabase('GET /user_uploads', (dialect) => {
  let t: TestServer;
  let raw: RawServer;
  const clock = new ManualClock();
  const data = tempDataDir();
  let uploader: UserRow;
  let dmRecipient: UserRow;
  let bystander: UserRow;
  let earlySubscriber: UserRow;
  let lateSubscriber: UserRow;
  let lateShared: UserRow;
  let guest: UserRow;
  let foreigner: UserRow;
  /** path id of a file linked from each kind of message, and of one never linked. */
  const files: Record<'unlinked' | 'dm' | 'public' | 'protected' | 'shared' | 'html' | 'svg' | 'png' | 'text', string> = {} as never;

  const upload = async (name: string, content: string, type?: string) => {
    const res = await uploadFiles(t, uploader, [{ name, content, type }]);
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.url as string;
  };

  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { dataDir: data.dir, clock });
    raw = await startRawServer(t.app);
    [uploader, dmRecipient, bystander, earlySubscriber, lateSubscriber, lateShared] = (await createMembers(t, 'up', 6)) as [
      UserRow,
      UserRow,
      UserRow,
      UserRow,
      UserRow,
      UserRow,
    ];
    guest = t.cast.guest;
    await createChannel(t, 'town square', [uploader, guest]);
    const protectedChannel = await createChannel(t, 'protected', [uploader, earlySubscriber], {
      inviteOnly: true,
      historyPublicToSubscribers: false,
    });
    const shared = await createChannel(t, 'shared', [uploader], { inviteOnly: true, historyPublicToSubscribers: true });

    files.unlinked = pathIdOf(await upload('alone.txt', 'alone'));
    const dmUrl = await upload('dm.txt', 'for your eyes');
    files.dm = pathIdOf(dmUrl);
    await sendDirect(t, uploader, [dmRecipient], `[dm.txt](${dmUrl})`);
    const publicUrl = await upload('public.txt', 'for all');
    files.public = pathIdOf(publicUrl);
    await sendToChannel(t, uploader, 'town square', 'files', `[public.txt](${publicUrl})`);
    const protectedUrl = await upload('protected.txt', 'members then');
    files.protected = pathIdOf(protectedUrl);
    await sendToChannel(t, uploader, 'protected', 'files', `[protected.txt](${protectedUrl})`);
    const sharedUrl = await upload('shared.txt', 'members ever');
    files.shared = pathIdOf(sharedUrl);
    await sendToChannel(t, uploader, 'shared', 'files', `[shared.txt](${sharedUrl})`);
    // Joined after the messages were sent.
    await subscribe(t, protectedChannel, [lateSubscriber]);
    await subscribe(t, shared, [lateShared]);

    files.html = pathIdOf(await upload('page.html', '<script>alert(document.cookie)</script>', 'text/html'));
    files.svg = pathIdOf(
      await upload('logo.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'image/svg+xml'),
    );
    files.png = pathIdOf(await upload('dot.png', 'PNGDATA', 'image/png'));
    files.text = pathIdOf(await upload('hello.txt', 'hello world', 'text/plain'));

    const other = await doCreateRealm(t.ctx.db, { stringId: `elsewhere${dialect}`, name: 'Elsewhere' });
    foreigner = await inTransaction(t.ctx.db, (tx) =>
      createUserInTx(tx, null, {
        realmId: other,
        email: 'far@example.com',
        fullName: 'Far Away',
        role: Role.MEMBER,
        password: 'x-long-password',
      }),
    );
  });
  afterAll(async () => {
    await raw.close();
    await t.close();
    data.remove();
  });

  /** The Host each user's organization is addressed by. */
  const hostOf = (user: UserRow | null) => (user && user.realm_id !== t.realmId ? `elsewhere${dialect}.example.com` : 'localhost');
  const getFile = (pathId: string, user: UserRow | null, headers: Record<string, string> = {}) => {
    let req = request(t.app).get(`/user_uploads/${pathId}`).set('Host', hostOf(user));
    if (user) req = req.auth(user.email, user.api_key);
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    return req.buffer(true).parse((res, cb) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => cb(null, Buffer.concat(parts)));
    });
  };
  const temporaryUrl = (pathId: string, user: UserRow) =>
    t.api.call('get', `/user_uploads/${pathId}`, user, {}, { headers: { Host: hostOf(user) } });

  describe('who may read a file', () => {
    // [file, reader, may read]
    const table: Array<[keyof typeof files, () => UserRow, boolean, string]> = [
      ['unlinked', () => uploader, true, 'its uploader'],
      ['unlinked', () => bystander, false, 'anyone else, before a message links it'],
      ['dm', () => uploader, true, 'the uploader of a file in a DM'],
      ['dm', () => dmRecipient, true, 'the recipient of the DM'],
      ['dm', () => bystander, false, 'a member who did not receive the DM'],
      ['public', () => bystander, true, 'a member not subscribed to the public channel'],
      ['public', () => guest, true, 'a guest subscribed to the public channel'],
      ['dm', () => guest, false, 'a guest who did not receive the DM'],
      ['protected', () => earlySubscriber, true, 'a subscriber of a protected-history channel who received the message'],
      ['protected', () => lateSubscriber, false, 'a subscriber who joined a protected-history channel later'],
      ['protected', () => bystander, false, 'a member not subscribed to a private channel'],
      ['shared', () => lateShared, true, 'a later subscriber of a private channel with shared history'],
      ['shared', () => bystander, false, 'a non-subscriber of a private channel with shared history'],
      ['public', () => foreigner, false, 'a user of another organization'],
    ];
    it.each(table)('%s file, read by %s: %s (%s)', async (file, who, allowed) => {
      const user = who();
      const res = await getFile(files[file], user);
      const temp = await temporaryUrl(files[file], user);
      if (allowed) {
        expect(res.status).toBe(200);
        expect(res.body.toString('utf8').length).toBeGreaterThan(0);
        expect(temp.status).toBe(200);
        expect(temp.body.url).toMatch(/^\/user_uploads\/temporary\/[0-9a-f]+\/[^/]+$/);
      } else {
        expect(res.status).toBe(404);
        expect(JSON.parse(res.body.toString('utf8'))).toEqual(NOT_FOUND);
        expect(temp.status).toBe(404);
        expect(temp.body).toEqual(NOT_FOUND);
      }
    });

    it('a guest is not granted a public channel they are not subscribed to', async () => {
      const other = t.cast.member;
      const c = await createChannel(t, 'guestless', [uploader, other]);
      const url = await upload('g.txt', 'g');
      await sendToChannel(t, uploader, 'guestless', 'x', `[g](${url})`);
      expect((await getFile(pathIdOf(url), guest)).status).toBe(404);
      expect((await getFile(pathIdOf(url), other)).status).toBe(200);
      expect(c.id).toBeGreaterThan(0);
    });

    it('answers a missing file exactly as a forbidden one', async () => {
      const missing = `${t.realmId}/ab/AAAAAAAAAAAAAAAAAAAAAAAA/none.txt`;
      const forbidden = await getFile(files.dm, bystander);
      const absent = await getFile(missing, uploader);
      expect(absent.status).toBe(forbidden.status);
      expect(absent.body.toString('utf8')).toBe(forbidden.body.toString('utf8'));
      const tempAbsent = await temporaryUrl(missing, uploader);
      expect(tempAbsent.status).toBe(404);
      expect(tempAbsent.body).toEqual(NOT_FOUND);
    });

    it('needs credentials', async () => {
      const res = await getFile(files.public, null);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="zulip"');
      expect(JSON.parse(res.body.toString('utf8'))).toMatchObject({ code: 'UNAUTHORIZED' });
    });
  });

  describe('quoting a file', () => {
    it('links a file the sender can read, so the quote’s recipients may read it; not one they cannot', async () => {
      const dmUrl = `/user_uploads/${files.dm}`;
      const unlinkedUrl = `/user_uploads/${files.unlinked}`;
      expect((await getFile(files.dm, bystander)).status).toBe(404);
      // The DM's recipient quotes it to the bystander: the file is linked again, and the bystander may read it.
      const quote = await sendDirect(t, dmRecipient, [bystander], `> [dm.txt](${dmUrl})`);
      const linked = async (messageId: number) =>
        (await t.ctx.db('attachment_messages').where({ message_id: messageId }).pluck('attachment_id')).length;
      expect(await linked(quote)).toBe(1);
      expect((await getFile(files.dm, bystander)).status).toBe(200);
      // The bystander cannot read the uploader's unlinked file: naming it links nothing and opens nothing.
      const probe = await sendDirect(t, bystander, [earlySubscriber], `[alone.txt](${unlinkedUrl})`);
      expect(await linked(probe)).toBe(0);
      expect((await getFile(files.unlinked, earlySubscriber)).status).toBe(404);
    });
  });

  describe('serving', () => {
    it.each([
      ['html', 'text/html'],
      ['svg', 'image/svg+xml'],
    ] as const)('sends %s as a download that cannot run in our origin', async (file, type) => {
      const res = await getFile(files[file], uploader);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.headers['content-security-policy']).toContain('sandbox');
    });

    it('shows images and plain text inline, with their type', async () => {
      const png = await getFile(files.png, uploader);
      expect(png.headers['content-type']).toBe('image/png');
      expect(png.headers['content-disposition']).toBe(`inline; filename="dot.png"; filename*=UTF-8''dot.png`);
      expect(png.body.toString('utf8')).toBe('PNGDATA');
      const text = await getFile(files.text, uploader);
      expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(text.headers['content-disposition']).toMatch(/^inline;/);
      expect(text.headers['x-content-type-options']).toBe('nosniff');
    });

    it.each([
      ['bytes=0-4', 206, 'hello', 'bytes 0-4/11'],
      ['bytes=6-', 206, 'world', 'bytes 6-10/11'],
      ['bytes=-5', 206, 'world', 'bytes 6-10/11'],
      ['bytes=6-100', 206, 'world', 'bytes 6-10/11'],
      ['bytes=0-1,4-5', 200, 'hello world', undefined],
      ['pages=1', 200, 'hello world', undefined],
    ])('Range %s: %i', async (range, status, body, contentRange) => {
      const res = await getFile(files.text, uploader, { Range: range });
      expect(res.status).toBe(status);
      expect(res.body.toString('utf8')).toBe(body);
      expect(res.headers['content-range']).toBe(contentRange);
      expect(res.headers['content-length']).toBe(String(body.length));
    });

    it('answers a range past the end with 416', async () => {
      const res = await getFile(files.text, uploader, { Range: 'bytes=11-' });
      expect(res.status).toBe(416);
      expect(res.headers['content-range']).toBe('bytes */11');
    });

    it.each([
      (realm: number) => `/user_uploads/${realm}/../../../etc/passwd`,
      (realm: number) => `/user_uploads/${realm}/%2e%2e/%2e%2e/secret_key`,
      () => '/user_uploads/%2e%2e%2f%2e%2e%2fsecret_key',
      (realm: number) => `/user_uploads/${realm}/ab/AAAAAAAAAAAAAAAAAAAAAAAA/..%2f..%2f..%2fsecret_key`,
      (realm: number) => `/user_uploads/${realm}/ab/AAAAAAAAAAAAAAAAAAAAAAAA/..%5c..%5csecret_key`,
      (realm: number) => `/user_uploads/${realm}\\..\\..\\secret_key`,
      () => '/user_uploads//etc/passwd',
      () => '/user_uploads/%2fetc%2fpasswd',
      (realm: number) => `/user_uploads/${realm}/ab/AAAAAAAAAAAAAAAAAAAAAAAA/%00`,
      () => '/user_uploads/.incoming',
    ])('refuses traversal %#', async (make) => {
      // A file outside the uploads a traversal would reach.
      fs.writeFileSync(path.join(data.dir, 'secret_key'), 'x'.repeat(64));
      const res = await raw.request({ method: 'GET', path: make(t.realmId), user: uploader });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    });
  });

  describe('temporary URLs', () => {
    it('serve the file without credentials for 60 seconds, then refuse', async () => {
      const { body } = await temporaryUrl(files.dm, dmRecipient);
      const url: string = body.url;
      expect(url.endsWith('/dm.txt')).toBe(true);
      const first = await request(t.app).get(url);
      expect(first.status).toBe(200);
      expect(first.text).toBe('for your eyes');
      clock.advance(60_000);
      expect((await request(t.app).get(url)).status).toBe(200);
      clock.advance(1_000);
      const late = await request(t.app).get(url);
      expect(late.status).toBe(400);
      expect(late.body).toEqual({ result: 'error', msg: 'Invalid token', code: 'BAD_REQUEST' });
    });

    it('refuse a forged token and another file name', async () => {
      const { body } = await temporaryUrl(files.dm, uploader);
      const [, , , token, name] = (body.url as string).split('/') as [string, string, string, string, string];
      const forged = token.slice(0, -2) + (token.endsWith('30') ? '31' : '30');
      const res = await request(t.app).get(`/user_uploads/temporary/${forged}/${name}`);
      expect(res.body).toEqual({ result: 'error', msg: 'Invalid token', code: 'BAD_REQUEST' });
      const renamed = await request(t.app).get(`/user_uploads/temporary/${token}/other.txt`);
      expect(renamed.body).toEqual({ result: 'error', msg: 'Invalid filename', code: 'BAD_REQUEST' });
    });
  });
});
