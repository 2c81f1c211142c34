import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_REQUEST_RETRIES, MAX_RESPONSE_BYTES } from '../src/actions/outgoing-webhooks';
import { createUserInTx } from '../src/actions/users';
import { inTransaction } from '../src/db/transaction';
import { BotType } from '../src/domain/users';
import { insertBotService, SERVICE_INTERFACE, type ServiceInterface } from '../src/queries/bot-services';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, statementsOf, type TestServer } from './support/server';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A bot's service on 127.0.0.1: records every request and answers as the test says. */
class WebhookServer {
  readonly received: Received[] = [];
  answer: (req: Received, res: http.ServerResponse) => void = (_req, res) => res.end();
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      this.received.push(r);
      this.answer(r, res);
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  json(body: unknown, status = 200): void {
    this.answer = (_req, res) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function createWebhookBot(
  t: TestServer,
  name: string,
  baseUrl: string,
  iface: ServiceInterface = SERVICE_INTERFACE.generic,
): Promise<UserRow> {
  const bot = await inTransaction(t.ctx.db, (tx) =>
    createUserInTx(tx, null, {
      realmId: t.realmId,
      email: `${name.toLowerCase().replace(/\W/g, '-')}-bot@example.com`,
      fullName: name,
      isBot: true,
      botType: BotType.OUTGOING_WEBHOOK,
      botOwnerId: t.cast.member.id,
    }),
  );
  await insertBotService(t.ctx.db, { user_id: bot.id, name, base_url: baseUrl, token: `token-of-${bot.id}`, interface: iface });
  // What POST /bots will do once it exists: the running server learns of the bot.
  t.ctx.outgoingWebhooks.noteBot(bot.id);
  return bot;
}

eachDatabase('outgoing webhooks', (dialect) => {
  let t: TestServer;
  let hook: WebhookServer;
  let echo: UserRow;
  let slackBot: UserRow;
  let channel: { id: number; recipient_id: number };

  beforeAll(async () => {
    hook = await new WebhookServer().start();
    t = await startTestServer(dialect, undefined, {
      config: { outgoingWebhookAllowedHosts: ['127.0.0.1', 'localhost'], outgoingWebhookTimeoutSeconds: 0.3 },
    });
    const { owner, admin, member } = t.cast;
    // The bots are not subscribed: a mention calls a bot all the same.
    channel = await createChannel(t, 'general', [owner, admin, member]);
    echo = await createWebhookBot(t, 'Echo Bot', `${hook.url}/generic?x=1`);
    slackBot = await createWebhookBot(t, 'Slack Bot', `${hook.url}/slack`, SERVICE_INTERFACE.slack);
  });
  afterAll(async () => {
    await t.close();
    await hook.close();
  });
  beforeEach(() => {
    hook.received.length = 0;
    hook.json({ response_not_required: true });
  });

  /** Sends through the API and waits for every webhook job it caused, replies included. */
  async function send(sender: UserRow, fields: Record<string, unknown>): Promise<number> {
    const res = await t.api.post('/messages', sender, fields);
    expect(res.status).toBe(200);
    await t.ctx.outgoingWebhooks.jobs.whenIdle();
    return res.body.id as number;
  }

  /** What a user sent after a message, oldest first. */
  async function sentAfter(id: number, sender: UserRow) {
    const rows = await t.ctx
      .db('messages')
      .where('id', '>', id)
      .where({ sender_id: sender.id })
      .orderBy('id')
      .select('id', 'recipient_id', 'topic', 'content', 'sending_client');
    return rows as Array<{ id: number; recipient_id: number; topic: string; content: string; sending_client: string }>;
  }

  /** Calls Echo Bot in a topic of general and returns what the bot then sent, after exactly one request. */
  async function afterOneRequest(topic: string, content: string): Promise<string[]> {
    const id = await send(t.cast.owner, { type: 'channel', to: 'general', topic, content });
    expect(hook.received).toHaveLength(1);
    return (await sentAfter(id, echo)).map((m) => m.content);
  }

  async function recipientOf(id: number): Promise<number> {
    return Number((await t.ctx.db('messages').where({ id }).first('recipient_id'))!.recipient_id);
  }

  it('a bot made with POST /bots (an outgoing webhook with payload_url) is called by its first mention and replies', async () => {
    const { owner, member } = t.cast;
    const made = await t.api.post('/bots', member, {
      full_name: 'Deploy Helper',
      short_name: 'deployhelper',
      bot_type: BotType.OUTGOING_WEBHOOK,
      payload_url: JSON.stringify(`${hook.url}/deploy`),
      interface_type: SERVICE_INTERFACE.generic,
    });
    expect(made.status).toBe(200);
    const botId = made.body.user_id as number;
    const [service] = (await t.ctx.db('bot_services').where({ user_id: botId }).select('base_url', 'token')) as Array<{
      base_url: string;
      token: string;
    }>;
    expect(service!.base_url).toBe(`${hook.url}/deploy`);
    hook.json({ content: 'deploying **main**' });
    const id = await send(owner, { type: 'channel', to: 'general', topic: 'release', content: '@**Deploy Helper** ship it' });
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.path).toBe('/deploy');
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({
      data: '@**Deploy Helper** ship it',
      token: service!.token,
      trigger: 'mention',
      bot_full_name: 'Deploy Helper',
    });
    const replies = await t.ctx.db('messages').where('id', '>', id).where({ sender_id: botId }).select('topic', 'content');
    expect(replies).toEqual([{ topic: 'release', content: 'deploying **main**' }]);
  });

  it('a mention in a channel POSTs Zulip’s payload, and the answer’s content is the bot’s reply in the topic', async () => {
    const { owner } = t.cast;
    hook.json({ content: 'pong from **echo**' });
    const id = await send(owner, { type: 'channel', to: 'general', topic: 'plans', content: 'ping @**Echo Bot** *now*' });
    expect(hook.received).toHaveLength(1);
    const [req] = hook.received;
    expect(req!.path).toBe('/generic?x=1');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['user-agent']).toMatch(/^ZulipOutgoingWebhook\//);
    const payload = JSON.parse(req!.body) as Record<string, any>;
    // The message as the bot receives it: Markdown source (apply_markdown=false) beside the HTML.
    const asApi = (await t.api.get(`/messages/${id}`, owner, { apply_markdown: false })).body.message as Record<string, unknown>;
    const { flags: _flags, ...expected } = asApi;
    expect(payload).toEqual({
      data: 'ping @**Echo Bot** *now*',
      message: { ...expected, rendered_content: expect.stringContaining('<em>now</em>') },
      bot_email: echo.email,
      bot_full_name: 'Echo Bot',
      token: `token-of-${echo.id}`,
      trigger: 'mention',
    });
    expect(payload.message).toMatchObject({
      id,
      type: 'stream',
      stream_id: channel.id,
      display_recipient: 'general',
      subject: 'plans',
      content: 'ping @**Echo Bot** *now*',
      content_type: 'text/x-markdown',
      sender_id: owner.id,
      avatar_url: expect.any(String),
    });
    const replies = await sentAfter(id, echo);
    expect(replies).toEqual([
      {
        id: expect.any(Number),
        recipient_id: channel.recipient_id,
        topic: 'plans',
        content: 'pong from **echo**',
        sending_client: 'OutgoingWebhookResponse',
      },
    ]);
    // The reply is the bot's: a bot's message calls no bot, so nothing more was sent.
    expect(hook.received).toHaveLength(1);
  });

  it('a direct message to the bot calls it with trigger direct_message, and the reply goes back to the conversation', async () => {
    const { member } = t.cast;
    hook.json({ content: 'hello back' });
    const id = await send(member, { type: 'direct', to: JSON.stringify([echo.id]), content: 'hi bot' });
    expect(hook.received).toHaveLength(1);
    const payload = JSON.parse(hook.received[0]!.body) as Record<string, any>;
    expect(payload.trigger).toBe('direct_message');
    expect(payload.data).toBe('hi bot');
    expect(payload.message.type).toBe('private');
    expect(payload.message.display_recipient.map((u: { id: number }) => u.id).sort()).toEqual([member.id, echo.id].sort());
    const replies = await sentAfter(id, echo);
    expect(replies.map((r) => [r.recipient_id, r.content])).toEqual([[await recipientOf(id), 'hello back']]);
  });

  it('a group direct message with the bot calls it too, and the reply goes to every participant', async () => {
    const { owner, admin } = t.cast;
    hook.json({ content: 'to all of you' });
    const id = await send(owner, { type: 'direct', to: JSON.stringify([admin.id, echo.id]), content: 'we three' });
    expect(hook.received.map((r) => JSON.parse(r.body).trigger)).toEqual(['direct_message']);
    const replies = await sentAfter(id, echo);
    expect(replies.map((r) => [r.recipient_id, r.content])).toEqual([[await recipientOf(id), 'to all of you']]);
  });

  it('a host name the setting lists is reached at its address, with the URL’s Host header', async () => {
    const named = await createWebhookBot(t, 'Named Bot', hook.url.replace('127.0.0.1', 'localhost'));
    hook.json({ content: 'by name' });
    const id = await send(t.cast.owner, { type: 'direct', to: JSON.stringify([named.id]), content: 'hello' });
    expect(hook.received.map((r) => r.headers.host)).toEqual([new URL(hook.url).host.replace('127.0.0.1', 'localhost')]);
    expect((await sentAfter(id, named)).map((m) => m.content)).toEqual(['by name']);
  });

  it('a channel message that does not mention the bot, or mentions it silently, calls nothing', async () => {
    const { owner } = t.cast;
    await send(owner, { type: 'channel', to: 'general', topic: 'plans', content: 'no bot here' });
    await send(owner, { type: 'channel', to: 'general', topic: 'plans', content: 'quietly @_**Echo Bot**' });
    expect(hook.received).toHaveLength(0);
  });

  it('response_not_required: the request is made, no reply', async () => {
    hook.json({ response_not_required: true, content: 'ignored' });
    const id = await send(t.cast.owner, { type: 'channel', to: 'general', topic: 'quiet', content: '@**Echo Bot** shh' });
    expect(hook.received).toHaveLength(1);
    expect(await sentAfter(id, echo)).toEqual([]);
  });

  it('an empty or blank content, a JSON "" or an answer without content sends no reply', async () => {
    for (const answer of [{ content: '' }, { content: '  \n ' }, '""', {}]) {
      hook.json(answer);
      const id = await send(t.cast.owner, { type: 'channel', to: 'general', topic: 'quiet', content: '@**Echo Bot** anything?' });
      expect(await sentAfter(id, echo)).toEqual([]);
    }
    expect(hook.received).toHaveLength(4);
  });

  it('an answer that is not JSON fails: "Invalid JSON in response" in the topic, and the owner is told with the payload', async () => {
    const { owner, member } = t.cast;
    hook.answer = (_req, res) => res.end('not json');
    const id = await send(owner, { type: 'channel', to: 'general', topic: 'bad', content: '@**Echo Bot** go' });
    const sent = await sentAfter(id, echo);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ recipient_id: channel.recipient_id, topic: 'bad', content: 'Failure! Invalid JSON in response' });
    const url = `${t.ctx.config.externalUrl}/#narrow/channel/${channel.id}-general/topic/bad/near/${id}`;
    expect(sent[1]!.content).toBe(
      `[A message](${url}) to your bot @_**Echo Bot** triggered an outgoing webhook.\n` +
        'The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n' +
        '> Invalid JSON in response\n' +
        "The response contains the following payload:\n```\n'not json'\n```",
    );
    // A direct message between the bot and its owner.
    const dm = await t.ctx.db('user_messages').where({ message_id: sent[1]!.id }).pluck('user_id');
    expect(dm.map(Number).sort()).toEqual([member.id, echo.id].sort());
  });

  it('an answer that is JSON but not an object fails with "Invalid response format"', async () => {
    hook.json(['a list']);
    const id = await send(t.cast.owner, { type: 'channel', to: 'general', topic: 'bad', content: '@**Echo Bot** list?' });
    expect((await sentAfter(id, echo))[0]!.content).toBe('Failure! Invalid response format');
  });

  it('an answer over the size limit fails without a retry, naming the error', async () => {
    hook.answer = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(`{"content": "${'x'.repeat(MAX_RESPONSE_BYTES)}"}`);
    };
    expect(await afterOneRequest('big', '@**Echo Bot** say a lot')).toEqual([
      'Failure! An exception of type *ResponseTooLarge* occurred for message `@**Echo Bot** say a lot`! See the Zulip server logs for more information.',
      expect.stringMatching(
        /\nWhen trying to send a request to the webhook service, an exception of type ResponseTooLarge occurred:\n```\n/,
      ),
    ]);
  });

  it(`a timeout is retried ${MAX_REQUEST_RETRIES} times, then "Bot is unavailable" and the owner’s notice`, async () => {
    const { owner } = t.cast;
    hook.answer = () => {}; // never answers
    const id = await send(owner, { type: 'channel', to: 'general', topic: 'slow', content: '@**Echo Bot** are you there?' });
    expect(hook.received).toHaveLength(1 + MAX_REQUEST_RETRIES);
    const sent = await sentAfter(id, echo);
    expect(sent.map((m) => m.content)).toEqual([
      'Failure! Bot is unavailable',
      `[A message](${t.ctx.config.externalUrl}/#narrow/channel/${channel.id}-general/topic/slow/near/${id}) to your bot @_**Echo Bot** triggered an outgoing webhook.\n` +
        'Request timed out after 0.3 seconds.',
    ]);
    expect(sent[0]!.recipient_id).toBe(channel.recipient_id);
  });

  it('a connection error is retried too, with Zulip’s notice', async () => {
    const closed = await new WebhookServer().start();
    const url = closed.url;
    await closed.close();
    const down = await createWebhookBot(t, 'Down Bot', url);
    const id = await send(t.cast.owner, { type: 'direct', to: JSON.stringify([down.id]), content: 'anyone?' });
    const sent = await sentAfter(id, down);
    expect(sent.map((m) => m.content)).toEqual([
      'Failure! Bot is unavailable',
      expect.stringMatching(/triggered an outgoing webhook\.\nA connection error occurred\. Is my bot server down\?$/),
    ]);
  });

  it('a 5xx fails at once, as Zulip now does (no retry): the status in the topic, status and body to the owner', async () => {
    hook.answer = (_req, res) => {
      res.writeHead(503);
      res.end("it's down");
    };
    expect(await afterOneRequest('err', '@**Echo Bot** please')).toEqual([
      'Failure! Third party responded with 503',
      expect.stringMatching(
        /triggered an outgoing webhook\.\nThe webhook got a response with status code \*503\*\.\nThe response contains the following payload:\n```\nb"it's down"\n```$/,
      ),
    ]);
  });

  it('the Slack interface POSTs Slack’s form fields and replies with `text`', async () => {
    const { owner } = t.cast;
    hook.json({ text: 'slack says hi' });
    const id = await send(owner, { type: 'channel', to: 'general', topic: 'slack', content: '@**Slack Bot** hello' });
    expect(hook.received).toHaveLength(1);
    const req = hook.received[0]!;
    expect(req.path).toBe('/slack');
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const sentAt = Number((await t.ctx.db('messages').where({ id }).first('date_sent'))!.date_sent);
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({
      token: `token-of-${slackBot.id}`,
      team_id: `T${t.realmId}`,
      team_domain: new URL(t.ctx.config.externalUrl).host,
      channel_id: `C${channel.id}`,
      channel_name: 'general',
      thread_ts: String(sentAt),
      timestamp: String(sentAt),
      user_id: `U${owner.id}`,
      user_name: owner.full_name,
      text: '@**Slack Bot** hello',
      trigger_word: 'mention',
      service_id: String(slackBot.id),
    });
    expect((await sentAfter(id, slackBot)).map((m) => [m.topic, m.content])).toEqual([['slack', 'slack says hi']]);
  });

  it('the Slack interface refuses direct messages, without a request', async () => {
    const id = await send(t.cast.owner, { type: 'direct', to: JSON.stringify([slackBot.id]), content: 'dm' });
    expect(hook.received).toHaveLength(0);
    expect((await sentAfter(id, slackBot)).map((m) => m.content)).toEqual([
      "Failure! Slack outgoing webhooks don't support direct messages.",
    ]);
  });

  it('a message a bot sends calls no bot: its own, or another bot’s', async () => {
    await send(echo, { type: 'channel', to: 'general', topic: 'bots', content: 'I am @**Echo Bot**' });
    await send(echo, { type: 'direct', to: JSON.stringify([slackBot.id]), content: 'hey other bot' });
    await send(t.cast.bot, { type: 'direct', to: JSON.stringify([echo.id]), content: 'generic bot here' });
    await send(t.cast.bot, { type: 'channel', to: 'general', topic: 'bots', content: '@**Echo Bot** @**Slack Bot**' });
    expect(hook.received).toHaveLength(0);
  });

  it('a message that calls no bot costs the send path no statement: nothing about bots is read', async () => {
    const statements: string[] = [];
    const onQuery = (q: { sql: string }) => statements.push(...statementsOf(q.sql));
    t.ctx.db.on('query', onQuery);
    try {
      await send(t.cast.owner, { type: 'channel', to: 'general', topic: 'plain', content: 'just people @**Test Member**' });
      await send(t.cast.owner, { type: 'direct', to: JSON.stringify([t.cast.admin.id]), content: 'no bots' });
      expect(t.ctx.outgoingWebhooks.jobs.backlog).toBe(0);
      expect(statements.filter((s) => /bot_services/.test(s))).toEqual([]);
      // The same watch sees a message that does call a bot.
      await send(t.cast.owner, { type: 'channel', to: 'general', topic: 'plain', content: '@**Echo Bot**' });
      expect(statements.filter((s) => /bot_services/.test(s)).length).toBeGreaterThan(0);
    } finally {
      t.ctx.db.removeListener('query', onQuery);
    }
  });
});

eachDatabase('outgoing webhooks without OUTGOING_WEBHOOK_ALLOWED_HOSTS', (dialect) => {
  let t: TestServer;
  let hook: WebhookServer;

  beforeAll(async () => {
    hook = await new WebhookServer().start();
    hook.json({ content: 'should never be asked' });
    t = await startTestServer(dialect);
    await createChannel(t, 'general', [t.cast.owner]);
  });
  afterAll(async () => {
    await t.close();
    await hook.close();
  });

  it.each([
    ['a loopback address', () => hook.url],
    ['a name that resolves to loopback', () => hook.url.replace('127.0.0.1', 'localhost')],
    ['a private address', () => 'http://10.1.2.3/hook'],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest'],
    ['an IPv6 loopback', () => 'http://[::1]:9/'],
    ['an IPv4-mapped IPv6 address', () => 'http://[::ffff:127.0.0.1]:9/'],
  ])('refuses %s: no request, Zulip’s notices', async (what, url) => {
    const bot = await createWebhookBot(t, `Refused ${what.length}${Math.floor(Math.random() * 1e6)}`, url());
    const res = await t.api.post('/messages', t.cast.owner, {
      type: 'channel',
      to: 'general',
      topic: 'x',
      content: `@**${bot.full_name}** hi`,
    });
    expect(res.status).toBe(200);
    await t.ctx.outgoingWebhooks.jobs.whenIdle();
    expect(hook.received).toHaveLength(0);
    const sent = (await t.ctx.db('messages').where({ sender_id: bot.id }).orderBy('id').pluck('content')) as string[];
    expect(sent).toEqual([
      'Failure! Third party responded with 407',
      expect.stringMatching(
        /triggered an outgoing webhook\.\nThe URL configured for the webhook is for a private or disallowed network\.$/,
      ),
    ]);
  });
});
