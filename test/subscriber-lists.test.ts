import { FULL_SUBSCRIBER_LIST_LIMIT } from '../src/access/subscriber-lists';
import { nowSeconds } from '../src/queries/ids';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { register } from './support/events';
import { createChannel, createMembers, startTestServer, TestServer } from './support/server';

/**
 * include_subscribers=partial on a realistic population: channels of 250
 * subscribers or more get partial_subscribers (bots and people active in
 * the last 14 days), smaller ones the full list — the same from POST
 * /register and GET /users/me/subscriptions.
 */
eachDatabase('include_subscribers=partial', (dialect) => {
  let t: TestServer;
  let crowd: UserRow[];
  let recent: number[];
  const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { member, bot, guest } = t.cast;
    crowd = await createMembers(t, 'crowd', FULL_SUBSCRIBER_LIST_LIMIT);
    const now = nowSeconds();
    // Ten people active today, ten a fortnight and a day ago, the rest never.
    recent = crowd.slice(0, 10).map((u) => u.id);
    await t.ctx
      .db('users')
      .whereIn('id', recent.concat(member.id))
      .update({ last_active_time: now - 3600 });
    await t.ctx
      .db('users')
      .whereIn(
        'id',
        crowd.slice(10, 20).map((u) => u.id),
      )
      .update({ last_active_time: now - 15 * 86400 });
    // big: the limit exactly; almost: one fewer; public-big: the limit, without the viewer.
    await createChannel(t, 'big', [...crowd.slice(0, FULL_SUBSCRIBER_LIST_LIMIT - 2), bot, member]);
    await createChannel(t, 'almost', [...crowd.slice(0, FULL_SUBSCRIBER_LIST_LIMIT - 3), bot, member]);
    await createChannel(t, 'public-big', [...crowd.slice(0, FULL_SUBSCRIBER_LIST_LIMIT - 1), guest]);
  }, 60_000);
  afterAll(() => t.close());

  const byName = (list: Array<{ name: string }>) => new Map(list.map((c) => [c.name, c as Record<string, any>]));

  it('sends partial lists for channels at the limit and full ones below it (POST /register)', async () => {
    const { member, bot } = t.cast;
    const { state } = await register(t, member, { fetch_event_types: ['subscription'], include_subscribers: 'partial' });
    const subs = byName(state.subscriptions);
    const big = subs.get('big')!;
    expect(big.subscriber_count).toBe(FULL_SUBSCRIBER_LIST_LIMIT);
    expect(big).not.toHaveProperty('subscribers');
    expect(sorted(big.partial_subscribers)).toEqual(sorted([...recent, bot.id, member.id]));
    const almost = subs.get('almost')!;
    expect(almost.subscriber_count).toBe(FULL_SUBSCRIBER_LIST_LIMIT - 1);
    expect(almost).not.toHaveProperty('partial_subscribers');
    expect(almost.subscribers).toHaveLength(FULL_SUBSCRIBER_LIST_LIMIT - 1);
    // Channels one could join get the same treatment.
    const publicBig = byName(state.never_subscribed).get('public-big')!;
    expect(publicBig).not.toHaveProperty('subscribers');
    expect(sorted(publicBig.partial_subscribers)).toEqual(sorted(recent));
  });

  it('sends full lists with include_subscribers=true, and none by default', async () => {
    const full = await register(t, t.cast.member, { fetch_event_types: ['subscription'], include_subscribers: true });
    const big = byName(full.state.subscriptions).get('big')!;
    expect(big.subscribers).toHaveLength(FULL_SUBSCRIBER_LIST_LIMIT);
    expect(big).not.toHaveProperty('partial_subscribers');
    const none = await register(t, t.cast.member, { fetch_event_types: ['subscription'] });
    for (const c of [...none.state.subscriptions, ...none.state.never_subscribed]) {
      expect(c).not.toHaveProperty('subscribers');
      expect(c).not.toHaveProperty('partial_subscribers');
    }
  });

  it('answers GET /users/me/subscriptions?include_subscribers=partial the same way', async () => {
    const { state } = await register(t, t.cast.member, { fetch_event_types: ['subscription'], include_subscribers: 'partial' });
    const res = await t.api.get('/users/me/subscriptions', t.cast.member, { include_subscribers: 'partial' });
    expect(res.status).toBe(200);
    const fromGet = byName(res.body.subscriptions);
    for (const [name, c] of byName(state.subscriptions)) {
      expect([name, fromGet.get(name)!.subscribers, fromGet.get(name)!.partial_subscribers]).toEqual([
        name,
        c.subscribers,
        c.partial_subscribers,
      ]);
    }
  });

  it('never lists the subscribers of a private channel the viewer may not see', async () => {
    const { moderator, admin } = t.cast;
    const secret = await createChannel(t, 'private-big', [...crowd.slice(0, FULL_SUBSCRIBER_LIST_LIMIT), moderator], { inviteOnly: true });
    // The moderator left: the channel stays in their `unsubscribed` list, without its subscribers.
    await t.ctx.db('subscriptions').where({ user_id: moderator.id, recipient_id: secret.recipient_id }).update({ active: false });
    const left = await register(t, moderator, { fetch_event_types: ['subscription'], include_subscribers: 'partial' });
    expect(byName(left.state.unsubscribed).get('private-big')).toMatchObject({
      subscriber_count: FULL_SUBSCRIBER_LIST_LIMIT,
      partial_subscribers: [],
    });
    // Administrators may list them.
    const { state } = await register(t, admin, { fetch_event_types: ['subscription'], include_subscribers: 'partial' });
    expect(sorted(byName(state.never_subscribed).get('private-big')!.partial_subscribers)).toEqual(sorted(recent));
  });
});
