import path from 'node:path';
import request from 'supertest';
import sharp from 'sharp';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { pending, register, startEventsServer, stopEventsServer } from './support/events';
import { ContractChecker } from './support/contract';
import type { TestServer } from './support/server';
import { filesOnDisk, tempDataDir } from './support/uploads';
import { captureEvents } from './users-fixtures';

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: { r: 20, g: 120, b: 200, alpha: 1 } } })
    .png()
    .toBuffer();

const ICON_SOURCE_CHANGED = 208;
const LOGO_CHANGED = 205;

eachDatabase('organization icon', (dialect) => {
  let t: TestServer;
  const data = tempDataDir();
  let defaultIcon: string;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
    // The events world has no data directory; the icon files need one.
    (t.ctx as { storage: unknown }).storage = new (await import('../src/storage/files')).LocalFileStore(path.join(data.dir, 'uploads'));
    defaultIcon = (await register(t, t.cast.member)).state.realm_icon_url as string;
  });
  afterAll(async () => {
    await stopEventsServer(t);
    data.remove();
  });

  type Who = keyof TestServer['cast'];
  async function upload(user: UserRow, files: Buffer[]) {
    let req = request(t.app).post('/api/v1/realm/icon').auth(user.email, user.api_key);
    files.forEach((content, i) => {
      req = req.attach(`f${i}`, content, { filename: `icon${i}.png`, contentType: 'image/png' });
    });
    if (files.length === 0) req = req.field('nothing', '');
    const res = await req;
    new ContractChecker(t.spec).check('post', '/api/v1/realm/icon', res.status, res.body);
    return { status: res.status, body: res.body as Record<string, any> };
  }
  const remove = (who: Who) => t.api.delete('/realm/icon', t.cast[who]);
  const realmRow = async () => (await t.ctx.db('realms').where({ id: t.realmId }).first())!;
  const auditRows = async () =>
    (await t.ctx.db('audit_log').where({ realm_id: t.realmId, event_type: ICON_SOURCE_CHANGED }).orderBy('id')).map((r) => ({
      actor: r.acting_user_id,
      extra: typeof r.extra_data === 'string' ? JSON.parse(r.extra_data) : r.extra_data,
    }));
  const serve = (url: string) =>
    request(t.app)
      .get(url)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });

  /** A refused request: exactly this error, the organization row unchanged, nothing announced, no audit row. */
  async function expectRefused(
    send: () => Promise<{ status: number; body: unknown }>,
    msg: string,
    code = 'BAD_REQUEST',
    extra: Record<string, unknown> = {},
  ) {
    const before = await realmRow();
    const audits = (await auditRows()).length;
    const files = filesOnDisk(data.dir);
    const { result: res, deliveries } = await captureEvents(t, send);
    expect(res.body).toEqual({ result: 'error', msg, code, ...extra });
    expect(res.status).toBe(400);
    expect(await realmRow()).toEqual(before);
    expect(deliveries).toEqual([]);
    expect((await auditRows()).length).toBe(audits);
    // No file of the refused upload stays behind (staged, original or PNG).
    expect(filesOnDisk(data.dir)).toEqual(files);
  }

  it('starts with the default icon and logos in register', async () => {
    const { state } = await register(t, t.cast.guest);
    expect(defaultIcon).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon$/);
    expect(state).toMatchObject({
      realm_icon_url: defaultIcon,
      realm_icon_source: 'G',
      realm_logo_url: defaultIcon,
      realm_logo_source: 'D',
      realm_night_logo_url: defaultIcon,
      realm_night_logo_source: 'D',
      max_icon_file_size_mib: 5,
    });
  });

  it.each<[Who, boolean]>([
    ['owner', true],
    ['admin', true],
    ['moderator', false],
    ['member', false],
    ['guest', false],
    ['bot', false],
  ])('upload by %s allowed: %s', async (who, allowed) => {
    if (!allowed) {
      const image = await png(50, 50);
      await expectRefused(() => upload(t.cast[who], [image]), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
      await expectRefused(() => remove(who), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
      return;
    }
    const res = await upload(t.cast[who], [await png(300, 200)]);
    expect(res.status).toBe(200);
    const row = await realmRow();
    expect(row.icon_source).toBe('U');
    expect(res.body).toEqual({
      result: 'success',
      msg: '',
      icon_url: expect.stringMatching(new RegExp(`^/user_avatars/${t.realmId}/[0-9a-f]{40}\\.png\\?version=${row.icon_version}$`)),
    });
    expect((await remove(who)).status).toBe(200);
  });

  it('an upload becomes a 100x100 PNG served publicly, announced to every active user, audited, in register', async () => {
    const guest = await register(t, t.cast.guest, { event_types: ['realm'] });
    const image400 = await png(400, 250);
    const before = await realmRow();
    const { result: res, deliveries } = await captureEvents(t, () => upload(t.cast.admin, [image400]));
    expect(res.status).toBe(200);
    const url = res.body.icon_url as string;
    const after = await realmRow();
    expect([after.icon_source, after.icon_version]).toEqual(['U', before.icon_version + 1]);
    expect(url).toMatch(new RegExp(`\\?version=${after.icon_version}$`));
    const event = { type: 'realm', op: 'update_dict', property: 'icon', data: { icon_url: url, icon_source: 'U' } };
    expect(deliveries.map((d) => d.event)).toEqual([event]);
    expect(deliveries[0]!.userIds).toEqual(expect.arrayContaining([t.cast.guest.id, t.cast.bot.id, t.cast.owner.id]));
    expect(deliveries[0]!.userIds).not.toContain(t.cast.deactivated.id);
    expect(await pending(t, guest)).toEqual([expect.objectContaining(event)]);
    expect((await auditRows()).at(-1)).toEqual({ actor: t.cast.admin.id, extra: { icon_source: 'U', icon_version: after.icon_version } });
    // Served without credentials: a PNG of exactly 100x100.
    const served = await serve(url);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    const meta = await sharp(served.body as Buffer).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 100, 100]);
    // The original is kept, never served.
    expect((await serve(url.replace(/\.png\?.*$/, '.original'))).status).toBe(404);
    const { state } = await register(t, t.cast.member);
    expect(state).toMatchObject({ realm_icon_url: url, realm_icon_source: 'U', realm_logo_url: defaultIcon, realm_logo_source: 'D' });
    // The login page's server settings show the same icon.
    expect((await t.api.get('/server_settings', null)).body.realm_icon).toBe(url);

    // A second upload gets a URL of its own; the previous file goes.
    const second = await upload(t.cast.owner, [await png(20, 40)]);
    expect(second.status).toBe(200);
    expect(second.body.icon_url).not.toBe(url);
    expect((await serve(second.body.icon_url)).status).toBe(200);
    expect((await serve(url)).status).toBe(404);
  });

  it('DELETE goes back to the default icon, with an event and an audit row even when already default', async () => {
    for (let i = 0; i < 2; i++) {
      const before = await realmRow();
      const { result: res, deliveries } = await captureEvents(t, () => remove('owner'));
      expect(res.body).toEqual({ result: 'success', msg: '', icon_url: defaultIcon });
      expect(await realmRow()).toMatchObject({ icon_source: 'G', icon_version: before.icon_version + 1 });
      expect(deliveries.map((d) => d.event)).toEqual([
        { type: 'realm', op: 'update_dict', property: 'icon', data: { icon_url: defaultIcon, icon_source: 'G' } },
      ]);
      expect((await auditRows()).at(-1)).toEqual({
        actor: t.cast.owner.id,
        extra: { icon_source: 'G', icon_version: before.icon_version + 1 },
      });
    }
    expect((await register(t, t.cast.member)).state).toMatchObject({ realm_icon_url: defaultIcon, realm_icon_source: 'G' });
  });

  it('refuses no file, two files, a file over 5 MiB and a non-image, writing nothing', async () => {
    const image = await png(10, 10);
    await expectRefused(() => upload(t.cast.admin, []), 'You must upload exactly one icon.');
    await expectRefused(() => upload(t.cast.admin, [image, image]), 'You must upload exactly one icon.');
    await expectRefused(
      () => upload(t.cast.admin, [Buffer.alloc(5 * 1024 * 1024 + 1, 1)]),
      'Uploaded file is larger than the allowed limit of 5 MiB',
    );
    await expectRefused(
      () => upload(t.cast.admin, [Buffer.from('not an image at all')]),
      'Could not decode image; did you upload an image file?',
    );
    // A urlencoded body carries no file either.
    await expectRefused(() => t.api.post('/realm/icon', t.cast.admin, { x: '1' }), 'You must upload exactly one icon.');
  });

  // ---- GET /realm/icon and GET /realm/logo: redirects to the image ----
  /** GET of `path` as `user` (none: no credentials), not following the redirect, checked against the contract. */
  async function getRedirect(path: string, user: UserRow | null, query: string) {
    let req = request(t.app).get(`/api/v1${path}${query}`).redirects(0);
    if (user) req = req.auth(user.email, user.api_key);
    const res = await req;
    new ContractChecker(t.spec).check('get', `/api/v1${path}`, res.status, res.body);
    return res;
  }
  const getIcon = (user: UserRow | null, query = '') => getRedirect('/realm/icon', user, query);

  it('GET redirects every role to the icon in use, with the query string added as sent; needs credentials', async () => {
    await remove('owner');
    for (const who of ['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as const) {
      const res = await getIcon(t.cast[who]);
      expect([res.status, res.headers.location]).toEqual([302, defaultIcon]);
    }
    // The default identicon has a query of its own: the client's follows it, raw.
    expect((await getIcon(t.cast.member, '?s=100&x=a%20b')).headers.location).toBe(`${defaultIcon}&s=100&x=a%20b`);
    await upload(t.cast.admin, [await png(100, 100)]);
    const uploaded = (await register(t, t.cast.member)).state.realm_icon_url as string;
    expect(uploaded).toMatch(/^\/user_avatars\/.+\?version=\d+$/);
    const res = await getIcon(t.cast.guest);
    expect([res.status, res.headers.location]).toEqual([302, uploaded]);
    expect((await getIcon(t.cast.guest, '?size=big')).headers.location).toBe(`${uploaded}&size=big`);
    // The target is served.
    expect((await serve(uploaded)).status).toBe(200);
    const anonymous = await getIcon(null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.location).toBeUndefined();
  });

  // ---- the wide logos: POST and DELETE /realm/logo ----
  async function uploadLogo(user: UserRow, night: unknown, files: Buffer[]) {
    const query = night === undefined ? '' : `?night=${String(night)}`;
    let req = request(t.app).post(`/api/v1/realm/logo${query}`).auth(user.email, user.api_key);
    files.forEach((content, i) => {
      req = req.attach(`f${i}`, content, { filename: `logo${i}.png`, contentType: 'image/png' });
    });
    if (files.length === 0) req = req.field('nothing', '');
    const res = await req;
    new ContractChecker(t.spec).check('post', '/api/v1/realm/logo', res.status, res.body);
    return { status: res.status, body: res.body as Record<string, any> };
  }
  const removeLogo = (who: Who, night: boolean) => t.api.delete('/realm/logo', t.cast[who], { night });
  const logoAudits = async () =>
    (await t.ctx.db('audit_log').where({ realm_id: t.realmId, event_type: LOGO_CHANGED }).orderBy('id')).map((r) => r.acting_user_id);

  it.each<[Who, boolean]>([
    ['owner', true],
    ['admin', true],
    ['moderator', false],
    ['member', false],
    ['guest', false],
  ])('logo upload and delete by %s allowed: %s', async (who, allowed) => {
    const image = await png(300, 60);
    if (!allowed) {
      await expectRefused(() => uploadLogo(t.cast[who], false, [image]), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
      await expectRefused(() => removeLogo(who, true), 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
      return;
    }
    expect((await uploadLogo(t.cast[who], true, [image])).body).toEqual({ result: 'success', msg: '' });
    expect((await removeLogo(who, true)).body).toEqual({ result: 'success', msg: '' });
  });

  it.each([false, true])('a logo (night: %s) is shrunk to fit 800x100, served, announced, audited and in register', async (night) => {
    const prefix = night ? 'night_logo' : 'logo';
    const other = night ? 'logo' : 'night_logo';
    const before = await realmRow();
    const image = await png(1600, 100);
    const { result: res, deliveries } = await captureEvents(t, () => uploadLogo(t.cast.admin, night, [image]));
    expect(res).toEqual({ status: 200, body: { result: 'success', msg: '' } });
    const after = await realmRow();
    expect([after[`${prefix}_source`], after[`${prefix}_version`]]).toEqual(['U', before[`${prefix}_version`] + 1]);
    // The other logo and the icon are untouched.
    expect([after[`${other}_source`], after[`${other}_version`], after.icon_version]).toEqual([
      before[`${other}_source`],
      before[`${other}_version`],
      before.icon_version,
    ]);
    const { state } = await register(t, t.cast.guest);
    const url = state[`realm_${prefix}_url`] as string;
    expect(url).toMatch(new RegExp(`^/user_avatars/${t.realmId}/[0-9a-f]{40}\\.png\\?version=${after[`${prefix}_version`]}$`));
    expect(state[`realm_${prefix}_source`]).toBe('U');
    expect(state[`realm_${other}_url`]).toBe(defaultIcon);
    expect(deliveries.map((d) => d.event)).toEqual([
      { type: 'realm', op: 'update_dict', property: prefix, data: { [`${prefix}_url`]: url, [`${prefix}_source`]: 'U' } },
    ]);
    expect(deliveries[0]!.userIds).toEqual(expect.arrayContaining([t.cast.guest.id, t.cast.owner.id]));
    expect(deliveries[0]!.userIds).not.toContain(t.cast.deactivated.id);
    expect((await logoAudits()).at(-1)).toBe(t.cast.admin.id);
    const served = await serve(url);
    expect(served.status).toBe(200);
    const meta = await sharp(served.body as Buffer).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 800, 50]);

    // A small logo is not enlarged.
    await uploadLogo(t.cast.owner, night, [await png(40, 20)]);
    const small = (await register(t, t.cast.member)).state[`realm_${prefix}_url`] as string;
    const smallMeta = await sharp((await serve(small)).body as Buffer).metadata();
    expect([smallMeta.width, smallMeta.height]).toEqual([40, 20]);
    expect((await serve(url)).status).toBe(404);

    // DELETE: back to the default, with its event and audit row.
    const { result: gone, deliveries: goneEvents } = await captureEvents(t, () => removeLogo('owner', night));
    expect(gone.body).toEqual({ result: 'success', msg: '' });
    expect(goneEvents.map((d) => d.event)).toEqual([
      { type: 'realm', op: 'update_dict', property: prefix, data: { [`${prefix}_url`]: defaultIcon, [`${prefix}_source`]: 'D' } },
    ]);
    expect((await logoAudits()).at(-1)).toBe(t.cast.owner.id);
    expect((await register(t, t.cast.member)).state).toMatchObject({
      [`realm_${prefix}_url`]: defaultIcon,
      [`realm_${prefix}_source`]: 'D',
    });
  });

  /** A logo upload with text fields beside the file, as the Zulip web app sends `night`. */
  async function uploadLogoWithFields(user: UserRow, fields: Record<string, string>, query = '') {
    let req = request(t.app).post(`/api/v1/realm/logo${query}`).auth(user.email, user.api_key);
    for (const [name, value] of Object.entries(fields)) req = req.field(name, value);
    req = req.attach('file', await png(200, 50), { filename: 'logo.png', contentType: 'image/png' });
    const res = await req;
    new ContractChecker(t.spec).check('post', '/api/v1/realm/logo', res.status, res.body);
    return { status: res.status, body: res.body as Record<string, any> };
  }

  it('reads night from a text field beside the file (the web app sends it so); the body wins over the query string', async () => {
    const before = await realmRow();
    // A JSON-encoded boolean in the multipart body.
    expect((await uploadLogoWithFields(t.cast.admin, { night: 'true' })).body).toEqual({ result: 'success', msg: '' });
    let after = await realmRow();
    expect([after.night_logo_version, after.logo_version]).toEqual([before.night_logo_version + 1, before.logo_version]);
    // Both places: the body's value is the one used, as Django's POST beats GET.
    expect((await uploadLogoWithFields(t.cast.admin, { night: 'false' }, '?night=true')).body).toEqual({ result: 'success', msg: '' });
    after = await realmRow();
    expect([after.night_logo_version, after.logo_version]).toEqual([before.night_logo_version + 1, before.logo_version + 1]);
    // A field the operation does not declare is reported, as for any request.
    expect((await uploadLogoWithFields(t.cast.admin, { night: 'true', colour: 'red' })).body).toEqual({
      result: 'success',
      msg: '',
      ignored_parameters_unsupported: ['colour'],
    });
    // A text field of the body is validated as any parameter: nothing is written.
    await expectRefused(() => uploadLogoWithFields(t.cast.admin, { night: 'maybe' }), 'night is not valid JSON');
    await expectRefused(() => uploadLogoWithFields(t.cast.admin, { night: '"yes"' }), 'night is not a boolean');
  });

  it('reports a text field beside the icon that the operation does not declare, and still takes the file', async () => {
    const res = await request(t.app)
      .post('/api/v1/realm/icon')
      .auth(t.cast.admin.email, t.cast.admin.api_key)
      .field('size', '"large"')
      .attach('file', await png(50, 50), { filename: 'icon.png', contentType: 'image/png' });
    new ContractChecker(t.spec).check('post', '/api/v1/realm/icon', res.status, res.body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: 'success', ignored_parameters_unsupported: ['size'] });
    expect((await realmRow()).icon_source).toBe('U');
  });

  it('refuses a logo without night, without one file, over 5 MiB or not an image, writing nothing', async () => {
    const image = await png(10, 10);
    // Zulip checks the role before the parameters.
    await expectRefused(
      () => uploadLogo(t.cast.member, undefined, [image]),
      'Must be an organization administrator',
      'UNAUTHORIZED_PRINCIPAL',
    );
    await expectRefused(() => uploadLogo(t.cast.admin, undefined, [image]), "Missing 'night' argument", 'REQUEST_VARIABLE_MISSING', {
      var_name: 'night',
    });
    await expectRefused(() => uploadLogo(t.cast.admin, false, []), 'You must upload exactly one logo.');
    await expectRefused(() => uploadLogo(t.cast.admin, true, [image, image]), 'You must upload exactly one logo.');
    await expectRefused(
      () => uploadLogo(t.cast.admin, false, [Buffer.alloc(5 * 1024 * 1024 + 1, 1)]),
      'Uploaded file is larger than the allowed limit of 5 MiB',
    );
    await expectRefused(
      () => uploadLogo(t.cast.admin, false, [Buffer.from('GIF89a but not really')]),
      'Could not decode image; did you upload an image file?',
    );
    await expectRefused(() => t.api.delete('/realm/logo', t.cast.admin, {}), "Missing 'night' argument", 'REQUEST_VARIABLE_MISSING', {
      var_name: 'night',
    });
  });

  // ---- GET /realm/logo: Zulip's get_logo_backend ----
  const getLogo = (user: UserRow | null, query: string) => getRedirect('/realm/logo', user, query);

  it('GET redirects every role to the logo in use, night or day, with the query string added as sent; needs night and credentials', async () => {
    await removeLogo('owner', false);
    await removeLogo('owner', true);
    // No logo uploaded: the default one the register response names, with the client's query after its own.
    for (const who of ['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as const) {
      const res = await getLogo(t.cast[who], '?night=false');
      expect([res.status, res.headers.location]).toEqual([302, `${defaultIcon}&night=false`]);
    }
    await uploadLogo(t.cast.admin, true, [await png(300, 60)]);
    const { state } = await register(t, t.cast.member);
    const night = state.realm_night_logo_url as string;
    expect(night).toMatch(/^\/user_avatars\/.+\?version=\d+$/);
    expect(state.realm_logo_url).toBe(defaultIcon);
    // night picks the dark-theme logo; the rest of the query string follows, raw.
    expect((await getLogo(t.cast.guest, '?night=true&x=a%20b')).headers.location).toBe(`${night}&night=true&x=a%20b`);
    expect((await getLogo(t.cast.guest, '?night=false')).headers.location).toBe(`${defaultIcon}&night=false`);
    expect((await serve(night)).status).toBe(200);
    // night is required and a boolean, as in Zulip (Json[bool] without a default).
    const missing = await getLogo(t.cast.member, '');
    expect([missing.status, missing.body]).toEqual([
      400,
      { result: 'error', msg: "Missing 'night' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'night' },
    ]);
    const notBoolean = await getLogo(t.cast.member, '?night=yes');
    expect([notBoolean.status, notBoolean.body]).toEqual([400, { result: 'error', msg: 'night is not a boolean', code: 'BAD_REQUEST' }]);
    const anonymous = await getLogo(null, '?night=false');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.location).toBeUndefined();
  });
});
