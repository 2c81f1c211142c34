import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import sharp from 'sharp';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { pending, register, sendToChannel, stopEventsServer, startEventsServer } from './support/events';
import { ContractChecker } from './support/contract';
import type { TestServer } from './support/server';
import { filesOnDisk, tempDataDir } from './support/uploads';

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: { r: 200, g: 30, b: 30, alpha: 1 } } })
    .png()
    .toBuffer();

/** A two-frame animated GIF, 100×100: red then blue. */
async function animatedGif(): Promise<Buffer> {
  const frame = (background: string) =>
    sharp({ create: { width: 100, height: 100, channels: 4, background } })
      .png()
      .toBuffer();
  return sharp([await frame('#ff0000'), await frame('#0000ff')], { join: { animated: true } })
    .gif()
    .toBuffer();
}

eachDatabase('custom emoji', (dialect) => {
  let t: TestServer;
  const data = tempDataDir();
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect, {}));
    // The events world has no data directory; the emoji files need one.
    (t.ctx as { storage: unknown }).storage = new (await import('../src/storage/files')).LocalFileStore(path.join(data.dir, 'uploads'));
  });
  afterAll(async () => {
    await stopEventsServer(t);
    data.remove();
  });

  async function upload(user: UserRow, name: string, files: Array<{ content: Buffer; type: string; filename?: string }>) {
    const url = `/api/v1/realm/emoji/${encodeURIComponent(name)}`;
    let req = request(t.app).post(url).auth(user.email, user.api_key);
    files.forEach((f, i) => {
      req = req.attach(`f${i}`, f.content, { filename: f.filename ?? 'emoji.bin', contentType: f.type });
    });
    if (files.length === 0) req = req.field('nothing', '');
    const res = await req;
    new ContractChecker(t.spec).check('post', url, res.status, res.body);
    return { status: res.status, body: res.body as Record<string, any> };
  }
  const list = async (user: UserRow) => (await t.api.get('/realm/emoji', user)).body.emoji as Record<string, Record<string, any>>;
  const byName = async (name: string) => Object.values(await list(t.cast.member)).find((e) => e.name === name && !e.deactivated);
  const error = (msg: string, code = 'BAD_REQUEST') => ({ status: 400, body: { result: 'error', msg, code } });
  const serve = (url: string) =>
    request(t.app)
      .get(url)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });

  it('stores a PNG shrunk to fit 64×64, serves it without credentials and lists it', async () => {
    const res = await upload(t.cast.member, 'parley_red', [{ content: await png(200, 100), type: 'image/png', filename: 'red.png' }]);
    expect(res).toEqual({ status: 200, body: { result: 'success', msg: '' } });
    const emoji = await byName('parley_red');
    expect(emoji).toMatchObject({ name: 'parley_red', deactivated: false, author_id: t.cast.member.id, still_url: null });
    expect(emoji!.source_url).toMatch(new RegExp(`^/user_avatars/${t.realmId}/emoji/images/[0-9a-f]{16}\\.png$`));
    const served = await serve(emoji!.source_url);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    const meta = await sharp(served.body as Buffer).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 64, 32]);
    // The original is kept beside it, but never served.
    const original = emoji!.source_url + '.original';
    expect((await serve(original)).status).toBe(404);
  });

  it('takes the type of a file part sent without Content-Type from its name, as the Python bindings send it', async () => {
    // requests (the `zulip` package) writes a file part with no Content-Type header at all.
    const boundary = 'parley-no-type';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="f0"; filename="img.jpg"\r\n\r\n`),
      await sharp({ create: { width: 40, height: 40, channels: 3, background: '#00ff00' } })
        .jpeg()
        .toBuffer(),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const url = '/api/v1/realm/emoji/untyped_green';
    const res = await request(t.app)
      .post(url)
      .auth(t.cast.member.email, t.cast.member.api_key)
      .set('Content-Type', `multipart/form-data; boundary=${boundary}`)
      .send(body);
    new ContractChecker(t.spec).check('post', url, res.status, res.body);
    expect([res.status, res.body]).toEqual([200, { result: 'success', msg: '' }]);
    const emoji = (await byName('untyped_green'))!;
    expect(emoji.source_url).toMatch(/\.jpg$/);
    expect((await serve(emoji.source_url)).headers['content-type']).toBe('image/jpeg');
  });

  it('keeps a GIF animated and writes a still PNG of its first frame', async () => {
    expect((await upload(t.cast.member, 'blinker', [{ content: await animatedGif(), type: 'image/gif' }])).status).toBe(200);
    const emoji = (await byName('blinker'))!;
    expect(emoji.source_url).toMatch(/\.gif$/);
    expect(emoji.still_url).toBe(emoji.source_url.replace('/images/', '/images/still/').replace(/\.gif$/, '.png'));
    const animated = await serve(emoji.source_url);
    expect(animated.headers['content-type']).toBe('image/gif');
    const meta = await sharp(animated.body as Buffer, { animated: true }).metadata();
    expect([meta.format, meta.pages, meta.width, meta.pageHeight]).toEqual(['gif', 2, 64, 64]);
    const still = await serve(emoji.still_url);
    expect(still.headers['content-type']).toBe('image/png');
    const stillMeta = await sharp(still.body as Buffer).metadata();
    expect([stillMeta.format, stillMeta.pages ?? 1, stillMeta.width, stillMeta.height]).toEqual(['png', 1, 64, 64]);
    const { data: pixel } = await sharp(still.body as Buffer)
      .raw()
      .extract({ left: 32, top: 32, width: 1, height: 1 })
      .toBuffer({ resolveWithObject: true });
    expect([pixel[0], pixel[2]]).toEqual([255, 0]); // the red first frame
  });

  it('refuses paths outside the emoji files', async () => {
    for (const url of [
      `/user_avatars/${t.realmId}/emoji/images/..%2F..%2Fsecret`,
      `/user_avatars/${t.realmId}/emoji/images/still/../x.png`,
      `/user_avatars/${t.realmId}/emoji/images/0123456789abcdef.png`,
      `/user_avatars/0/emoji/images/0123456789abcdef.png`,
    ]) {
      expect((await serve(url)).status).toBe(404);
    }
  });

  it('refuses every bad name in Zulip words, trimming and turning spaces into underscores first', async () => {
    const file = [{ content: await png(10, 10), type: 'image/png' }];
    expect(await upload(t.cast.member, '   ', file)).toEqual(error('Emoji name is missing'));
    expect(await upload(t.cast.member, 'Party', file)).toEqual(
      error('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.'),
    );
    expect(await upload(t.cast.member, 'party!', file)).toEqual(
      error('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.'),
    );
    expect(await upload(t.cast.member, 'party_', file)).toEqual(error('Emoji names must end with either a letter or digit.'));
    expect(await upload(t.cast.member, 'a'.repeat(61), file)).toEqual(error('Emoji name is too long (limit: 60 characters).'));
    expect(await upload(t.cast.member, 'parley_red', file)).toEqual(error('A custom emoji with this name already exists.'));
    expect(await upload(t.cast.member, 'smile', file)).toEqual(error('Only administrators can override default emoji.'));
    expect((await upload(t.cast.admin, 'smile', file)).status).toBe(200);
    expect((await upload(t.cast.member, ' two words ', file)).status).toBe(200);
    expect(await byName('two_words')).toBeDefined();
  });

  it('refuses no file, a file over 5 MiB and what is not an image, storing nothing', async () => {
    const before = filesOnDisk(data.dir);
    expect(await upload(t.cast.member, 'nofile', [])).toEqual(error('You must upload exactly one file.'));
    const big = Buffer.alloc(5 * 1024 * 1024 + 1, 1);
    expect(await upload(t.cast.member, 'big', [{ content: big, type: 'image/png' }])).toEqual(
      error('Uploaded file is larger than the allowed limit of 5 MiB'),
    );
    expect(await upload(t.cast.member, 'text', [{ content: Buffer.from('hello'), type: 'text/plain' }])).toEqual(
      error('Invalid image format', 'BAD_IMAGE'),
    );
    expect(await upload(t.cast.member, 'fake', [{ content: Buffer.from('not a png at all'), type: 'image/png' }])).toEqual(
      error('Could not decode image; did you upload an image file?', 'BAD_IMAGE'),
    );
    expect(filesOnDisk(data.dir).filter((f) => !f.startsWith('.incoming'))).toEqual(before.filter((f) => !f.startsWith('.incoming')));
    for (const name of ['nofile', 'big', 'text', 'fake']) expect(await byName(name)).toBeUndefined();
  });

  it('follows can_add_custom_emoji_group: guests not by default, members not once only administrators may', async () => {
    const file = [{ content: await png(10, 10), type: 'image/png' }];
    expect(await upload(t.cast.guest, 'guest_one', file)).toEqual(error('Insufficient permission'));
    const admins = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:administrators' }).first('id');
    const previous = await t.ctx.db('realms').where({ id: t.realmId }).first('can_add_custom_emoji_group');
    await t.ctx.db('realms').where({ id: t.realmId }).update({ can_add_custom_emoji_group: admins!.id });
    try {
      expect(await upload(t.cast.member, 'member_one', file)).toEqual(error('Insufficient permission'));
      expect((await upload(t.cast.admin, 'admin_one', file)).status).toBe(200);
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update(previous!);
    }
  });

  it('deactivates for the author or an administrator, keeps the row and frees the name', async () => {
    const file = [{ content: await png(10, 10), type: 'image/png' }];
    await upload(t.cast.member, 'doomed', file);
    await upload(t.cast.member, 'doomed2', file);
    const doomed = (await byName('doomed'))!;
    expect((await t.api.delete('/realm/emoji/doomed', t.cast.moderator)).body.msg).toBe(
      'Must be an organization administrator or emoji author',
    );
    expect(await t.api.delete('/realm/emoji/nothing_here', t.cast.member)).toMatchObject(error("Emoji 'nothing_here' does not exist"));
    expect((await t.api.delete('/realm/emoji/doomed', t.cast.member)).status).toBe(200);
    expect((await t.api.delete('/realm/emoji/doomed2', t.cast.admin)).status).toBe(200);
    expect((await list(t.cast.member))[doomed.id]).toMatchObject({ name: 'doomed', deactivated: true });
    expect(await t.api.delete('/realm/emoji/doomed', t.cast.member)).toMatchObject(error("Emoji 'doomed' does not exist"));
    // Still served: old messages show it.
    expect((await serve(doomed.source_url)).status).toBe(200);
    // The name is free again: a new emoji with a new id.
    expect((await upload(t.cast.member, 'doomed', file)).status).toBe(200);
    expect((await byName('doomed'))!.id).not.toBe(doomed.id);
  });

  it('tells every user of the organization the whole map on add and on deactivate', async () => {
    const owner = await register(t, t.cast.owner, { event_types: ['realm_emoji'] });
    const guest = await register(t, t.cast.guest, { event_types: ['realm_emoji'] });
    await upload(t.cast.member, 'announced', [{ content: await png(10, 10), type: 'image/png' }]);
    const everything = await list(t.cast.member);
    for (const c of [owner, guest])
      expect(await pending(t, c)).toEqual([expect.objectContaining({ type: 'realm_emoji', op: 'update', realm_emoji: everything })]);
    await t.api.delete('/realm/emoji/announced', t.cast.member);
    const after = await list(t.cast.member);
    expect(Object.values(after).find((e) => e.name === 'announced')!.deactivated).toBe(true);
    expect(await pending(t, owner)).toEqual([expect.objectContaining({ type: 'realm_emoji', op: 'update', realm_emoji: after })]);
    // And POST /register sends the same map.
    expect((await register(t, t.cast.member, { fetch_event_types: ['realm_emoji'] })).state.realm_emoji).toEqual(after);
  });

  it('renders :name: of an active custom emoji as its image, in one lookup for all of them', async () => {
    const party = (await byName('parley_red'))!;
    const blinker = (await byName('blinker'))!;
    const emojiQueries: string[] = [];
    const onQuery = (q: { sql: string }) => {
      if (q.sql.includes('realm_emoji')) emojiQueries.push(q.sql);
    };
    t.ctx.db.on('query', onQuery);
    const id = await sendToChannel(t, t.cast.member, 'general', 'emoji', 'hi :parley_red: :blinker::doomed: :smile:').finally(() =>
      t.ctx.db.removeListener('query', onQuery),
    );
    const row = await t.ctx.db('messages').where({ id }).first('rendered_content');
    expect(row!.rendered_content).toBe(
      `<p>hi <img alt=":parley_red:" class="emoji" src="${party.source_url}" title="parley red"> ` +
        `<img alt=":blinker:" class="emoji" src="${blinker.source_url}" title="blinker">` +
        `<img alt=":doomed:" class="emoji" src="${(await byName('doomed'))!.source_url}" title="doomed"> ` +
        `<img alt=":smile:" class="emoji" src="${(await byName('smile'))!.source_url}" title="smile"></p>`,
    );
    expect(emojiQueries).toHaveLength(1);
    // A deactivated emoji is text again (or its Unicode namesake).
    await t.api.delete('/realm/emoji/smile', t.cast.admin);
    const later = await sendToChannel(t, t.cast.member, 'general', 'emoji', ':smile: :announced:');
    const html = (await t.ctx.db('messages').where({ id: later }).first('rendered_content'))!.rendered_content as string;
    expect(html).toContain('class="emoji emoji-1f604"');
    expect(html).toContain(':announced:</p>');
    expect(html).not.toContain('<img');
  });

  it('lets reactions use an active custom emoji', async () => {
    const id = await sendToChannel(t, t.cast.member, 'general', 'react', 'hello');
    const emoji = (await byName('parley_red'))!;
    const res = await t.api.post(`/messages/${id}/reactions`, t.cast.guest, { emoji_name: 'parley_red' });
    expect(res.status).toBe(200);
    const reaction = await t.ctx.db('reactions').where({ message_id: id }).first();
    expect(reaction).toMatchObject({ emoji_code: emoji.id, reaction_type: 'realm_emoji' });
  });

  it('keeps the served files on disk under the emoji area only', () => {
    const files = filesOnDisk(data.dir).filter((f) => !f.startsWith('.incoming'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(f.startsWith(`emoji${path.sep}${t.realmId}${path.sep}`)).toBe(true);
    expect(fs.existsSync(path.join(data.dir, 'uploads', 'emoji'))).toBe(true);
  });
});
