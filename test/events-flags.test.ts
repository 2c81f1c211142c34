import { eachDatabase } from './support/databases';
import { pending, register, sendDirect, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import { createChannel, TestServer } from './support/server';

/** update_message_flags events, and the message_details that come with marking messages unread. */
eachDatabase('update_message_flags events', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let quiet: { id: number; recipient_id: number };
  beforeAll(async () => {
    ({ t, general } = await startEventsServer(dialect));
    quiet = await createChannel(t, 'quiet-flags', [t.cast.owner, t.cast.member]);
    await t.ctx.db('subscriptions').where({ user_id: t.cast.member.id, recipient_id: quiet.recipient_id }).update({ is_muted: true });
  });
  afterAll(() => stopEventsServer(t));

  const setFlag = (ids: number[], op: 'add' | 'remove', flag = 'read') =>
    t.api.post('/messages/flags', t.cast.member, { messages: ids, op, flag });

  it('describes each message marked unread so the client can count it again', async () => {
    const { owner, admin, member } = t.cast;
    const mention = await sendToChannel(t, owner, 'general', 'Plans', 'hi @**Test Member**');
    const noTopic = await sendToChannel(t, owner, 'general', '', 'no topic');
    const mutedWildcard = await sendToChannel(t, owner, 'quiet-flags', 'shh', '@**all** in a muted channel');
    const dm = await sendDirect(t, owner, [member], 'direct @**Test Member**');
    const group = await sendDirect(t, admin, [member, owner], 'group');
    const self = await sendDirect(t, member, [member], 'note to self');
    const ids = [mention, noTopic, mutedWildcard, dm, group, self];
    expect((await setFlag(ids, 'add')).status).toBe(200);

    const modern = await register(t, member, { event_types: ['update_message_flags'], client_capabilities: { empty_topic_name: true } });
    const legacy = await register(t, member, { event_types: ['update_message_flags'] });
    const res = await setFlag(ids, 'remove');
    expect(res.body.messages).toEqual(ids);

    const [event] = await pending(t, modern);
    expect(event).toMatchObject({
      type: 'update_message_flags',
      op: 'remove',
      operation: 'remove',
      flag: 'read',
      messages: ids,
      all: false,
    });
    expect(event!.message_details).toEqual({
      [mention]: { type: 'stream', stream_id: general.id, topic: 'Plans', unmuted_stream_msg: true, mentioned: true },
      [noTopic]: { type: 'stream', stream_id: general.id, topic: '', unmuted_stream_msg: true },
      // A wildcard in a muted channel is not a mention for unread counts (as in unread_msgs.mentions).
      [mutedWildcard]: { type: 'stream', stream_id: quiet.id, topic: 'shh', unmuted_stream_msg: false },
      [dm]: { type: 'private', user_ids: [owner.id], mentioned: true },
      [group]: { type: 'private', user_ids: [owner.id, admin.id].sort((a, b) => a - b) },
      [self]: { type: 'private', user_ids: [] },
    });
    // Without empty_topic_name the empty topic is named, as everywhere else.
    const [old] = await pending(t, legacy);
    expect(old!.message_details[noTopic]).toEqual({
      type: 'stream',
      stream_id: general.id,
      topic: 'general chat',
      unmuted_stream_msg: true,
    });
    expect(old!.message_details[mention]).toEqual(event!.message_details[mention]);
  });

  it('agrees with what a fresh register shows as unread', async () => {
    const a = await sendToChannel(t, t.cast.owner, 'general', 'agree', 'one @**all**');
    await setFlag([a], 'add');
    const client = await register(t, t.cast.member, { event_types: ['update_message_flags'] });
    await setFlag([a], 'remove');
    const [event] = await pending(t, client);
    const state = (await register(t, t.cast.member, { fetch_event_types: ['message', 'update_message_flags'] })).state;
    expect(state.unread_msgs.mentions).toContain(a);
    expect(event!.message_details[a]).toMatchObject({ mentioned: true, topic: 'agree' });
  });

  it('also comes with POST /messages/flags/narrow', async () => {
    const a = await sendToChannel(t, t.cast.owner, 'general', 'narrowed', 'one');
    await setFlag([a], 'add');
    const client = await register(t, t.cast.member, { event_types: ['update_message_flags'] });
    const res = await t.api.post('/messages/flags/narrow', t.cast.member, {
      anchor: a,
      num_before: 0,
      num_after: 0,
      narrow: [{ operator: 'topic', operand: 'narrowed' }],
      op: 'remove',
      flag: 'read',
    });
    expect(res.body.updated_count).toBe(1);
    const [event] = await pending(t, client);
    expect(event!.message_details).toEqual({ [a]: { type: 'stream', stream_id: general.id, topic: 'narrowed', unmuted_stream_msg: true } });
  });

  it('is left out of every other flag change', async () => {
    const a = await sendToChannel(t, t.cast.owner, 'general', 'other', 'one');
    const client = await register(t, t.cast.member, { event_types: ['update_message_flags'] });
    await setFlag([a], 'add');
    await setFlag([a], 'add', 'starred');
    await setFlag([a], 'remove', 'starred');
    const events = await pending(t, client);
    expect(events.map((e) => `${e.op}/${e.flag}`)).toEqual(['add/read', 'add/starred', 'remove/starred']);
    for (const e of events) expect(e).not.toHaveProperty('message_details');
  });
});
