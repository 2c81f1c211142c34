import request from 'supertest';
import { getUserById } from '../src/queries/users';
import { normalizeTopic } from '../src/domain/topics';
import { INTEGRATIONS } from '../src/integrations';
import { lastNoticeForTests } from '../src/actions/bot-owner-notices';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { ContractChecker } from './support/contract';
import { countQueries, createChannel, startTestServer, type TestServer } from './support/server';
import { expectedMessages, fixtureBody, integrationsWithFixtures, loadFixtures, type WebhookFixture } from './support/webhook-fixtures';

interface Sent {
  status: number;
  body: Record<string, any>;
}

eachDatabase('incoming webhooks', (dialect) => {
  let t: TestServer;
  let contract: ContractChecker;
  let bot: UserRow;
  let channelId: number;

  beforeAll(async () => {
    t = await startTestServer(dialect);
    contract = new ContractChecker(t.spec);
    // The bot a member makes for a service, as the apps make it (POST /bots, an incoming webhook bot).
    const made = await t.api.post('/bots', t.cast.member, { full_name: 'CI bot', short_name: 'ci', bot_type: 2 });
    expect(made.status).toBe(200);
    bot = (await getUserById(t.ctx.db, made.body.user_id as number))!;
    expect(bot).toMatchObject({ is_bot: true, bot_type: 2, bot_owner_id: t.cast.member.id, api_key: made.body.api_key });
    channelId = (await createChannel(t, 'webhooks', [t.cast.owner, t.cast.member])).id;
  });
  afterAll(async () => t.close());

  /** POSTs a request of a service: the body as given, checked against the contract. */
  async function send(
    integration: string,
    opts: {
      query?: Record<string, string>;
      headers?: Record<string, string>;
      body?: string;
      contentType?: string;
      auth?: 'query' | 'basic' | 'none';
      key?: string;
    } = {},
  ): Promise<Sent> {
    const query = new URLSearchParams(opts.query ?? {});
    if ((opts.auth ?? 'query') === 'query') query.set('api_key', opts.key ?? bot.api_key);
    const url = `/api/v1/external/${integration}?${query.toString()}`;
    let req = request(t.app).post(url);
    if (opts.auth === 'basic') req = req.auth(bot.email, opts.key ?? bot.api_key);
    for (const [k, v] of Object.entries(opts.headers ?? {})) req = req.set(k, v);
    req = req.set('Content-Type', opts.contentType ?? 'application/json');
    const res = await req.send(opts.body ?? '{}');
    const body = res.body as Record<string, any>;
    contract.check('post', url, res.status, body);
    return { status: res.status, body };
  }

  const lastId = async () => Number((await t.ctx.db('messages').max('id as id').first())?.id ?? 0);
  /** Messages stored after `after`, oldest first, as (topic, content, recipient). */
  async function messagesAfter(after: number) {
    const rows = await t.ctx
      .db('messages')
      .where('id', '>', after)
      .orderBy('id')
      .select('id', 'topic', 'content', 'sender_id', 'recipient_id');
    return rows.map((r) => ({
      id: Number(r.id),
      topic: String(r.topic),
      content: String(r.content),
      sender: Number(r.sender_id),
      recipient: Number(r.recipient_id),
    }));
  }
  const channelRecipient = async () => Number((await t.ctx.db('channels').where({ id: channelId }).first('recipient_id'))!.recipient_id);

  describe('every fixture of every integration, sent by an incoming-webhook bot', () => {
    const cases: Array<[string, WebhookFixture]> = integrationsWithFixtures().flatMap((name) =>
      loadFixtures(name).map((f) => [name, f] as [string, WebhookFixture]),
    );
    it('has fixtures', () => expect(cases.length).toBeGreaterThan(0));
    it.each(cases.map(([name, f]) => [`${name}/${f.name}`, name, f] as const))('%s', async (_label, name, f) => {
      const before = await lastId();
      const { body, contentType } = fixtureBody(f);
      const res = await send(name, { query: { stream: 'webhooks', ...(f.query ?? {}) }, headers: f.headers, body, contentType });
      expect(res.status).toBe(200);
      const want = expectedMessages(f);
      if (want === null) {
        expect(res.body).toMatchObject({
          result: 'error',
          code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE',
          event_type: (f.expect as { unsupported: string }).unsupported,
        });
        expect(await messagesAfter(before)).toEqual([]);
        return;
      }
      expect(res.body).toEqual({ result: 'success', msg: '' });
      const recipient = await channelRecipient();
      expect(
        (await messagesAfter(before)).map((m) => ({ topic: m.topic, content: m.content, sender: m.sender, recipient: m.recipient })),
      ).toEqual(want.map((m) => ({ topic: normalizeTopic(m.topic), content: m.content, sender: bot.id, recipient })));
    });
  });

  const hello = JSON.stringify({ hello: 'world' });
  const helloContent = '```json\n{\n  "hello": "world"\n}\n```';

  it("without a channel, sends a direct message to the bot's owner", async () => {
    const before = await lastId();
    expect((await send('json', { body: hello })).body).toEqual({ result: 'success', msg: '' });
    const [m] = await messagesAfter(before);
    expect(m).toMatchObject({ content: helloContent, sender: bot.id });
    const dm = await t.ctx.db('user_messages').where({ message_id: m!.id }).pluck('user_id');
    expect(dm.map(Number).sort()).toEqual([bot.id, t.cast.member.id].sort());
  });

  it('takes the channel by ID and the topic from the URL', async () => {
    const before = await lastId();
    await send('json', { query: { stream: String(channelId), topic: 'deploys' }, body: hello });
    expect(await messagesAfter(before)).toMatchObject([{ topic: 'deploys', content: helloContent, recipient: await channelRecipient() }]);
  });

  it('authenticates with HTTP Basic as well as api_key', async () => {
    const before = await lastId();
    expect((await send('json', { auth: 'basic', query: { stream: 'webhooks' }, body: hello })).status).toBe(200);
    expect(await messagesAfter(before)).toHaveLength(1);
  });

  it('refuses a request without a key, with a bad key, and answers 404 for an unknown integration first', async () => {
    expect((await send('json', { auth: 'none', body: hello })).body).toEqual({
      result: 'error',
      msg: "Missing 'api_key' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'api_key',
    });
    const bad = await send('json', { key: 'x'.repeat(32), body: hello });
    expect(bad.status).toBe(401);
    expect(bad.body.msg).toBe('Invalid API key');
    const unknown = await send('no-such-integration', { auth: 'none', body: hello });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ result: 'error', msg: 'Endpoint does not exist' });
    const get = await request(t.app).get(`/api/v1/external/json?api_key=${bot.api_key}`);
    expect(get.status).toBe(405);
  });

  it('refuses a deactivated account', async () => {
    const res = await send('json', { key: t.cast.deactivated.api_key, body: hello });
    expect(res.status).toBe(401);
    expect(res.body.msg).toBe('Account is deactivated');
  });

  it('answers a body that is not JSON with "Malformed JSON" and tells the owner', async () => {
    const before = await lastId();
    const res = await send('json', { query: { stream: 'webhooks' }, body: 'not json {' });
    expect(res).toEqual({ status: 400, body: { result: 'error', msg: 'Malformed JSON', code: 'BAD_REQUEST' } });
    const notices = await messagesAfter(before);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.content).toContain('JSON');
    const to = await t.ctx.db('user_messages').where({ message_id: notices[0]!.id }).pluck('user_id');
    expect(to.map(Number)).toContain(t.cast.member.id);
  });

  it('posts nothing to a channel that does not exist, answers success, and tells the owner once a minute', async () => {
    // The notice of the test above may still be within the minute: move past it.
    lastNoticeForTests.clear();
    const before = await lastId();
    expect((await send('json', { query: { stream: 'nowhere' }, body: hello })).body).toEqual({ result: 'success', msg: '' });
    expect((await send('json', { query: { stream: 'nowhere' }, body: hello })).body).toEqual({ result: 'success', msg: '' });
    const notices = await messagesAfter(before);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.content).toBe(
      `Your bot \`${bot.delivery_email}\` tried to send a message to channel #**nowhere**, but that channel does not exist. Click [here](#channels/new) to create it.`,
    );
  });

  it('filters events with only_events and exclude_events (shell wildcards), and refuses a malformed filter', async () => {
    // json passes no event type, so filters never drop it (as in Zulip).
    const before = await lastId();
    await send('json', { query: { stream: 'webhooks', only_events: '["push"]' }, body: hello });
    expect(await messagesAfter(before)).toHaveLength(1);
    expect((await send('json', { query: { stream: 'webhooks', only_events: '[1]' }, body: hello })).body.msg).toBe(
      'only_events[0] is not a string',
    );
    expect((await send('json', { query: { stream: 'webhooks', exclude_events: 'push' }, body: hello })).body.msg).toBe(
      'Argument "exclude_events" is not valid JSON.',
    );
  });

  it('refuses a body over 5 MiB with 413', async () => {
    const res = await send('json', { body: JSON.stringify({ big: 'x'.repeat(5 * 1024 * 1024) }) });
    expect(res.status).toBe(413);
  });

  it('sends as the bot with the checks of a send: a channel the bot may not post in is refused', async () => {
    await t.ctx
      .db('channels')
      .where({ id: channelId })
      .update({
        can_send_message_group: (await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:administrators' }).first('id'))!.id,
      });
    try {
      const res = await send('json', { query: { stream: 'webhooks' }, body: hello });
      expect(res.status).toBe(400);
      expect(res.body.msg).toMatch(/permission/);
    } finally {
      await t.ctx
        .db('channels')
        .where({ id: channelId })
        .update({
          can_send_message_group: (await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:everyone' }).first('id'))!.id,
        });
    }
  });

  it("lists the server's integrations in register's realm_incoming_webhook_bots", async () => {
    const res = await t.api.post('/register', t.cast.member, { fetch_event_types: ['realm_incoming_webhook_bots'] });
    const list = res.body.realm_incoming_webhook_bots as Array<Record<string, unknown>>;
    expect(list.map((i) => i.name)).toEqual(INTEGRATIONS.map((i) => i.name));
    expect(list.find((i) => i.name === 'slack_incoming')).toEqual({
      name: 'slack_incoming',
      display_name: 'Slack-compatible incoming webhook',
      all_event_types: null,
      config_options: [],
      url_options: [],
    });
  });

  const fixture = (integration: string, name: string) => loadFixtures(integration).find((f) => f.name === name)!;

  it('answers a request without the event header with MISSING_HTTP_EVENT_HEADER and tells the owner', async () => {
    lastNoticeForTests.clear();
    const before = await lastId();
    const { body, contentType } = fixtureBody(fixture('gitlab', 'push_hook__two_commits'));
    const res = await send('gitlab', { query: { stream: 'webhooks' }, body, contentType });
    expect(res).toEqual({
      status: 400,
      body: {
        result: 'error',
        msg: "Missing the HTTP event header 'X-GitLab-Event'",
        code: 'MISSING_HTTP_EVENT_HEADER',
        header: 'X-GitLab-Event',
      },
    });
    const notices = await messagesAfter(before);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.content).toContain('X-GitLab-Event');
  });

  it('filters by the event type the integration names: only_events and exclude_events with wildcards', async () => {
    const f = fixture('gitlab', 'push_hook__two_commits');
    const { body, contentType } = fixtureBody(f);
    const post = (query: Record<string, string>) =>
      send('gitlab', { query: { stream: 'webhooks', ...query }, headers: f.headers, body, contentType });
    let before = await lastId();
    expect((await post({ only_events: '["Push Hook"]' })).body).toEqual({ result: 'success', msg: '' });
    expect(await messagesAfter(before)).toHaveLength(1);
    before = await lastId();
    expect((await post({ only_events: '["Merge*"]' })).body).toEqual({ result: 'success', msg: '' });
    expect((await post({ exclude_events: '["Push*"]' })).body).toEqual({ result: 'success', msg: '' });
    expect(await messagesAfter(before)).toHaveLength(0);
  });

  it("filters each message of a request by its own event (Grafana's alert groups)", async () => {
    const f = fixture('grafana', 'unified__group_mixed');
    const want = expectedMessages(f)!;
    const { body, contentType } = fixtureBody(f);
    const before = await lastId();
    await send('grafana', { query: { stream: 'webhooks', only_events: '["resolved"]' }, headers: f.headers, body, contentType });
    const posted = await messagesAfter(before);
    expect(posted.length).toBeGreaterThan(0);
    expect(posted.length).toBeLessThan(want.length);
    for (const m of posted) expect(want.map((w) => w.content)).toContain(m.content);
  });

  it("decodes Jira's twice-encoded channel and topic once more", async () => {
    await createChannel(t, 'release notes', [t.cast.owner]);
    const f = fixture('jira', 'issue_created__assigned');
    const { body, contentType } = fixtureBody(f);
    const before = await lastId();
    // As Jira sends them: "release%20notes" arrives once decoded as "release%20notes".
    const res = await send('jira', { query: { stream: 'release%20notes', topic: 'sprint%2042' }, headers: f.headers, body, contentType });
    expect(res.body).toEqual({ result: 'success', msg: '' });
    expect(await messagesAfter(before)).toMatchObject([{ topic: 'sprint 42', content: (f.expect as { content: string }).content }]);
  });

  it('costs no more statements than POST /messages of the same message (warm caches)', async () => {
    const text = 'A deploy of *api* finished: https://ci.example.org/runs/1';
    const payload = JSON.stringify({ text });
    const webhook = () =>
      send('slack_incoming', {
        query: { stream: 'webhooks', topic: 'cost' },
        body: `payload=${encodeURIComponent(payload)}`,
        contentType: 'application/x-www-form-urlencoded',
      });
    const direct = () =>
      t.api.post('/messages', bot, {
        type: 'stream',
        to: 'webhooks',
        topic: 'cost',
        content: 'A deploy of **api** finished: https://ci.example.org/runs/1',
      });
    await webhook();
    await direct();
    const viaWebhook = await countQueries(t, webhook);
    const viaSend = await countQueries(t, direct);
    expect(viaWebhook.result.status).toBe(200);
    expect(viaSend.result.status).toBe(200);
    const [a, b] = await messagesAfter((await lastId()) - 2);
    expect(a!.content).toBe(b!.content);
    expect(viaWebhook.queries).toBeLessThanOrEqual(viaSend.queries);
  });

  it("answers an UptimeRobot body missing a field with Zulip's 400 and tells the owner how to fix it", async () => {
    lastNoticeForTests.clear();
    const { monitor_url: _dropped, ...body } = fixture('uptimerobot', 'down__http').body as Record<string, string>;
    const before = await lastId();
    const res = await send('uptimerobot', { query: { stream: 'webhooks' }, body: JSON.stringify(body) });
    expect(res).toEqual({ status: 400, body: { result: 'error', msg: 'Invalid payload', code: 'BAD_REQUEST' } });
    const notices = await messagesAfter(before);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.content).toContain('monitor_url');
  });

  it('posts to a channel nobody is subscribed to, and tells the owner that nobody reads it', async () => {
    await createChannel(t, 'empty room', []);
    lastNoticeForTests.clear();
    const before = await lastId();
    expect((await send('json', { query: { stream: 'empty room' }, body: hello })).body).toEqual({ result: 'success', msg: '' });
    const [posted, notice] = await messagesAfter(before);
    expect(posted).toMatchObject({ sender: bot.id, content: helloContent });
    expect(notice!.content).toBe(
      `Your bot \`${bot.delivery_email}\` tried to send a message to channel #**empty room**. The channel exists but does not have any subscribers.`,
    );
  });
});
