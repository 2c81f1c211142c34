/**
 * The request's caller (ADR 0035): authentication reads the caller's
 * memberships with the caller (the caller cache), and every operation that
 * checks permissions with them takes them from the `Caller` in its call. None
 * reads them again: `loadViewer` now always queries, so a handler, action or
 * access function that went back to it for the caller would add the
 * memberships statement, which these requests must never run.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import sharp from 'sharp';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, statementsOf, TestServer } from './support/server';
import { tempDataDir } from './support/uploads';

/** getViewerMemberships' statement (src/queries/groups.ts), and only it. */
const MEMBERSHIPS = /SELECT 1 AS kind, id FROM g\b/i;

/** Runs the request twice (the first may fill caches) and returns the second's statements. */
async function statementsOfWarm<T>(t: TestServer, work: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  await work();
  const sql: string[] = [];
  const onQuery = (q: { sql: string }) => sql.push(...statementsOf(q.sql));
  t.ctx.db.on('query', onQuery);
  try {
    return { result: await work(), sql };
  } finally {
    t.ctx.db.removeListener('query', onQuery);
  }
}

eachDatabase('the request scope', (dialect) => {
  let t: TestServer;
  let channelId: number;
  const data = tempDataDir();
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { dataDir: data.dir });
    fs.mkdirSync(path.join(data.dir, 'uploads'), { recursive: true });
    const { owner, member, guest } = t.cast;
    channelId = (await createChannel(t, 'scope', [owner, member, guest])).id;
  });
  afterAll(async () => {
    await t.close();
    data.remove();
  });

  const member = () => t.cast.member;
  const cases: Array<[string, () => Promise<{ status: number }>]> = [
    ['GET /users/me/subscriptions', () => t.api.get('/users/me/subscriptions', member())],
    ['GET /streams', () => t.api.get('/streams', member())],
    ['POST /messages', () => t.api.post('/messages', member(), { type: 'channel', to: channelId, topic: 't', content: 'hi' })],
    ['GET /messages', () => t.api.get('/messages', member(), { anchor: 'newest', num_before: 5, num_after: 0 })],
    ['POST /typing', () => t.api.post('/typing', member(), { type: 'channel', stream_id: channelId, topic: 't', op: 'start' })],
    ['POST /user_topics', () => t.api.post('/user_topics', member(), { stream_id: channelId, topic: 't', visibility_policy: 1 })],
    [
      'PATCH /users/me/subscriptions/muted_topics',
      () => t.api.patch('/users/me/subscriptions/muted_topics', member(), { stream_id: channelId, topic: 'u', op: 'add' }),
    ],
    ['POST /users/me/presence', () => t.api.post('/users/me/presence', member(), { status: 'active' })],
    ['GET /realm/presence', () => t.api.get('/realm/presence', member())],
    ['GET /users/{id}/presence', () => t.api.get(`/users/${t.cast.member.id}/presence`, member())],
    ['GET /users/{id}/status', () => t.api.get(`/users/${t.cast.owner.id}/status`, member())],
    ['POST /register', () => t.api.post('/register', member(), {})],
  ];

  it.each(cases)('%s takes the caller from its call: no memberships statement', async (_name, work) => {
    const { result, sql } = await statementsOfWarm(t, work);
    expect(result.status).toBe(200);
    expect(sql.length).toBeGreaterThan(0);
    expect(sql.filter((s) => MEMBERSHIPS.test(s))).toEqual([]);
  });

  /** getRealmById's statement (src/queries/realms.ts): the organization row read again. */
  const REALM_ROW = /^select \* from [`"]?realms[`"]? where/i;
  const realmCases: Array<[string, () => Promise<{ status: number }>]> = [
    // POST /register is not here: it reads the organization after its queue exists, on purpose.
    ...cases.filter(([name]) => name !== 'POST /register'),
    ['GET /users', () => t.api.get('/users', member())],
    ['POST /messages/render', () => t.api.post('/messages/render', member(), { content: '**hi**' })],
  ];

  it.each(realmCases)('%s takes the organization from the Caller: no organization row read', async (_name, work) => {
    const { result, sql } = await statementsOfWarm(t, work);
    expect(result.status).toBe(200);
    expect(sql.filter((s) => REALM_ROW.test(s))).toEqual([]);
  });

  it('POST /realm/emoji/{name} checks its permission with the caller, no memberships statement', async () => {
    const image = await sharp({ create: { width: 20, height: 20, channels: 4, background: '#c81e1e' } })
      .png()
      .toBuffer();
    let n = 0;
    const { result, sql } = await statementsOfWarm(t, () =>
      request(t.app)
        .post(`/api/v1/realm/emoji/scope_${n++}`)
        .auth(t.cast.member.email, t.cast.member.api_key)
        .attach('f', image, { filename: 'e.png', contentType: 'image/png' }),
    );
    expect(result.status).toBe(200);
    expect(sql.filter((s) => MEMBERSHIPS.test(s))).toEqual([]);
  });

  it("the Caller's memberships are the current ones: a change reaches the caller's next request", async () => {
    const name = 'scope-private';
    const hidden = (await createChannel(t, name, [t.cast.owner], { inviteOnly: true })).id;
    const see = () => t.api.get(`/streams/${hidden}`, member());
    expect((await see()).status).toBe(400);
    const added = await t.api.post('/users/me/subscriptions', t.cast.owner, {
      subscriptions: [{ name }],
      principals: [t.cast.member.id],
      send_new_subscription_messages: false,
    });
    expect(added.status).toBe(200);
    expect((await see()).status).toBe(200);
  });
});
