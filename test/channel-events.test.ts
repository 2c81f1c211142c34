import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import { createChannel, startTestServer, TestServer } from './support/server';

/** Channel and subscription changes reach event queues, in the contract's shapes, for the right users. */
eachDatabase('channel and subscription events', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    await createChannel(t, 'general', [t.cast.owner, t.cast.admin, t.cast.member, t.cast.guest]);
  });
  afterAll(() => t.close());

  it('announces a new public channel, the new subscriptions and the peers', async () => {
    const member = await register(t, t.cast.member);
    const moderator = await register(t, t.cast.moderator);
    const guest = await register(t, t.cast.guest);
    const res = await t.api.post('/channels/create', t.cast.admin, {
      name: 'events-room',
      subscribers: [t.cast.admin.id, t.cast.member.id],
    });
    expect(res.status).toBe(200);
    const m = await pending(t, member);
    expect(m.map((e) => `${e.type}/${e.op}`)).toEqual(expect.arrayContaining(['stream/create', 'subscription/add']));
    expect(m.find((e) => e.op === 'add')!.subscriptions[0]).toMatchObject({ stream_id: res.body.id, name: 'events-room' });
    const mod = await pending(t, moderator);
    expect(mod.find((e) => e.type === 'stream')?.streams[0].name).toBe('events-room');
    expect(mod.find((e) => e.op === 'peer_add')).toMatchObject({
      stream_ids: [res.body.id],
      user_ids: [t.cast.admin.id, t.cast.member.id],
    });
    expect((await pending(t, guest)).filter((e) => e.type === 'stream' || e.type === 'subscription')).toEqual([]);
  });

  it('tells only subscribers and administrators about a private channel', async () => {
    const member = await register(t, t.cast.member);
    const owner = await register(t, t.cast.owner);
    await t.api.post('/channels/create', t.cast.moderator, { name: 'quiet-room', subscribers: [t.cast.moderator.id], invite_only: true });
    expect((await pending(t, member)).filter((e) => e.type === 'stream')).toEqual([]);
    expect((await pending(t, owner)).filter((e) => e.type === 'stream').length).toBe(1);
  });

  it('reports leaving: remove to the user, peer_remove to the others', async () => {
    const member = await register(t, t.cast.member);
    const owner = await register(t, t.cast.owner);
    const res = await t.api.delete('/users/me/subscriptions', t.cast.member, { subscriptions: ['events-room'] });
    expect(res.body.removed).toEqual(['events-room']);
    const mine = (await pending(t, member)).filter((e) => e.type === 'subscription');
    expect(mine).toEqual([expect.objectContaining({ op: 'remove', subscriptions: [expect.objectContaining({ name: 'events-room' })] })]);
    expect((await pending(t, owner)).find((e) => e.op === 'peer_remove')).toMatchObject({ user_ids: [t.cast.member.id] });
  });

  it('sends nothing for a failed subscribe', async () => {
    const member = await register(t, t.cast.member);
    const res = await t.api.post('/users/me/subscriptions', t.cast.member, { subscriptions: [{ name: 'fine-room' }, { name: '' }] });
    expect([res.status, res.body]).toEqual([400, { result: 'error', msg: "Channel name can't be empty.", code: 'BAD_REQUEST' }]);
    expect((await pending(t, member)).filter((e) => e.type !== 'heartbeat')).toEqual([]);
  });
});

eachDatabase('reaction event audience', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  it('reaches subscribers who joined after the message, in a channel with shared history', async () => {
    await createChannel(t, 'reacts', [t.cast.owner]);
    const sent = await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'reacts', topic: 'r', content: 'react to me' });
    await t.api.post('/users/me/subscriptions', t.cast.member, { subscriptions: [{ name: 'reacts' }] });
    const member = await register(t, t.cast.member, { event_types: ['reaction'] });
    await t.api.post(`/messages/${sent.body.id}/reactions`, t.cast.owner, { emoji_name: 'tada' });
    const events = await pending(t, member);
    expect(events.map((e) => `${e.type}/${e.op}/${e.message_id}`)).toEqual([`reaction/add/${sent.body.id}`]);
  });
});
