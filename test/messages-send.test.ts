import request from 'supertest';
import { loadCaller } from '../src/access/viewer';
import { getRealmById } from '../src/queries/realms';
import { sendMessageInTx } from '../src/actions/messages';
import { inTransaction, Tx } from '../src/db/transaction';
import type { Delivery } from '../src/events/bus';
import { getChannelForSending } from '../src/queries/channels';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { createChannel, createMembers, startTestServer, subscribe, TestServer } from './support/server';

eachDatabase('POST /messages', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member, guest, bot } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, moderator, member, guest, bot]);
    await createChannel(t, 'open', [owner, admin]);
    secret = await createChannel(t, 'secret', [owner, moderator], { inviteOnly: true });
  });
  afterAll(() => t.close());

  const countMessages = async () => Number((await t.ctx.db('messages').count({ n: '*' }).first())!.n);
  const flagsOf = async (messageId: number) => {
    const rows = await t.ctx.db('user_messages').where({ message_id: messageId }).select('user_id', 'flags');
    return new Map(rows.map((r: any) => [r.user_id, Number(r.flags)]));
  };

  describe('to a channel', () => {
    it('sends by channel name, with a row per subscriber and the message readable', async () => {
      const res = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 'hello', content: 'Hi **all**' });
      expect(res.status).toBe(200);
      // The member started the topic: with the default automatically_follow_topics_policy they follow it now.
      expect(res.body).toEqual({ result: 'success', msg: '', id: expect.any(Number), automatic_new_visibility_policy: 3 });
      const flags = await flagsOf(res.body.id);
      expect([...flags.keys()].sort()).toEqual(
        [t.cast.owner, t.cast.admin, t.cast.moderator, t.cast.member, t.cast.guest, t.cast.bot].map((u) => u.id).sort(),
      );
      // API clients' own messages start unread (spec: only non-API clients mark them read).
      expect(flags.get(t.cast.member.id)! & 1).toBe(0);
      const got = await t.api.get(`/messages/${res.body.id}`, t.cast.guest);
      expect(got.body.message).toMatchObject({
        content: '<p>Hi <strong>all</strong></p>',
        subject: 'hello',
        display_recipient: 'general',
        stream_id: general.id,
        type: 'stream',
        sender_id: t.cast.member.id,
      });
      expect(got.body.raw_content).toBe('Hi **all**');
    });

    it('sends by channel id (type stream), marks it read for an interactive client', async () => {
      const res = await request(t.app)
        .post('/api/v1/messages')
        .auth(t.cast.member.email, t.cast.member.api_key)
        .set('User-Agent', 'ZulipMobile/27.200 (Android 14)')
        .type('form')
        .send({ type: 'stream', to: String(general.id), subject: 'legacy', content: 'via subject' });
      expect(res.status).toBe(200);
      const flags = await flagsOf(res.body.id);
      expect(flags.get(t.cast.member.id)! & 1).toBe(1);
      const row = await t.ctx.db('messages').where({ id: res.body.id }).first();
      expect([row!.topic, row!.sending_client]).toEqual(['legacy', 'ZulipMobile']);
    });

    it('refuses topic and subject together', async () => {
      const res = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 'a', subject: 'b', content: 'x' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: 'error',
        msg: "Can't decide between 'topic' and 'subject' arguments",
        code: 'REQUEST_CONFUSING_VAR',
        var_name1: 'topic',
        var_name2: 'subject',
      });
    });

    it.each([
      [
        'an unknown channel name',
        { to: 'nowhere' },
        { code: 'STREAM_DOES_NOT_EXIST', msg: "Channel 'nowhere' does not exist", stream: 'nowhere' },
      ],
      [
        'an unknown channel id',
        { to: 99999 },
        { code: 'STREAM_DOES_NOT_EXIST', msg: "Channel with ID '99999' does not exist", stream_id: 99999 },
      ],
      ['empty content', { content: '  \n ' }, { code: 'BAD_REQUEST', msg: 'Message must not be empty' }],
      ['a NUL byte', { content: 'a\u0000b' }, { code: 'BAD_REQUEST', msg: 'Message must not contain null bytes' }],
      ['a missing topic', { topic: undefined }, { code: 'BAD_REQUEST', msg: 'Missing topic' }],
      ['an unknown type', { type: 'carrier-pigeon' }, { code: 'BAD_REQUEST', msg: 'Invalid type' }],
      ['a JSON object where a channel belongs', { to: { a: 1 } }, { code: 'BAD_REQUEST', msg: 'Invalid to' }],
      [
        'a private channel one cannot see',
        { to: 'secret' },
        { code: 'STREAM_DOES_NOT_EXIST', msg: "Channel 'secret' does not exist", stream: 'secret' },
      ],
    ])('refuses %s and writes nothing', async (_what, override, expected) => {
      const before = await countMessages();
      const res = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 't', content: 'ok', ...override });
      expect([res.status, res.body]).toEqual([400, { result: 'error', ...expected }]);
      expect(await countMessages()).toBe(before);
    });

    it('truncates a long topic to 57 characters and an ellipsis, and reads the display name as the empty topic', async () => {
      const long = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 'x'.repeat(80), content: 'long' });
      expect((await t.ctx.db('messages').where({ id: long.body.id }).first())!.topic).toBe('x'.repeat(57) + '...');
      const empty = await t.api.post('/messages', t.cast.member, {
        type: 'channel',
        to: 'general',
        topic: 'general chat',
        content: 'empty',
      });
      expect((await t.ctx.db('messages').where({ id: empty.body.id }).first())!.topic).toBe('');
      const shown = await t.api.get(`/messages/${empty.body.id}`, t.cast.member);
      expect(shown.body.message.subject).toBe('general chat');
    });

    it('truncates content over 10000 characters with a marker', async () => {
      const res = await t.api.post('/messages', t.cast.member, {
        type: 'channel',
        to: 'general',
        topic: 'big',
        content: 'y'.repeat(12000),
      });
      const row = await t.ctx.db('messages').where({ id: res.body.id }).first();
      expect([...row!.content].length).toBe(10000);
      expect(row!.content.endsWith('\n[message truncated]')).toBe(true);
    });

    it('keeps guests to channels they are subscribed to, and refuses archived channels', async () => {
      const before = await countMessages();
      const res = await t.api.post('/messages', t.cast.guest, { type: 'channel', to: 'open', topic: 't', content: 'x' });
      // A public channel a guest is not subscribed to is one they cannot see.
      expect([res.status, res.body]).toEqual([
        400,
        { result: 'error', msg: "Channel 'open' does not exist", code: 'STREAM_DOES_NOT_EXIST', stream: 'open' },
      ]);
      await t.ctx.db('channels').where({ name: 'open' }).update({ deactivated: true });
      const archived = await t.api.post('/messages', t.cast.admin, { type: 'channel', to: 'open', topic: 't', content: 'x' });
      expect([archived.status, archived.body]).toEqual([
        400,
        { result: 'error', msg: "Not authorized to send to channel 'open'", code: 'BAD_REQUEST' },
      ]);
      expect(await countMessages()).toBe(before);
      await t.ctx.db('channels').where({ name: 'open' }).update({ deactivated: false });
    });

    it('lets an administrator see but not post to a private channel they are not in', async () => {
      const res = await t.api.post('/messages', t.cast.admin, { type: 'channel', to: 'secret', topic: 't', content: 'x' });
      expect([res.status, res.body]).toEqual([
        400,
        { result: 'error', msg: "Not authorized to send to channel 'secret'", code: 'BAD_REQUEST' },
      ]);
    });

    it('applies can_send_message_group and can_create_topic_group', async () => {
      const admins = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:administrators' }).first('id');
      await t.ctx.db('channels').where({ id: general.id }).update({ can_send_message_group: admins!.id });
      const refused = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 't', content: 'x' });
      expect([refused.status, refused.body]).toEqual([
        400,
        { result: 'error', msg: 'You do not have permission to post in this channel.', code: 'BAD_REQUEST' },
      ]);
      expect((await t.api.post('/messages', t.cast.admin, { type: 'channel', to: 'general', topic: 't', content: 'x' })).status).toBe(200);
      const everyone = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:everyone' }).first('id');
      await t.ctx
        .db('channels')
        .where({ id: general.id })
        .update({ can_send_message_group: everyone!.id, can_create_topic_group: admins!.id });
      const newTopic = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 'brand new', content: 'x' });
      expect([newTopic.status, newTopic.body]).toEqual([
        400,
        { result: 'error', msg: 'You do not have permission to create new topics in this channel.', code: 'BAD_REQUEST' },
      ]);
      const oldTopic = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 'T', content: 'x' });
      expect(oldTopic.status).toBe(200); // topics match case-insensitively
      await t.ctx.db('channels').where({ id: general.id }).update({ can_create_topic_group: everyone!.id });
    });

    it('applies the channel topics policy', async () => {
      await t.ctx.db('channels').where({ id: general.id }).update({ topics_policy: 'disable_empty_topic' });
      const empty = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: '', content: 'x' });
      expect([empty.status, empty.body]).toEqual([
        400,
        { result: 'error', msg: 'Sending messages to the general chat is not allowed in this channel.', code: 'BAD_REQUEST' },
      ]);
      await t.ctx.db('channels').where({ id: general.id }).update({ topics_policy: 'empty_topic_only' });
      const named = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 'named', content: 'x' });
      expect([named.status, named.body]).toEqual([
        400,
        { result: 'error', msg: 'Only the general chat topic is allowed in this channel.', code: 'BAD_REQUEST' },
      ]);
      await t.ctx.db('channels').where({ id: general.id }).update({ topics_policy: 'inherit' });
    });
  });

  describe('mentions', () => {
    it('sets mentioned for a direct mention, not for a silent one, and wildcard flags for @all', async () => {
      const direct = await t.api.post('/messages', t.cast.owner, {
        type: 'channel',
        to: 'general',
        topic: 'm',
        content: 'hi @**Test Member**',
      });
      expect((await flagsOf(direct.body.id)).get(t.cast.member.id)! & 8).toBe(8);
      expect((await flagsOf(direct.body.id)).get(t.cast.guest.id)! & 8).toBe(0);
      const silent = await t.api.post('/messages', t.cast.owner, {
        type: 'channel',
        to: 'general',
        topic: 'm',
        content: 'hi @_**Test Member**',
      });
      expect((await flagsOf(silent.body.id)).get(t.cast.member.id)! & 8).toBe(0);
      const all = await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'general', topic: 'm', content: 'hey @**all**' });
      const flags = await flagsOf(all.body.id);
      expect(flags.get(t.cast.guest.id)! & 16).toBe(16);
      const fetched = await t.api.get(`/messages/${all.body.id}`, t.cast.guest);
      expect(fetched.body.message.flags).toEqual(expect.arrayContaining(['stream_wildcard_mentioned', 'wildcard_mentioned']));
    });

    it('sets topic_wildcard_mentioned for the topic participants only', async () => {
      await t.api.post('/messages', t.cast.guest, { type: 'channel', to: 'general', topic: 'tw', content: 'first' });
      const res = await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'general', topic: 'tw', content: '@**topic** look' });
      const flags = await flagsOf(res.body.id);
      expect(flags.get(t.cast.guest.id)! & 32).toBe(32);
      expect(flags.get(t.cast.member.id)! & 32).toBe(0);
    });

    it('refuses a channel wildcard in a busy channel from someone outside can_mention_many_users_group', async () => {
      const crowd = await createMembers(t, 'crowd', 16);
      const busy = await createChannel(t, 'busy', [t.cast.member, t.cast.admin, ...crowd]);
      const before = await countMessages();
      const res = await t.api.post('/messages', t.cast.member, {
        type: 'channel',
        to: busy.id,
        topic: 'x',
        content: '@**everyone** hello',
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: 'error',
        code: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
        msg: 'You do not have permission to use channel wildcard mentions in this channel.',
      });
      expect(await countMessages()).toBe(before);
      expect(
        (await t.api.post('/messages', t.cast.admin, { type: 'channel', to: busy.id, topic: 'x', content: '@**everyone** hello' })).status,
      ).toBe(200);
    });
  });

  describe('channel, topic and message links', () => {
    const linkHtml = (inner: string) => `<p>${inner}</p>`;

    it("links the empty topic with #**channel>**, shown as the empty topic's display name in <em> (feature level 346)", async () => {
      const res = await t.api.post('/messages', t.cast.member, {
        type: 'channel',
        to: 'general',
        topic: 'links',
        content: 'see #**general>**',
      });
      expect(res.status).toBe(200);
      const got = await t.api.get(`/messages/${res.body.id}`, t.cast.member);
      expect(got.body.message.content).toBe(
        linkHtml(
          `see <a class="stream-topic" data-stream-id="${general.id}" href="/#narrow/channel/${general.id}-general/topic/">` +
            '#general &gt; <em>general chat</em></a>',
        ),
      );
      const preview = await t.api.post('/messages/render', t.cast.member, { content: '#**general>**' });
      expect(preview.body.rendered).toBe(
        linkHtml(
          `<a class="stream-topic" data-stream-id="${general.id}" href="/#narrow/channel/${general.id}-general/topic/">` +
            '#general &gt; <em>general chat</em></a>',
        ),
      );
    });

    it('links a message in the empty topic with #**channel>@id**, and in a named topic with #**channel>topic@id**', async () => {
      const target = await t.api.post('/messages', t.cast.member, {
        type: 'channel',
        to: 'general',
        topic: '',
        content: 'in general chat',
      });
      const id = target.body.id as number;
      const res = await t.api.post('/messages/render', t.cast.member, { content: `#**general>@${id}** and #**general>lunch@${id}**` });
      expect(res.body.rendered).toBe(
        linkHtml(
          `<a class="message-link" href="/#narrow/channel/${general.id}-general/topic//near/${id}">` +
            '#general &gt; <em>general chat</em> @ 💬</a> and ' +
            `<a class="message-link" href="/#narrow/channel/${general.id}-general/topic/lunch/near/${id}">` +
            '#general &gt; lunch @ 💬</a>',
        ),
      );
    });

    it('leaves the syntax to Markdown for a channel the sender does not know', async () => {
      const res = await t.api.post('/messages/render', t.cast.member, { content: '#**nowhere>** #**nowhere>@5**' });
      expect(res.body.rendered).toBe(linkHtml('#<strong>nowhere&gt;</strong> #<strong>nowhere&gt;@5</strong>'));
    });
  });

  describe('direct messages', () => {
    it('sends 1:1 by ids, and both directions share a recipient_id', async () => {
      const a = await t.api.post('/messages', t.cast.member, { type: 'direct', to: [t.cast.moderator.id], content: 'ping' });
      const b = await t.api.post('/messages', t.cast.moderator, {
        type: 'private',
        to: JSON.stringify([t.cast.member.email]),
        content: 'pong',
      });
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      const ma = (await t.api.get(`/messages/${a.body.id}`, t.cast.member)).body.message;
      const mb = (await t.api.get(`/messages/${b.body.id}`, t.cast.member)).body.message;
      expect(ma.recipient_id).toBe(mb.recipient_id);
      expect(ma.type).toBe('private');
      expect(ma.subject).toBe('');
      expect(ma.display_recipient.map((u: any) => u.id).sort()).toEqual([t.cast.moderator.id, t.cast.member.id].sort());
      const flags = await flagsOf(a.body.id);
      expect([...flags.keys()].sort()).toEqual([t.cast.member.id, t.cast.moderator.id].sort());
      expect(flags.get(t.cast.moderator.id)! & 2048).toBe(2048); // is_private, never on the wire
      expect(ma.flags).not.toContain('is_private');
    });

    it('sends to a group by a comma-separated email string', async () => {
      const res = await t.api.post('/messages', t.cast.member, {
        type: 'direct',
        to: `${t.cast.owner.email}, ${t.cast.admin.email}`,
        content: 'group',
      });
      expect(res.status).toBe(200);
      expect((await flagsOf(res.body.id)).size).toBe(3);
    });

    it.each([
      ['an unknown user id', [99999], 'Invalid user ID 99999'],
      ['an unknown email', ['ghost@example.com'], "Invalid email 'ghost@example.com'"],
      ['mixed ids and emails', [1, 'owner@example.com'], 'Recipient lists may contain emails or user IDs, but not both.'],
      ['a deactivated user', ['deactivated@example.com'], "'deactivated@example.com' is no longer using Zulip."],
    ])('refuses %s', async (_what, to, msg) => {
      const before = await countMessages();
      const res = await t.api.post('/messages', t.cast.member, { type: 'direct', to, content: 'x' });
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg, code: 'BAD_REQUEST' }]);
      expect(await countMessages()).toBe(before);
    });
  });

  describe('events', () => {
    /** The deliveries the bus saw while `work` ran. */
    const capture = async <T>(work: () => Promise<T>): Promise<{ result: T; seen: Delivery[] }> => {
      const seen: Delivery[] = [];
      const off = t.ctx.bus.subscribe((d) => seen.push(d));
      try {
        return { result: await work(), seen };
      } finally {
        off();
      }
    };
    /** The send POST /messages makes, inside a transaction the test controls. */
    const sendIn = async (tx: Tx, content: string) => {
      const { channel } = (await getChannelForSending(tx.trx, t.realmId, 'general'))!;
      const viewer = await loadCaller(tx.trx, t.cast.owner, (await getRealmById(tx.trx, t.realmId))!);
      const id = await sendMessageInTx(tx, t.ctx.bus, viewer, { kind: 'channel', channel, topic: 'tx' }, content, {
        client: 'test',
        readBySender: false,
      });
      // On MariaDB the id is known once the held insert is sent: a round trip here.
      return tx.idOf(id);
    };

    it('publishes the message with each receiver its own flags', async () => {
      const { result: res, seen } = await capture(() =>
        t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'general', topic: 'ev', content: 'hello @**Test Guest**' }),
      );
      // The sender started the topic and the guest is mentioned: both now follow it
      // (the automatic policies), which their own queues hear of before the message.
      expect(seen.map((d) => [d.event.type, d.userIds])).toEqual([
        ['muted_topics', [t.cast.owner.id]],
        ['user_topic', [t.cast.owner.id]],
        ['muted_topics', [t.cast.guest.id]],
        ['user_topic', [t.cast.guest.id]],
        ['message', expect.any(Array)],
      ]);
      const d = seen.at(-1)!;
      expect((d.event.message as { id: number }).id).toBe(res.body.id);
      expect(d.userIds).toEqual(expect.arrayContaining([t.cast.guest.id, t.cast.member.id]));
      expect(d.perUser!(t.cast.guest.id).flags).toContain('mentioned');
      expect(d.perUser!(t.cast.member.id).flags).not.toContain('mentioned');
      const refused = await capture(() =>
        t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'general', topic: 'ev', content: '' }),
      );
      expect(refused.seen).toHaveLength(0);
    });

    it('publishes nothing for a send whose transaction rolls back after queuing its event', async () => {
      const before = await countMessages();
      const later = new Error('a later step of the same transaction failed');
      let queuedId = 0;
      const { result, seen } = await capture(() =>
        inTransaction(t.ctx.db, async (tx) => {
          queuedId = await sendIn(tx, 'never committed');
          throw later;
        }).catch((e: unknown) => e),
      );
      expect(result).toBe(later);
      expect(queuedId).toBeGreaterThan(0); // the send ran to its end: its event was queued
      expect(seen).toEqual([]);
      expect(await countMessages()).toBe(before);
      expect(await t.ctx.db('user_messages').where({ message_id: queuedId }).count({ n: '*' })).toEqual([{ n: 0 }]);
    });

    it('publishes once, for the stored message, when the transaction is retried', async () => {
      const before = await countMessages();
      const ids: number[] = [];
      const { result: id, seen } = await capture(() =>
        inTransaction(t.ctx.db, async (tx) => {
          ids.push(await sendIn(tx, 'sent on the second attempt'));
          if (ids.length === 1) throw Object.assign(new Error('Deadlock found when trying to get lock'), { errno: 1213 });
          return ids.at(-1)!;
        }),
      );
      expect(ids).toHaveLength(2);
      expect(await countMessages()).toBe(before + 1);
      expect(await t.ctx.db('messages').where({ content: 'sent on the second attempt' }).pluck('id')).toEqual([id]);
      const messages = seen.filter((d) => d.event.type === 'message');
      expect(messages.map((d) => (d.event.message as { id: number }).id)).toEqual([id]);
    });
  });

  it('subscribing later to a private channel with protected history gives what comes after, not what came before', async () => {
    const sendAs = async (user: UserRow, content: string) => {
      const res = await t.api.post('/messages', user, { type: 'channel', to: 'secret', topic: 'history', content });
      expect([res.status, res.body.result]).toEqual([200, 'success']);
      return res.body.id as number;
    };
    const readable = async (user: UserRow) => {
      const res = await t.api.get('/messages', user, {
        anchor: 'oldest',
        num_before: 0,
        num_after: 100,
        narrow: [{ operator: 'channel', operand: 'secret' }],
      });
      expect(res.status).toBe(200);
      return (res.body.messages as Array<{ id: number }>).map((m) => m.id);
    };
    const before = await sendAs(t.cast.owner, 'said before the member joined');
    await subscribe(t, secret, [t.cast.member]);
    const own = await sendAs(t.cast.member, 'now I can post');
    const after = await sendAs(t.cast.owner, 'said after the member joined');
    expect(await readable(t.cast.member)).toEqual([own, after]);
    expect(await readable(t.cast.owner)).toEqual(expect.arrayContaining([before, own, after]));
    const earlier = await t.api.get(`/messages/${before}`, t.cast.member);
    expect([earlier.status, earlier.body]).toEqual([400, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' }]);
    expect((await t.api.get(`/messages/${after}`, t.cast.member)).body.message.content).toBe('<p>said after the member joined</p>');
  });
});
