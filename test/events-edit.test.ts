import { eachDatabase } from './support/databases';
import { pending, register, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import type { TestServer } from './support/server';

/** update_message and delete_message through GET /events: who gets them, and in what form. */
eachDatabase('edit and move events in queues', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  beforeAll(async () => {
    ({ t, general, secret } = await startEventsServer(dialect));
  });
  afterAll(() => stopEventsServer(t));

  it('delivers update_message with each receiver’s flags, whatever the queue’s narrow', async () => {
    const id = await sendToChannel(t, t.cast.member, 'general', 'news', 'hi @**Test Owner**');
    const owner = await register(t, t.cast.owner, { narrow: [{ operator: 'channel', operand: 'open' }] });
    const member = await register(t, t.cast.member, { event_types: ['update_message'] });
    const outsider = await register(t, t.cast.guest, { event_types: ['update_message'] });
    await t.ctx.db('subscriptions').where({ user_id: t.cast.guest.id, recipient_id: general.recipient_id }).update({ active: false });
    await t.ctx.db('user_messages').where({ user_id: t.cast.guest.id, message_id: id }).del();
    try {
      expect((await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'hi @**Test Owner**, edited' })).status).toBe(200);
      const [ownerEvent] = (await pending(t, owner)).filter((e) => e.type === 'update_message');
      expect(ownerEvent).toMatchObject({ message_id: id, message_ids: [id], content: 'hi @**Test Owner**, edited', flags: ['mentioned'] });
      const [memberEvent] = await pending(t, member);
      expect(memberEvent).toMatchObject({ message_id: id, flags: [] });
      expect(await pending(t, outsider)).toEqual([]);
    } finally {
      await t.ctx.db('subscriptions').where({ user_id: t.cast.guest.id, recipient_id: general.recipient_id }).update({ active: true });
    }
  });

  it('names the empty topic for clients without the empty_topic_name capability', async () => {
    const id = await sendToChannel(t, t.cast.member, 'general', 'named', 'to be renamed');
    const old = await register(t, t.cast.owner, { event_types: ['update_message'] });
    const modern = await register(t, t.cast.owner, { event_types: ['update_message'], client_capabilities: { empty_topic_name: true } });
    expect((await t.api.patch(`/messages/${id}`, t.cast.member, { topic: '' })).status).toBe(200);
    expect((await pending(t, old))[0]).toMatchObject({ orig_subject: 'named', subject: 'general chat', propagate_mode: 'change_one' });
    expect((await pending(t, modern))[0]).toMatchObject({ orig_subject: 'named', subject: '' });
  });

  it('sends delete_message to those who lose the messages, update_message to those who keep them', async () => {
    const id = await sendToChannel(t, t.cast.owner, 'general', 'moving', 'going private');
    const member = await register(t, t.cast.member, {
      event_types: ['update_message', 'delete_message'],
      client_capabilities: { bulk_message_deletion: true },
    });
    const moderator = await register(t, t.cast.moderator, { event_types: ['update_message', 'delete_message'] });
    const res = await t.api.patch(`/messages/${id}`, t.cast.owner, { stream_id: secret.id, send_notification_to_new_thread: false });
    expect(res.status).toBe(200);
    expect(await pending(t, member)).toEqual([
      expect.objectContaining({
        type: 'delete_message',
        message_ids: [id],
        message_type: 'stream',
        stream_id: general.id,
        topic: 'moving',
      }),
    ]);
    expect(await pending(t, moderator)).toEqual([
      expect.objectContaining({ type: 'update_message', message_ids: [id], stream_id: general.id, new_stream_id: secret.id }),
    ]);
  });
});
