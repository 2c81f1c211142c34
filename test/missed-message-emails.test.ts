import request from 'supertest';
import { mailDueBatches, startMissedMessageEmails } from '../src/actions/missed-message-emails';
import { parseSettings } from '../src/domain/user-settings';
import type { UserRow } from '../src/queries/rows';
import { ManualClock } from './support/clock';
import { eachDatabase } from './support/databases';
import { pending, poll, register } from './support/events';
import { linkIn, queuedEmails } from './support/mail';
import { createChannel, startTestServer, type TestServer } from './support/server';

/**
 * Missed-message emails (docs/architecture/missed-message-emails.md): a
 * message to a user who is away is stored for mail after the user's
 * batching period (120 seconds by default) and mailed then, one mail per
 * conversation, if still unread. Time is the test's: the decision reads the
 * server's clock (a ManualClock) and the worker's pass is given its time.
 */
eachDatabase('missed-message emails', (dialect) => {
  let t: TestServer;
  let clock: ManualClock;
  const MEMBER = 'member@example.com';

  beforeAll(async () => {
    clock = new ManualClock();
    t = await startTestServer(dialect, undefined, { clock });
    await createChannel(t, 'lobby', [t.cast.owner, t.cast.member, t.cast.admin]);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });
  beforeEach(async () => {
    await t.ctx.missedMessages.whenIdle();
    await t.ctx.db('missed_message_emails').delete();
    await t.ctx.db('outgoing_emails').delete();
    await t.ctx.db('user_presence').delete();
    await setSettings(t.cast.member, {
      enable_offline_email_notifications: true,
      message_content_in_email_notifications: true,
      email_notifications_batching_period_seconds: 120,
    });
  });

  async function setSettings(user: UserRow, settings: Record<string, unknown>) {
    const body = Object.fromEntries(Object.entries(settings).map(([k, v]) => [k, JSON.stringify(v)]));
    expect((await t.api.patch('/settings', user, body)).status).toBe(200);
  }

  /** Sends and waits for the decision the message causes. */
  async function send(sender: UserRow, fields: Record<string, unknown>): Promise<number> {
    const res = await t.api.post('/messages', sender, fields);
    expect(res.status).toBe(200);
    await t.ctx.missedMessages.whenIdle();
    return res.body.id as number;
  }
  const dm = (sender: UserRow, to: UserRow[], content: string) =>
    send(sender, { type: 'direct', to: JSON.stringify(to.map((u) => u.id)), content });

  const nowSeconds = () => Math.floor(clock.now() / 1000);
  /** Runs the worker's pass `seconds` from now. */
  const mailAfter = (seconds: number) => mailDueBatches(t.ctx, nowSeconds() + seconds);

  it('a direct message to an offline user: no mail before the batching period, exactly one after it', async () => {
    const { owner, member } = t.cast;
    await dm(owner, [member], 'Are you **there**?');
    await mailAfter(119);
    expect(await queuedEmails(t.ctx.db)).toEqual([]);
    await mailAfter(120);
    const mails = await queuedEmails(t.ctx.db);
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail).toMatchObject({ to_address: MEMBER, template: 'missed_messages', subject: 'DMs with Test Owner', reply_to: null });
    expect(mail!.from_name).toBe('Test Organization');
    expect(mail!.text_body).toContain('Test Owner:\nAre you **there**?');
    expect(mail!.html_body).toContain('<strong>there</strong>');
    expect(mail!.text_body).toContain(`/#narrow/dm/${owner.id}-Test-Owner`);
    expect(linkIn(mail!.text_body, 'http')).toBeTruthy();
    // Mailed once: the pending rows went with the mail.
    expect(await t.ctx.db('missed_message_emails').count('* as n').first()).toMatchObject({ n: 0 });
    await mailAfter(600);
    expect(await queuedEmails(t.ctx.db)).toHaveLength(1);
  });

  it('two direct messages of one conversation make one mail with both; the second joins the first one’s batch', async () => {
    const { owner, member } = t.cast;
    await dm(owner, [member], 'first thing');
    clock.advance(100_000);
    await dm(owner, [member], 'second thing');
    // Due when the first one's batch is, not 120 seconds after the second.
    await mailAfter(20);
    const mails = await queuedEmails(t.ctx.db, MEMBER);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text_body).toMatch(/first thing[\s\S]*second thing/);
  });

  it('a mention in a channel and a direct message make two mails, one per conversation', async () => {
    const { owner, member } = t.cast;
    await send(owner, { type: 'channel', to: 'lobby', topic: 'plans', content: 'what do you think, @**Test Member**?' });
    // Being mentioned made the member follow the topic (automatically_follow_topics_where_mentioned):
    // what follows in it is mailed too; another topic is not.
    await send(owner, { type: 'channel', to: 'lobby', topic: 'plans', content: 'a reply in the topic' });
    await send(owner, { type: 'channel', to: 'lobby', topic: 'other plans', content: 'nobody is mentioned here' });
    await dm(owner, [member], 'and in private');
    await mailAfter(120);
    const mails = await queuedEmails(t.ctx.db, MEMBER);
    expect(mails.map((m) => m.subject).sort()).toEqual(['#lobby > plans', 'DMs with Test Owner']);
    const channelMail = mails.find((m) => m.subject === '#lobby > plans')!;
    expect(channelMail.text_body).toContain('Test Owner mentioned you in #lobby > plans.');
    expect(channelMail.text_body).toMatch(/@\*\*Test Member\*\*\?[\s\S]*a reply in the topic/);
    expect(mails.map((m) => m.text_body).join('')).not.toContain('nobody is mentioned here');
    expect(channelMail.text_body).toContain('/#narrow/channel/');
  });

  it('a group direct message makes one mail naming the others', async () => {
    const { owner, member, admin } = t.cast;
    await dm(owner, [member, admin], 'all three of us');
    await mailAfter(120);
    const mails = await queuedEmails(t.ctx.db, MEMBER);
    expect(mails.map((m) => m.subject)).toEqual(['Group DMs with Test Owner and Test Admin']);
    expect(mails[0]!.text_body).toContain('-group');
  });

  it('a user with an active event queue (registered, polling, present) gets no mail; once the queue expires unpolled, they do', async () => {
    const { owner, member } = t.cast;
    const client = await register(t, member, { event_types: JSON.stringify(['message']) });
    expect((await t.api.post('/users/me/presence', member, { status: 'active' })).status).toBe(200);
    await dm(owner, [member], 'seen on the web');
    expect((await pending(t, client)).map((e) => e.type)).toEqual(['message']);
    await mailAfter(600);
    expect(await queuedEmails(t.ctx.db, MEMBER)).toEqual([]);
    // The client acknowledges what it saw; then a message it never polls, and it goes away for good.
    expect(await pending(t, client)).toEqual([]);
    await dm(owner, [member], 'never polled');
    clock.advance(t.ctx.queues.limits.idleTimeoutMs + 60_000);
    expect(t.ctx.queues.collectGarbage()).toBeGreaterThan(0);
    await t.ctx.missedMessages.whenIdle();
    await mailAfter(120);
    const mails = await queuedEmails(t.ctx.db, MEMBER);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text_body).toContain('never polled');
    expect(mails[0]!.text_body).not.toContain('seen on the web');
  });

  it('a message read before the batch is due is not mailed', async () => {
    const { owner, member } = t.cast;
    const id = await dm(owner, [member], 'read it soon');
    const res = await t.api.post('/messages/flags', member, { messages: JSON.stringify([id]), op: 'add', flag: 'read' });
    expect(res.status).toBe(200);
    await mailAfter(120);
    expect(await queuedEmails(t.ctx.db, MEMBER)).toEqual([]);
  });

  it('a message deleted before the batch is due is not mailed', async () => {
    const { owner, member } = t.cast;
    const id = await dm(owner, [member], 'oops, wrong person');
    expect((await t.api.delete(`/messages/${id}`, owner)).status).toBe(200);
    await mailAfter(120);
    expect(await queuedEmails(t.ctx.db, MEMBER)).toEqual([]);
  });

  it('no mail when the user turned email notifications off, whether before the message or before the batch is due', async () => {
    const { owner, member } = t.cast;
    await setSettings(member, { enable_offline_email_notifications: false });
    await dm(owner, [member], 'not mailed');
    expect(await t.ctx.db('missed_message_emails').count('* as n').first()).toMatchObject({ n: 0 });
    await setSettings(member, { enable_offline_email_notifications: true });
    await dm(owner, [member], 'pending, then turned off');
    await setSettings(member, { enable_offline_email_notifications: false });
    await mailAfter(120);
    expect(await queuedEmails(t.ctx.db, MEMBER)).toEqual([]);
  });

  it('a plain channel message is mailed only to those who asked for the channel’s mail', async () => {
    const { owner, member } = t.cast;
    await send(owner, { type: 'channel', to: 'lobby', topic: 'quiet', content: 'just chatting' });
    await mailAfter(120);
    expect(await queuedEmails(t.ctx.db, MEMBER)).toEqual([]);
    await setSettings(member, { enable_stream_email_notifications: true });
    await send(owner, { type: 'channel', to: 'lobby', topic: 'quiet', content: 'still chatting' });
    await mailAfter(120);
    const mails = await queuedEmails(t.ctx.db, MEMBER);
    expect(mails.map((m) => m.subject)).toEqual(['#lobby > quiet']);
    expect(mails[0]!.text_body).toContain('New messages in #lobby > quiet.');
    await setSettings(member, { enable_stream_email_notifications: false });
  });

  it('a plain message in a topic the user follows is mailed (enable_followed_topic_email_notifications, on by default)', async () => {
    const { owner, member } = t.cast;
    const lobby = await t.ctx.db('channels').where({ name: 'lobby' }).first('id');
    const res = await t.api.post('/user_topics', member, { stream_id: lobby!.id, topic: 'followed one', visibility_policy: 3 });
    expect(res.status).toBe(200);
    await send(owner, { type: 'channel', to: 'lobby', topic: 'followed one', content: 'an update' });
    await send(owner, { type: 'channel', to: 'lobby', topic: 'not followed', content: 'elsewhere' });
    await mailAfter(120);
    const mails = await queuedEmails(t.ctx.db, MEMBER);
    expect(mails.map((m) => m.subject)).toEqual(['#lobby > followed one']);
    expect(mails[0]!.text_body).toContain('an update');
  });

  it('with message_content_in_email_notifications off, the mail holds no content', async () => {
    const { owner, member } = t.cast;
    await setSettings(member, { message_content_in_email_notifications: false });
    await dm(owner, [member], 'the secret plan');
    await mailAfter(120);
    const mails = await queuedEmails(t.ctx.db, MEMBER);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('New direct messages');
    expect(mails[0]!.text_body).not.toContain('secret plan');
    expect(mails[0]!.html_body).not.toContain('secret plan');
    expect(mails[0]!.text_body).toContain('not included');
  });

  it('the unsubscribe link turns missed-message emails off and tells the user’s clients; a bad link says so', async () => {
    const { owner, member } = t.cast;
    await dm(owner, [member], 'hello');
    await mailAfter(120);
    const [mail] = await queuedEmails(t.ctx.db, MEMBER);
    const link = new URL(linkIn(mail!.text_body, 'http://127.0.0.1:9991/accounts/unsubscribe/missed_messages/'));
    const client = await register(t, member, { event_types: JSON.stringify(['user_settings']) });
    const page = await request(t.app).get(link.pathname);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('You will no longer get missed message emails from Test Organization.');
    expect((await poll(t, client)).filter((e) => e.type === 'user_settings')).toEqual([
      expect.objectContaining({ op: 'update', property: 'enable_offline_email_notifications', value: false }),
    ]);
    const stored = (await t.ctx.db('users').where({ id: member.id }).first('settings')) as { settings: string };
    expect(parseSettings(stored.settings).enable_offline_email_notifications).toBe(false);
    // Mail stops with it.
    await dm(owner, [member], 'after unsubscribing');
    await mailAfter(120);
    expect(await queuedEmails(t.ctx.db, MEMBER)).toHaveLength(1);

    const token = link.pathname.split('/').pop()!;
    const wrongKind = await request(t.app).get(`/accounts/unsubscribe/digest/${token}`);
    expect(wrongKind.status).toBe(404);
    const bad = await request(t.app).get('/accounts/unsubscribe/missed_messages/not-a-token');
    expect(bad.status).toBe(404);
    expect(bad.text).toContain('This unsubscribe link is not valid.');
    const unknown = await request(t.app).get(`/accounts/unsubscribe/welcome/${token}`);
    expect(unknown.status).toBe(404);
  });
});

/** The mail queued to `to` once there is some (a worker runs on its own), within 5 seconds. */
async function mailQueued(t: TestServer, to: string) {
  for (let waited = 0; waited < 5_000; waited += 20) {
    const mails = await queuedEmails(t.ctx.db, to);
    if (mails.length > 0) return mails;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no mail to ${to} within 5 s`);
}

eachDatabase('missed-message email worker', (dialect) => {
  let t: TestServer;
  let clock: ManualClock;

  beforeAll(async () => {
    clock = new ManualClock();
    t = await startTestServer(dialect, undefined, { clock });
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  it('holds the lease, mails a batch once its time comes, and gives the lease up when stopped', async () => {
    const { owner, member } = t.cast;
    const errors: unknown[] = [];
    const stop = startMissedMessageEmails(t.ctx, { leaseMs: 2_000, pollMs: 20, onError: (e) => errors.push(e), now: clock.now });
    try {
      const res = await t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([member.id]), content: 'from the worker' });
      expect(res.status).toBe(200);
      await t.ctx.missedMessages.whenIdle();
      await new Promise((r) => setTimeout(r, 100));
      expect(await queuedEmails(t.ctx.db)).toEqual([]);
      clock.advance(121_000);
      const mails = await mailQueued(t, 'member@example.com');
      expect(mails.map((m) => [m.to_address, m.subject])).toEqual([['member@example.com', 'DMs with Test Owner']]);
      expect((await t.ctx.db('leases').where({ name: 'missed_message_emails' }).first())?.holder).not.toBe('');
    } finally {
      await stop();
    }
    expect(errors).toEqual([]);
    expect((await t.ctx.db('leases').where({ name: 'missed_message_emails' }).first())?.holder).toBe('');
  });

  it('two workers (two nodes) mail a batch once: one holds the lease', async () => {
    const { owner, admin } = t.cast;
    const errors: unknown[] = [];
    const opts = { leaseMs: 2_000, pollMs: 20, onError: (e: unknown) => errors.push(e), now: clock.now };
    const stops = [startMissedMessageEmails(t.ctx, opts), startMissedMessageEmails(t.ctx, opts)];
    try {
      const res = await t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([admin.id]), content: 'to the admin' });
      expect(res.status).toBe(200);
      await t.ctx.missedMessages.whenIdle();
      clock.advance(121_000);
      await mailQueued(t, 'admin@example.com');
      await new Promise((r) => setTimeout(r, 200));
      expect(await queuedEmails(t.ctx.db, 'admin@example.com')).toHaveLength(1);
    } finally {
      await Promise.all(stops.map((stop) => stop()));
    }
    expect(errors).toEqual([]);
  });
});
