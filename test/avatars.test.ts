import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import request from 'supertest';
import type { UserRow } from '../src/queries/rows';
import { ContractChecker } from './support/contract';
import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import { startTestServer, TestServer } from './support/server';
import { filesOnDisk, tempDataDir, type FilePart } from './support/uploads';

/** A real image made here: `width`x`height`, in the format asked for. */
async function image(width: number, height: number, format: 'png' | 'jpeg'): Promise<Buffer> {
  const img = sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 90 } } });
  return format === 'png' ? img.png().toBuffer() : img.jpeg().toBuffer();
}

const md5 = (s: string) => crypto.createHash('md5').update(s).digest('hex');
const md5Gravatar = /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=\d+$/;

eachDatabase('avatars', (dialect) => {
  let t: TestServer;
  const data = tempDataDir();
  let contract: ContractChecker;
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { dataDir: data.dir });
    contract = new ContractChecker(t.spec);
  });
  afterAll(async () => {
    await t.close();
    data.remove();
  });

  async function upload(user: UserRow | null, files: FilePart[]): Promise<{ status: number; body: Record<string, any> }> {
    let req = request(t.app).post('/api/v1/users/me/avatar');
    if (user) req = req.auth(user.email, user.api_key);
    files.forEach((f, i) => {
      const content = typeof f.content === 'string' ? Buffer.from(f.content) : f.content;
      req = req.attach(f.field ?? `file${i}`, content, { filename: f.name, contentType: f.type ?? 'application/octet-stream' });
    });
    if (files.length === 0) req = req.field('nothing', '');
    const res = await req;
    contract.check('post', '/api/v1/users/me/avatar', res.status, res.body);
    return { status: res.status, body: res.body as Record<string, any> };
  }

  const fresh = async (user: UserRow) => (await t.ctx.db('users').where({ id: user.id }).first()) as Record<string, any>;

  it('stores an uploaded JPEG as 100x100 and 500x500 PNGs, served publicly at a versioned URL, and tells everyone', async () => {
    const { member, owner } = t.cast;
    const before = await fresh(member);
    const watcher = await register(t, owner);
    const res = await upload(member, [{ name: 'me.jpg', content: await image(640, 480, 'jpeg'), type: 'image/jpeg' }]);
    expect(res.status).toBe(200);
    const url: string = res.body.avatar_url;
    const version = Number(before.avatar_version) + 1;
    expect(url).toMatch(new RegExp(`^/user_avatars/${t.realmId}/[0-9a-f]{40}\\.png\\?version=${version}$`));
    const row = await fresh(member);
    expect(row.avatar_source).toBe('U');
    expect(Number(row.avatar_version)).toBe(version);

    // Both sizes, read back from what the URL serves, without credentials.
    const small = await request(t.app).get(url).buffer(true);
    expect(small.status).toBe(200);
    expect(small.headers['content-type']).toBe('image/png');
    expect(small.headers['cache-control']).toContain('max-age=');
    expect(await sharp(small.body as Buffer).metadata()).toMatchObject({ format: 'png', width: 100, height: 100 });
    const mediumUrl = url.replace('.png?', '-medium.png?');
    const medium = await request(t.app).get(mediumUrl).buffer(true);
    expect(await sharp(medium.body as Buffer).metadata()).toMatchObject({ format: 'png', width: 500, height: 500 });

    const events = (await pending(t, watcher)).filter((e) => e.type === 'realm_user');
    expect(events).toEqual([
      {
        type: 'realm_user',
        op: 'update',
        id: expect.any(Number),
        person: { user_id: member.id, avatar_source: 'U', avatar_url: url, avatar_url_medium: mediumUrl, avatar_version: version },
      },
    ]);

    // Everywhere a user object carries the avatar: GET /users/me, GET /users/{id} (even with client_gravatar), register.
    expect((await t.api.get('/users/me', member)).body.avatar_url).toBe(url);
    expect((await t.api.get(`/users/${member.id}`, owner, { client_gravatar: true })).body.user.avatar_url).toBe(url);
    const own = await register(t, member);
    expect(own.state.avatar_url_medium).toBe(mediumUrl);
  });

  it('gives each upload a new unguessable name and drops the previous files', async () => {
    const { moderator } = t.cast;
    const first = await upload(moderator, [{ name: 'a.png', content: await image(50, 50, 'png'), type: 'image/png' }]);
    const second = await upload(moderator, [{ name: 'b.png', content: await image(30, 60, 'png'), type: 'image/png' }]);
    expect(second.status).toBe(200);
    const name = (u: string) => u.slice(0, u.indexOf('?'));
    expect(name(second.body.avatar_url)).not.toBe(name(first.body.avatar_url));
    expect((await request(t.app).get(first.body.avatar_url)).status).toBe(404);
    // A small image is scaled up to the full size.
    const served = await request(t.app).get(second.body.avatar_url).buffer(true);
    expect(await sharp(served.body as Buffer).metadata()).toMatchObject({ width: 100, height: 100 });
  });

  it('sends the uploaded avatar as the sender avatar of messages', async () => {
    const { member, owner } = t.cast;
    const res = await t.api.post('/messages', member, { type: 'direct', to: JSON.stringify([owner.id]), content: 'hi' });
    expect(res.status).toBe(200);
    const got = await t.api.get('/messages', owner, { anchor: 'newest', num_before: 1, num_after: 0, client_gravatar: true });
    const row = await fresh(member);
    expect(got.body.messages[0].avatar_url).toBe(`/user_avatars/${t.realmId}/${row.avatar_hash}.png?version=${row.avatar_version}`);
  });

  it('refuses no file, two files, a file over 5 MiB and a file that is not an image, changing nothing', async () => {
    const { admin } = t.cast;
    const before = await fresh(admin);
    const files = filesOnDisk(data.dir);
    const png = await image(20, 20, 'png');
    const refusal = (msg: string) => ({ status: 400, body: { result: 'error', msg, code: 'BAD_REQUEST' } });
    expect(await upload(admin, [])).toEqual(refusal('You must upload exactly one avatar.'));
    expect(
      await upload(admin, [
        { name: 'a.png', content: png },
        { name: 'b.png', content: png },
      ]),
    ).toEqual(refusal('You must upload exactly one avatar.'));
    const big = Buffer.alloc(5 * 1024 * 1024 + 1, 1);
    expect(await upload(admin, [{ name: 'big.png', content: big }])).toEqual(
      refusal('Uploaded file is larger than the allowed limit of 5 MiB'),
    );
    expect(await upload(admin, [{ name: 'notes.png', content: 'not an image at all', type: 'image/png' }])).toEqual(
      refusal('Could not decode image; did you upload an image file?'),
    );
    const after = await fresh(admin);
    expect([after.avatar_source, Number(after.avatar_version)]).toEqual([before.avatar_source, Number(before.avatar_version)]);
    expect(filesOnDisk(data.dir).filter((f) => !f.startsWith('.incoming'))).toEqual(files.filter((f) => !f.startsWith('.incoming')));
    expect((await upload(null, [{ name: 'a.png', content: png }])).status).toBe(401);
  });

  it('DELETE goes back to Gravatar with a new version and the same event', async () => {
    const { member, owner } = t.cast;
    const before = await fresh(member);
    expect(before.avatar_source).toBe('U');
    const watcher = await register(t, owner);
    const res = await t.api.delete('/users/me/avatar', member);
    expect(res.status).toBe(200);
    const version = Number(before.avatar_version) + 1;
    expect(res.body.avatar_url).toMatch(md5Gravatar);
    expect(res.body.avatar_url).toContain(`&version=${version}`);
    const row = await fresh(member);
    expect([row.avatar_source, Number(row.avatar_version), row.avatar_hash]).toEqual(['G', version, null]);
    const events = (await pending(t, watcher)).filter((e) => e.type === 'realm_user');
    expect(events.map((e) => e.person)).toEqual([
      {
        user_id: member.id,
        avatar_source: 'G',
        avatar_url: res.body.avatar_url,
        avatar_url_medium: res.body.avatar_url.replace('&version', '&s=500&version'),
        avatar_version: version,
      },
    ]);
    // The uploaded files are gone; with client_gravatar a Gravatar avatar is null again.
    expect(filesOnDisk(data.dir).filter((f) => f.startsWith(`avatars${path.sep}${t.realmId}${path.sep}${before.avatar_hash}`))).toEqual([]);
    expect((await t.api.get(`/users/${member.id}`, owner, { client_gravatar: true })).body.user.avatar_url).toBeNull();
  });

  it('serves only avatar files under /user_avatars, without path tricks', async () => {
    for (const p of [
      '/user_avatars/1/..%2F..%2Fsecret',
      '/user_avatars/../uploads',
      `/user_avatars/${t.realmId}/abc.png`,
      '/user_avatars/x',
    ]) {
      expect((await request(t.app).get(p)).status).toBe(404);
    }
    fs.mkdirSync(path.join(data.dir, 'uploads', 'avatars', String(t.realmId)), { recursive: true });
    const original = `${'a'.repeat(40)}.original`;
    fs.writeFileSync(path.join(data.dir, 'uploads', 'avatars', String(t.realmId), original), 'x');
    expect((await request(t.app).get(`/user_avatars/${t.realmId}/${original}`)).status).toBe(404);
  });

  describe('GET /avatar/{user_id_or_email}', () => {
    const get = async (user: UserRow | null, target: string, query = '') => {
      let req = request(t.app).get(`/api/v1/avatar/${encodeURIComponent(target)}${query}`);
      if (user) req = req.auth(user.email, user.api_key);
      const res = await req.redirects(0);
      contract.check('get', `/api/v1/avatar/${target}`, res.status, res.body);
      return res;
    };

    it('redirects to the uploaded avatar, by ID or email, medium on request, keeping the query string', async () => {
      const { guest, owner } = t.cast;
      const up = await upload(guest, [{ name: 'g.png', content: await image(10, 10, 'png'), type: 'image/png' }]);
      const byId = await get(owner, String(guest.id));
      expect([byId.status, byId.headers.location]).toEqual([302, up.body.avatar_url]);
      expect((await get(owner, guest.email)).headers.location).toBe(up.body.avatar_url);
      const medium = await get(owner, String(guest.id), '?medium=true');
      expect(medium.headers.location).toBe(up.body.avatar_url.replace('.png?', '-medium.png?') + '&medium=true');
    });

    it('redirects to a Gravatar URL for Gravatar users and for strings that name nobody', async () => {
      const { owner, bot } = t.cast;
      expect((await get(owner, String(bot.id))).headers.location).toMatch(md5Gravatar);
      const nobody = await get(owner, 'nobody@example.com');
      expect(nobody.status).toBe(302);
      // The Gravatar URL of the string itself, at version 1.
      expect(nobody.headers.location).toBe(`https://secure.gravatar.com/avatar/${md5('nobody@example.com')}?d=identicon&version=1`);
    });

    it('needs credentials', async () => {
      expect((await get(null, String(t.cast.owner.id))).status).toBe(401);
    });

    it('has a /medium path form, and both are served at the site root too, where clients build them', async () => {
      const { member, owner } = t.cast;
      const up = await upload(member, [{ name: 'm.png', content: await image(10, 10, 'png'), type: 'image/png' }]);
      const mediumUrl = up.body.avatar_url.replace('.png?', '-medium.png?');
      const at = async (path: string, user: UserRow | null = owner) => {
        let req = request(t.app).get(path);
        if (user) req = req.auth(user.email, user.api_key);
        const res = await req.redirects(0);
        return [res.status, res.headers.location] as const;
      };
      const pathMedium = await request(t.app).get(`/api/v1/avatar/${member.id}/medium`).auth(owner.email, owner.api_key).redirects(0);
      contract.check('get', `/api/v1/avatar/${member.id}/medium`, pathMedium.status, pathMedium.body);
      expect([pathMedium.status, pathMedium.headers.location]).toEqual([302, mediumUrl]);
      expect(await at(`/avatar/${member.id}`)).toEqual([302, up.body.avatar_url]);
      expect(await at(`/avatar/${encodeURIComponent(member.email)}?s=50`)).toEqual([302, `${up.body.avatar_url}&s=50`]);
      expect(await at(`/avatar/${member.id}/medium`)).toEqual([302, mediumUrl]);
      const anonymous = await request(t.app).get(`/avatar/${member.id}`).redirects(0);
      expect([anonymous.status, anonymous.body.code]).toEqual([401, 'UNAUTHORIZED']);
    });
  });
});
