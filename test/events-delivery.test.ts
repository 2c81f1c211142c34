import { createUserInTx } from '../src/actions/users';
import { inTransaction } from '../src/db/transaction';
import { parseSettings } from '../src/domain/user-settings';
import { eachDatabase } from './support/databases';
import { Client, pending, register, sendDirect, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import type { TestServer } from './support/server';

/** Each kind of change reaches the queues of the users who may see it, and only those. */
eachDatabase('events: who receives what', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
  });
  afterAll(() => stopEventsServer(t));

  const everyone = () => Promise.all([t.cast.owner, t.cast.admin, t.cast.member, t.cast.guest].map((u) => register(t, u)));
  const drain = (clients: Client[]) => Promise.all(clients.map((c) => pending(t, c)));
  /**
   * The message events only: a channel message can also change its sender's or a
   * mentioned user's policy for the topic (the automatic follow settings), whose
   * user_topic events test/automatic-topic-policies.test.ts checks.
   */
  const drainMessages = async (clients: Client[]) => (await drain(clients)).map((es) => es.filter((e) => e.type === 'message'));

  it('a channel message reaches its subscribers, each with their own flags', async () => {
    const [owner, admin, member, guest] = await everyone();
    const id = await sendToChannel(t, t.cast.owner, 'general', 'hello', 'Hi @**Test Member**');
    const [o, a, m, g] = await drainMessages([owner!, admin!, member!, guest!]);
    for (const events of [o, a, m, g]) expect(events!.map((e) => [e.type, e.message.id])).toEqual([['message', id]]);
    expect(m![0]!.flags).toEqual(['mentioned']);
    expect(a![0]!.flags).toEqual([]);
    expect(m![0]!.message).toMatchObject({ sender_id: t.cast.owner.id, display_recipient: 'general', subject: 'hello', type: 'stream' });
    expect(m![0]!.message).not.toHaveProperty('flags');
  });

  it('a private channel message reaches only its subscribers', async () => {
    const [owner, admin, member] = await everyone();
    const mod = await register(t, t.cast.moderator);
    await sendToChannel(t, t.cast.owner, 'secret', 'plans', 'quiet');
    expect((await drainMessages([owner!, mod, admin!, member!])).map((es) => es.length)).toEqual([1, 1, 0, 0]);
  });

  it('a direct message reaches its participants only', async () => {
    const [owner, admin, member] = await everyone();
    const id = await sendDirect(t, t.cast.member, [t.cast.owner], 'psst');
    const [o, a, m] = await drain([owner!, admin!, member!]);
    expect(o!.map((e) => e.message.id)).toEqual([id]);
    expect(m!.map((e) => e.message.id)).toEqual([id]);
    expect(a).toEqual([]);
    expect(o![0]!.message.display_recipient.map((r: { id: number }) => r.id).sort()).toEqual([t.cast.owner.id, t.cast.member.id].sort());
  });

  it('update_message_flags goes to the user who changed their flags', async () => {
    const id = await sendToChannel(t, t.cast.owner, 'general', 'flags', 'star me');
    const [owner, admin, member] = await everyone();
    await t.api.post('/messages/flags', t.cast.member, { messages: [id], op: 'add', flag: 'starred' });
    const [o, a, m] = await drain([owner!, admin!, member!]);
    expect([o, a]).toEqual([[], []]);
    expect(m).toEqual([{ id: 0, type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [id], all: false }]);
  });

  it('reactions go to everyone who received the message, added and removed', async () => {
    const id = await sendToChannel(t, t.cast.owner, 'secret', 'react', 'react here');
    const mod = await register(t, t.cast.moderator);
    const [owner, admin] = await everyone();
    await t.api.post(`/messages/${id}/reactions`, t.cast.moderator, { emoji_name: 'octopus' });
    await t.api.delete(`/messages/${id}/reactions`, t.cast.moderator, { emoji_name: 'octopus' });
    const [o, m, a] = await drain([owner!, mod, admin!]);
    const expected = ['add', 'remove'].map((op) =>
      expect.objectContaining({
        type: 'reaction',
        op,
        message_id: id,
        user_id: t.cast.moderator.id,
        // The deprecated object zulip-terminal reads the reacting user from.
        user: { user_id: t.cast.moderator.id, email: t.cast.moderator.email, full_name: 'Test Moderator' },
        emoji_name: 'octopus',
        reaction_type: 'unicode_emoji',
      }),
    );
    expect(o).toEqual(expected);
    expect(m).toEqual(expected);
    expect(a).toEqual([]);
  });

  it('realm_user add reaches every active user; the real email only those allowed to see it', async () => {
    const defaults = await t.ctx.db('realm_user_defaults').where({ realm_id: t.realmId }).first();
    await t.ctx
      .db('realm_user_defaults')
      .where({ realm_id: t.realmId })
      .update({ settings: JSON.stringify({ ...parseSettings(defaults!.settings), email_address_visibility: 3 }) });
    try {
      const [owner, admin, member, guest] = await everyone();
      const res = await t.api.post('/users', t.cast.owner, {
        email: 'newcomer@example.com',
        password: 'a-long-enough-passphrase',
        full_name: 'New Comer',
      });
      const got = await drain([owner!, admin!, member!, guest!]);
      for (const events of got) {
        expect(events).toEqual([
          expect.objectContaining({
            type: 'realm_user',
            op: 'add',
            person: expect.objectContaining({ user_id: res.body.user_id, full_name: 'New Comer' }),
          }),
        ]);
      }
      expect(got.map((events) => events[0]!.person.delivery_email)).toEqual(['newcomer@example.com', 'newcomer@example.com', null, null]);
    } finally {
      await t.ctx.db('realm_user_defaults').where({ realm_id: t.realmId }).update({ settings: defaults!.settings });
    }
  });

  it('a rolled-back change publishes nothing', async () => {
    const [admin] = await Promise.all([register(t, t.cast.admin)]);
    await expect(
      inTransaction(t.ctx.db, async (tx) => {
        await createUserInTx(tx, t.ctx.bus, { realmId: t.realmId, email: 'ghost@example.com', fullName: 'Ghost' });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await pending(t, admin)).toEqual([]);
  });
});
