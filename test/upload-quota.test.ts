import { randomBytes } from 'node:crypto';
import request from 'supertest';
import sharp from 'sharp';
import { updateRealm } from '../src/queries/realms';
import type { UserRow } from '../src/queries/rows';
import { lastLine, runCli } from './support/cli';
import { ContractChecker } from './support/contract';
import { eachDatabase } from './support/databases';
import { register } from './support/events';
import { newInstance, type Instance } from './support/instances';
import { startRawServer, type RawServer } from './support/raw-http';
import { startTestServer, type TestServer } from './support/server';
import { filesOnDisk, tempDataDir, uploadFiles } from './support/uploads';

const KIB = 1024;
const quotaError = { result: 'error', msg: "Upload would exceed your organization's upload quota.", code: 'REALM_UPLOAD_QUOTA' };
const TUS = { 'Tus-Resumable': '1.0.0' };
const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * An organization's upload quota (realms.upload_quota_mib): advertised in
 * register, enforced on every way a file is stored (POST /user_uploads, a
 * resumable upload's creation and its end, avatars, custom emoji), and set by
 * the CLI. Also the per-user bound on unfinished resumable uploads.
 */
eachDatabase('upload quotas', (dialect) => {
  let t: TestServer;
  let raw: RawServer;
  const data = tempDataDir();
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, {
      dataDir: data.dir,
      config: { maxFileUploadSizeMib: 1, tusMaxUnfinishedUploads: 2, tusMaxUnfinishedMib: 1 },
    });
    raw = await startRawServer(t.app);
  });
  afterAll(async () => {
    await raw.close();
    await t.close();
    data.remove();
  });
  afterEach(async () => {
    await setQuota(null);
    await t.ctx.db('attachments').where({ realm_id: t.realmId }).del();
  });

  const setQuota = (mib: number | null) => updateRealm(t.ctx.db, t.realmId, { upload_quota_mib: mib });
  const file = (bytes: number) => ({ name: 'data.bin', content: randomBytes(bytes) });
  const attachments = async () => Number((await t.ctx.db('attachments').where({ realm_id: t.realmId }).count('* as n'))[0]!.n);
  const png = (size: number) =>
    sharp({ create: { width: size, height: size, channels: 3, background: '#2a6' } })
      .png()
      .toBuffer();
  const createTus = (user: UserRow, length: number) =>
    raw.request({
      method: 'POST',
      path: '/api/v1/tus',
      user,
      headers: { ...TUS, 'Upload-Length': String(length), 'Upload-Metadata': `filename ${b64('a.bin')}`, 'Content-Length': '0' },
    });
  const endTus = (user: UserRow, location: string) => raw.request({ method: 'DELETE', path: location, user, headers: TUS });

  it('is advertised in register: null without one, its MiB with one', async () => {
    expect((await register(t, t.cast.member)).state.realm_upload_quota_mib).toBeNull();
    await setQuota(3);
    expect((await register(t, t.cast.member)).state.realm_upload_quota_mib).toBe(3);
  });

  it("refuses an upload that would take the organization past it, with Zulip's error, and keeps nothing of it", async () => {
    await setQuota(1);
    expect((await uploadFiles(t, t.cast.member, [file(600 * KIB)])).status).toBe(200);
    // Every member's uploads count, claimed or not.
    const before = filesOnDisk(data.dir);
    const refused = await uploadFiles(t, t.cast.admin, [file(500 * KIB)]);
    expect(refused).toEqual({ status: 400, body: quotaError });
    expect(await attachments()).toBe(1);
    expect(filesOnDisk(data.dir)).toEqual(before);
    // What still fits is taken.
    expect((await uploadFiles(t, t.cast.member, [file(400 * KIB)])).status).toBe(200);
    // Without a quota, anything under the size limit.
    await setQuota(null);
    expect((await uploadFiles(t, t.cast.member, [file(900 * KIB)])).status).toBe(200);
  });

  it('lets concurrent uploads into one organization take turns: together they never exceed it', async () => {
    await setQuota(1);
    const results = await Promise.all(Array.from({ length: 6 }, () => uploadFiles(t, t.cast.member, [file(300 * KIB)])));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 400, 400, 400]);
    expect(await attachments()).toBe(3);
  });

  it('refuses an avatar or a custom emoji while the organization is past it', async () => {
    await setQuota(1);
    // 50 bytes left: less than either image.
    expect((await uploadFiles(t, t.cast.member, [file(1024 * KIB - 50)])).status).toBe(200);
    const image = await png(64);
    expect(image.length).toBeGreaterThan(50);
    const postImage = async (url: string) => {
      const res = await request(t.app)
        .post(url)
        .auth(t.cast.member.email, t.cast.member.api_key)
        .attach('file', image, { filename: 'image.png', contentType: 'image/png' });
      new ContractChecker(t.spec).check('post', url, res.status, res.body);
      return { status: res.status, body: res.body as unknown };
    };
    expect(await postImage('/api/v1/users/me/avatar')).toEqual({ status: 400, body: quotaError });
    expect(await postImage('/api/v1/realm/emoji/parley_green')).toEqual({ status: 400, body: quotaError });
    // A larger quota: both are taken.
    await setQuota(2);
    expect((await postImage('/api/v1/users/me/avatar')).status).toBe(200);
    const again = await postImage('/api/v1/realm/emoji/parley_green');
    expect(again.status).toBe(200);
  });

  it('refuses a resumable upload whose declared length would exceed it, before any byte', async () => {
    await setQuota(1);
    expect((await uploadFiles(t, t.cast.member, [file(800 * KIB)])).status).toBe(200);
    const refused = await createTus(t.cast.member, 300 * KIB);
    expect([refused.status, refused.headers['content-type'], refused.body]).toEqual([400, 'application/json', quotaError]);
    const fits = await createTus(t.cast.member, 100 * KIB);
    expect(fits.status).toBe(201);
    await endTus(t.cast.member, String(fits.headers.location));
  });

  const expectRefused = async (response: ReturnType<typeof createTus>, msg: string) => {
    const res = await response;
    expect([res.status, res.body]).toEqual([400, { result: 'error', msg, code: 'BAD_REQUEST' }]);
  };

  it("bounds each user's unfinished resumable uploads, in number and in declared bytes", async () => {
    const first = await createTus(t.cast.member, 600 * KIB);
    expect(first.status).toBe(201);
    // 600 + 600 KiB declared is over the user's 1 MiB.
    await expectRefused(
      createTus(t.cast.member, 600 * KIB),
      'Your unfinished uploads may not exceed 1 MiB together: finish or cancel one first.',
    );
    const second = await createTus(t.cast.member, 10 * KIB);
    expect(second.status).toBe(201);
    await expectRefused(createTus(t.cast.member, 10 * KIB), 'You have 2 unfinished uploads, the most allowed: finish or cancel one first.');
    // Another user has bounds of their own.
    const others = await createTus(t.cast.admin, 600 * KIB);
    expect(others.status).toBe(201);
    // Cancelling one makes room.
    expect((await endTus(t.cast.member, String(first.headers.location))).status).toBe(204);
    const after = await createTus(t.cast.member, 10 * KIB);
    expect(after.status).toBe(201);
    for (const [user, res] of [
      [t.cast.member, second],
      [t.cast.member, after],
      [t.cast.admin, others],
    ] as const)
      await endTus(user, String(res.headers.location));
  });
});

/** The operator's side: the CLI's upload-quota, a process of its own on the instance's database. */
eachDatabase('the upload-quota command', (dialect) => {
  let instance: Instance;
  beforeAll(async () => {
    instance = await newInstance(dialect);
  });
  afterAll(() => instance.drop());

  it('prints, sets and removes an organization quota, and refuses a bad value', async () => {
    const run = (args: string[]) => runCli(args, instance.env);
    expect((await run(['create-realm', '--string-id', 'acme', '--name', 'Acme'])).code).toBe(0);
    const quota = async () => (await instance.open()('realms').where({ string_id: 'acme' }).first('upload_quota_mib'))!.upload_quota_mib;

    expect((await run(['upload-quota', '--realm', 'acme'])).stdout).toBe("Organization 'acme': no upload quota; 0.0 MiB used.\n");
    expect((await run(['upload-quota', '--realm', 'acme', '--mib', '250'])).stdout).toBe(
      "Organization 'acme': upload quota 250 MiB; 0.0 MiB used.\n",
    );
    expect(await quota()).toBe(250);
    for (const [args, line] of [
      [['--mib', '0'], "--mib must be a whole number of MiB from 1, not '0'"],
      [['--mib', '1.5'], "--mib must be a whole number of MiB from 1, not '1.5'"],
      [['--mib', '5', '--none'], 'Give --mib or --none, not both'],
    ] as const) {
      const refused = await run(['upload-quota', '--realm', 'acme', ...args]);
      expect([refused.code, lastLine(refused.stderr)]).toEqual([1, line]);
    }
    expect(await quota()).toBe(250);
    expect((await run(['upload-quota', '--realm', 'acme', '--none'])).stdout).toBe("Organization 'acme': no upload quota; 0.0 MiB used.\n");
    expect(await quota()).toBeNull();
  }, 120_000);
});
