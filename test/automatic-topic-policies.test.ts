import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import { createChannel, startTestServer, type TestServer } from './support/server';

/**
 * automatically_follow_topics_policy, automatically_unmute_topics_in_muted_streams_policy
 * (1 on participation, 2 on send, 3 on initiation, 4 never) and
 * automatically_follow_topics_where_mentioned, acting on send, reaction,
 * poll vote and mention as Zulip's do.
 */
eachDatabase('automatic topic policies', (dialect) => {
  let t: TestServer;
  let n = 0;

  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  const policyOf = async (user: UserRow, channelId: number, topic: string) =>
    Number(
      (
        await t.ctx
          .db('user_topics')
          .where({ user_id: user.id, channel_id: channelId, topic_key: topic.toLowerCase() })
          .first('visibility_policy')
      )?.visibility_policy ?? 0,
    );

  async function settings(user: UserRow, s: Record<string, unknown>) {
    const body = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, JSON.stringify(v)]));
    expect((await t.api.patch('/settings', user, body)).status).toBe(200);
  }

  async function freshChannel(opts: { inviteOnly?: boolean; historyPublicToSubscribers?: boolean; members?: UserRow[] } = {}) {
    const name = `auto-${++n}`;
    const { id } = await createChannel(t, name, opts.members ?? [t.cast.owner, t.cast.member, t.cast.admin], opts);
    return { id, name };
  }

  const send = (user: UserRow, to: string, topic: string, content = 'words') =>
    t.api.post('/messages', user, { type: 'channel', to, topic, content });

  afterEach(async () => {
    for (const u of [t.cast.owner, t.cast.member, t.cast.admin]) {
      await settings(u, {
        automatically_follow_topics_policy: 3,
        automatically_unmute_topics_in_muted_streams_policy: 2,
        automatically_follow_topics_where_mentioned: true,
      });
    }
  });

  it('starting a topic follows it (the default), reported in the answer and by a user_topic event before the message', async () => {
    const c = await freshChannel();
    const client = await register(t, t.cast.owner);
    const first = await send(t.cast.owner, c.name, 'Kickoff');
    expect(first.status).toBe(200);
    expect(first.body.automatic_new_visibility_policy).toBe(3);
    expect(await policyOf(t.cast.owner, c.id, 'Kickoff')).toBe(3);
    const types = (await pending(t, client)).map((e) => e.type);
    expect(types.indexOf('user_topic')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('user_topic')).toBeLessThan(types.indexOf('message'));
    const again = await send(t.cast.owner, c.name, 'Kickoff');
    expect(again.body).not.toHaveProperty('automatic_new_visibility_policy');
    // Replying in a topic someone else started changes nothing by default.
    const reply = await send(t.cast.member, c.name, 'kickoff');
    expect(reply.body).not.toHaveProperty('automatic_new_visibility_policy');
    expect(await policyOf(t.cast.member, c.id, 'Kickoff')).toBe(0);
  });

  it('sending in a muted channel unmutes the topic (the default), and following wins over unmuting', async () => {
    const c = await freshChannel();
    await send(t.cast.owner, c.name, 'Muted talk');
    const mute = await t.api.post('/users/me/subscriptions/properties', t.cast.member, {
      subscription_data: JSON.stringify([{ stream_id: c.id, property: 'is_muted', value: true }]),
    });
    expect(mute.status).toBe(200);
    const res = await send(t.cast.member, c.name, 'Muted talk');
    expect(res.body.automatic_new_visibility_policy).toBe(2);
    expect(await policyOf(t.cast.member, c.id, 'Muted talk')).toBe(2);
    await settings(t.cast.member, { automatically_follow_topics_policy: 2 });
    const followed = await send(t.cast.member, c.name, 'Muted talk');
    expect(followed.body.automatic_new_visibility_policy).toBe(3);
  });

  it('policy "on send" follows any topic one sends to; "never" for both settings changes nothing', async () => {
    const c = await freshChannel();
    await send(t.cast.owner, c.name, 'Open');
    await settings(t.cast.member, { automatically_follow_topics_policy: 2 });
    expect((await send(t.cast.member, c.name, 'Open')).body.automatic_new_visibility_policy).toBe(3);
    await settings(t.cast.admin, { automatically_follow_topics_policy: 4, automatically_unmute_topics_in_muted_streams_policy: 4 });
    const none = await send(t.cast.admin, c.name, 'Brand new');
    expect(none.status).toBe(200);
    expect(none.body).not.toHaveProperty('automatic_new_visibility_policy');
    expect(await policyOf(t.cast.admin, c.id, 'Brand new')).toBe(0);
  });

  it('a topic started before one joined a channel with protected history counts as started by one’s first message', async () => {
    const c = await freshChannel({ inviteOnly: true, historyPublicToSubscribers: false, members: [t.cast.owner] });
    await send(t.cast.owner, c.name, 'Secret');
    const add = await t.api.post('/users/me/subscriptions', t.cast.owner, {
      subscriptions: JSON.stringify([{ name: c.name }]),
      principals: JSON.stringify([t.cast.member.id]),
    });
    expect(add.status).toBe(200);
    expect((await send(t.cast.member, c.name, 'Secret')).body.automatic_new_visibility_policy).toBe(3);
    // With shared history the same topic would not be the member's to start.
    const shared = await freshChannel({ inviteOnly: true, historyPublicToSubscribers: true, members: [t.cast.owner] });
    await send(t.cast.owner, shared.name, 'Known');
    await t.api.post('/users/me/subscriptions', t.cast.owner, {
      subscriptions: JSON.stringify([{ name: shared.name }]),
      principals: JSON.stringify([t.cast.member.id]),
    });
    expect((await send(t.cast.member, shared.name, 'Known')).body).not.toHaveProperty('automatic_new_visibility_policy');
  });

  it('a personal mention follows the topic for those who asked, never over a muted topic, and not for group mentions', async () => {
    const c = await freshChannel();
    const memberClient = await register(t, t.cast.member);
    await send(t.cast.owner, c.name, 'Mentions', 'hi @**Test Member** and @**Test Admin**');
    expect(await policyOf(t.cast.member, c.id, 'Mentions')).toBe(3);
    expect(await policyOf(t.cast.admin, c.id, 'Mentions')).toBe(3);
    expect((await pending(t, memberClient)).filter((e) => e.type === 'user_topic')).toEqual([
      expect.objectContaining({ stream_id: c.id, topic_name: 'Mentions', visibility_policy: 3 }),
    ]);
    await settings(t.cast.admin, { automatically_follow_topics_where_mentioned: false });
    const muted = await t.api.post('/user_topics', t.cast.member, { stream_id: c.id, topic: 'Other', visibility_policy: 1 });
    expect(muted.status).toBe(200);
    await send(t.cast.owner, c.name, 'Other', 'hi @**Test Member** and @**Test Admin**');
    expect(await policyOf(t.cast.member, c.id, 'Other')).toBe(1);
    expect(await policyOf(t.cast.admin, c.id, 'Other')).toBe(0);
    // A silent mention is no mention.
    await send(t.cast.owner, c.name, 'Silent', 'hi @_**Test Member**');
    expect(await policyOf(t.cast.member, c.id, 'Silent')).toBe(0);
  });

  it('policy "on participation": a reaction and a poll vote follow the topic', async () => {
    const c = await freshChannel();
    const msg = await send(t.cast.owner, c.name, 'React here');
    const poll = await send(t.cast.owner, c.name, 'Vote here', '/poll Lunch?\nPizza\nSoup');
    await settings(t.cast.member, { automatically_follow_topics_policy: 1 });
    const reacted = await t.api.post(`/messages/${msg.body.id}/reactions`, t.cast.member, { emoji_name: 'smile' });
    expect(reacted.status).toBe(200);
    expect(await policyOf(t.cast.member, c.id, 'React here')).toBe(3);
    expect(await policyOf(t.cast.member, c.id, 'Vote here')).toBe(0);
    const vote = await t.api.post('/submessage', t.cast.member, {
      message_id: poll.body.id,
      msg_type: 'widget',
      content: JSON.stringify({ type: 'vote', key: 'canned,1', vote: 1 }),
    });
    expect(vote.status).toBe(200);
    expect(await policyOf(t.cast.member, c.id, 'Vote here')).toBe(3);
    // With the default (on initiation), reacting changes nothing.
    await settings(t.cast.admin, { automatically_follow_topics_policy: 3 });
    await t.api.post(`/messages/${msg.body.id}/reactions`, t.cast.admin, { emoji_name: 'smile' });
    expect(await policyOf(t.cast.admin, c.id, 'React here')).toBe(0);
  });

  it('a bot never gets a policy from sending', async () => {
    const c = await freshChannel({ members: [t.cast.owner, t.cast.bot] });
    const res = await send(t.cast.bot, c.name, 'Bot topic');
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('automatic_new_visibility_policy');
    expect(await policyOf(t.cast.bot, c.id, 'Bot topic')).toBe(0);
  });
});
