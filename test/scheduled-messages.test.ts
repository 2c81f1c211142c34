import { startScheduledDelivery } from '../src/actions/scheduled-delivery';
import type { ScheduledMessageRow } from '../src/queries/scheduled-messages';
import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import type { TestServer } from './support/server';
import { createChannel, startTestServer } from './support/server';

const now = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

eachDatabase('scheduled messages', (dialect) => {
  let t: TestServer;
  let channelId: number;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const c = await createChannel(t, 'castle', [t.cast.owner, t.cast.admin, t.cast.moderator, t.cast.member, t.cast.guest]);
    channelId = c.id;
    // Migrating MariaDB's template database takes tens of seconds on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const later = (s = 3600) => now() + s;
  const count = async () => Number(((await t.ctx.db('scheduled_messages').count('* as n')) as Array<{ n: number }>)[0]!.n);
  const schedule = async (user = t.cast.member, fields: Record<string, unknown> = {}) => {
    const res = await t.api.post('/scheduled_messages', user, {
      type: 'stream',
      to: channelId,
      topic: 'plans',
      content: 'See you **soon**',
      scheduled_delivery_timestamp: later(),
      ...fields,
    });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.scheduled_message_id as number;
  };
  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  const notFound = { result: 'error', msg: 'Scheduled message does not exist', code: 'BAD_REQUEST' };

  describe('POST /scheduled_messages', () => {
    it.each(['owner', 'admin', 'moderator', 'member', 'guest'] as const)(
      '%s may schedule a channel message they could send',
      async (who) => {
        const user = t.cast[who];
        const ts = later();
        const id = await schedule(user, { scheduled_delivery_timestamp: ts });
        const list = await t.api.get('/scheduled_messages', user);
        expect(list.body.scheduled_messages).toContainEqual({
          scheduled_message_id: id,
          type: 'stream',
          to: channelId,
          topic: 'plans',
          content: 'See you **soon**',
          rendered_content: '<p>See you <strong>soon</strong></p>',
          scheduled_delivery_timestamp: ts,
          failed: false,
        });
      },
    );

    it('schedules a direct message; `to` shows the other participants, or the sender alone for a note to self', async () => {
      const ts = later();
      const a = await schedule(t.cast.member, {
        type: 'direct',
        to: [t.cast.admin.id, t.cast.member.id],
        content: 'hi',
        scheduled_delivery_timestamp: ts,
      });
      const self = await schedule(t.cast.member, {
        type: 'private',
        to: [t.cast.member.id],
        content: 'note',
        scheduled_delivery_timestamp: ts,
      });
      const bot = await schedule(t.cast.bot, { type: 'direct', to: [t.cast.owner.id], content: 'beep', scheduled_delivery_timestamp: ts });
      const list = (await t.api.get('/scheduled_messages', t.cast.member)).body.scheduled_messages;
      expect(list.find((m: { scheduled_message_id: number }) => m.scheduled_message_id === a)).toEqual({
        scheduled_message_id: a,
        type: 'private',
        to: [t.cast.admin.id],
        content: 'hi',
        rendered_content: '<p>hi</p>',
        scheduled_delivery_timestamp: ts,
        failed: false,
      });
      expect(list.find((m: { scheduled_message_id: number }) => m.scheduled_message_id === self).to).toEqual([t.cast.member.id]);
      expect(
        (await t.api.get('/scheduled_messages', t.cast.bot)).body.scheduled_messages.map(
          (m: { scheduled_message_id: number }) => m.scheduled_message_id,
        ),
      ).toEqual([bot]);
      // read_by_sender: the API client's default is false; a note to self stays unread whatever the client.
      const rows = await t.ctx.db('scheduled_messages').whereIn('id', [a, self]).orderBy('id').select('read_by_sender');
      expect(rows.map((r: { read_by_sender: unknown }) => Boolean(r.read_by_sender))).toEqual([false, false]);
    });

    it.each([
      ['a time in the past', { scheduled_delivery_timestamp: 1000 }, 'Scheduled delivery time must be in the future.'],
      ['the present second', { scheduled_delivery_timestamp: 'NOW' }, 'Scheduled delivery time must be in the future.'],
      ['an empty content', { content: '  ' }, 'Message must not be empty'],
      ['a channel given as a list', { to: 'LIST' }, 'Invalid data type for channel ID'],
      ['direct recipients given as one number', { type: 'direct', to: 'ONE' }, 'Invalid data type for recipients'],
      ['an unknown user', { type: 'direct', to: [999999] }, 'Invalid user ID 999999'],
      ['a channel message without a topic', { topic: undefined }, 'Missing topic'],
    ])('refuses %s, storing nothing', async (_name, fields, msg) => {
      const before = await count();
      const f: Record<string, unknown> = {
        type: 'stream',
        to: channelId,
        topic: 'plans',
        content: 'x',
        scheduled_delivery_timestamp: later(),
        ...fields,
      };
      if (f.scheduled_delivery_timestamp === 'NOW') f.scheduled_delivery_timestamp = now();
      if (f.to === 'LIST') f.to = [channelId];
      if (f.to === 'ONE') f.to = t.cast.admin.id;
      if (f.topic === undefined) delete f.topic;
      const res = await t.api.post('/scheduled_messages', t.cast.member, f);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(msg));
      expect(await count()).toBe(before);
    });

    it('refuses a channel the caller cannot see, as a missing one', async () => {
      const secret = await createChannel(t, 'secret-sched', [t.cast.owner], { inviteOnly: true });
      const before = await count();
      const res = await t.api.post('/scheduled_messages', t.cast.member, {
        type: 'stream',
        to: secret.id,
        topic: 'x',
        content: 'x',
        scheduled_delivery_timestamp: later(),
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: 'error',
        msg: `Channel with ID '${secret.id}' does not exist`,
        code: 'STREAM_DOES_NOT_EXIST',
        stream_id: secret.id,
      });
      expect(await count()).toBe(before);
    });

    it('checks the channel as a send does: a guest cannot reach a public channel it is not in', async () => {
      const open = await createChannel(t, 'open-sched', [t.cast.owner]);
      const res = await t.api.post('/scheduled_messages', t.cast.guest, {
        type: 'stream',
        to: open.id,
        topic: 'x',
        content: 'x',
        scheduled_delivery_timestamp: later(),
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('STREAM_DOES_NOT_EXIST');
    });
  });

  describe('PATCH /scheduled_messages/{id}', () => {
    it('changes what is sent, merging with what is stored, and clears the client', async () => {
      const id = await schedule();
      const ts = later(7200);
      let res = await t.api.patch(`/scheduled_messages/${id}`, t.cast.member, { content: 'changed', scheduled_delivery_timestamp: ts });
      expect(res.status).toBe(200);
      let row = (await t.ctx.db('scheduled_messages').where({ id }).first())!;
      expect(row).toMatchObject({ content: 'changed', rendered_content: '<p>changed</p>', topic: 'plans', channel_id: channelId });
      expect(Number(row.scheduled_timestamp)).toBe(ts);
      res = await t.api.patch(`/scheduled_messages/${id}`, t.cast.member, { topic: 'new topic' });
      expect(res.status).toBe(200);
      res = await t.api.patch(`/scheduled_messages/${id}`, t.cast.member, { type: 'direct', to: [t.cast.admin.id] });
      expect(res.status).toBe(200);
      row = (await t.ctx.db('scheduled_messages').where({ id }).first())!;
      expect(row).toMatchObject({ channel_id: null, topic: '', content: 'changed' });
      expect(JSON.parse(row.to_user_ids!)).toEqual([t.cast.admin.id]);
      // A topic alone is ignored for a direct message.
      res = await t.api.patch(`/scheduled_messages/${id}`, t.cast.member, { topic: 'ignored' });
      expect(res.status).toBe(200);
      expect((await t.ctx.db('scheduled_messages').where({ id }).first())!.topic).toBe('');
    });

    it.each([
      ['nothing', {}, 'Nothing to change'],
      ['a type without recipients', { type: 'direct' }, 'Recipient required when updating type of scheduled message.'],
      [
        'a channel type without a topic',
        { type: 'channel', to: 'CHANNEL' },
        'Topic required when updating scheduled message type to channel.',
      ],
      ['a time in the past', { scheduled_delivery_timestamp: 5 }, 'Scheduled delivery time must be in the future.'],
      ['an empty content', { content: '' }, 'Message must not be empty'],
    ])('refuses %s, changing nothing', async (_name, fields, msg) => {
      const id = await schedule();
      const before = (await t.ctx.db('scheduled_messages').where({ id }).first())!;
      const f: Record<string, unknown> = { ...fields };
      if (f.to === 'CHANNEL') f.to = channelId;
      const res = await t.api.patch(`/scheduled_messages/${id}`, t.cast.member, f);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(msg));
      expect(await t.ctx.db('scheduled_messages').where({ id }).first())!.toEqual(before);
    });

    it("answers another user's scheduled message as a missing one", async () => {
      const theirs = await schedule(t.cast.admin);
      for (const id of [theirs, theirs + 100000]) {
        const res = await t.api.patch(`/scheduled_messages/${id}`, t.cast.member, { content: 'stolen' });
        expect(res.status).toBe(404);
        expect(res.body).toEqual(notFound);
      }
      expect((await t.ctx.db('scheduled_messages').where({ id: theirs }).first())!.content).toBe('See you **soon**');
    });

    it('refuses a message already sent, and needs a new time for a failed one', async () => {
      const sent = await schedule();
      await t.ctx.db('scheduled_messages').where({ id: sent }).update({ delivered: true });
      let res = await t.api.patch(`/scheduled_messages/${sent}`, t.cast.member, { content: 'late' });
      expect(res.body).toEqual(refusal('Scheduled message was already sent'));
      const failed = await schedule();
      await t.ctx.db('scheduled_messages').where({ id: failed }).update({ failed: true, failure_message: 'x' });
      res = await t.api.patch(`/scheduled_messages/${failed}`, t.cast.member, { content: 'again' });
      expect(res.body).toEqual(refusal('Scheduled delivery time must be in the future.'));
      res = await t.api.patch(`/scheduled_messages/${failed}`, t.cast.member, { scheduled_delivery_timestamp: later() });
      expect(res.status).toBe(200);
      expect(await t.ctx.db('scheduled_messages').where({ id: failed }).first('failed', 'failure_message'))!.toMatchObject({
        failure_message: null,
      });
    });
  });

  describe('DELETE /scheduled_messages/{id}', () => {
    it("deletes the caller's own; another user's and a missing one are 404", async () => {
      const id = await schedule();
      const theirs = await schedule(t.cast.admin);
      expect((await t.api.delete(`/scheduled_messages/${theirs}`, t.cast.member)).body).toEqual(notFound);
      const res = await t.api.delete(`/scheduled_messages/${id}`, t.cast.member);
      expect(res.status).toBe(200);
      expect(await t.ctx.db('scheduled_messages').where({ id }).first())!.toBeUndefined();
      expect((await t.api.delete(`/scheduled_messages/${id}`, t.cast.member)).body).toEqual(notFound);
      expect(await t.ctx.db('scheduled_messages').where({ id: theirs }).first('id'))!.toEqual({ id: theirs });
    });
  });

  describe('events and POST /register', () => {
    it('add, update and remove reach the sender’s queues only; register lists them', async () => {
      const owner = t.cast.moderator;
      const mine = await register(t, owner, { event_types: ['scheduled_messages'] });
      const other = await register(t, t.cast.admin, { event_types: ['scheduled_messages'] });
      const ts = later();
      const id = await schedule(owner, { scheduled_delivery_timestamp: ts });
      const object = {
        scheduled_message_id: id,
        type: 'stream',
        to: channelId,
        topic: 'plans',
        content: 'See you **soon**',
        rendered_content: '<p>See you <strong>soon</strong></p>',
        scheduled_delivery_timestamp: ts,
        failed: false,
      };
      expect((await pending(t, mine)).map(({ id: _, ...e }) => e)).toEqual([
        { type: 'scheduled_messages', op: 'add', scheduled_messages: [object] },
      ]);
      await t.api.patch(`/scheduled_messages/${id}`, owner, { content: 'x' });
      expect((await pending(t, mine)).map(({ id: _, ...e }) => e)).toEqual([
        { type: 'scheduled_messages', op: 'update', scheduled_message: { ...object, content: 'x', rendered_content: '<p>x</p>' } },
      ]);
      const state = await register(t, owner, { fetch_event_types: ['scheduled_messages'] });
      expect(state.state.scheduled_messages).toContainEqual({ ...object, content: 'x', rendered_content: '<p>x</p>' });
      expect((await register(t, t.cast.guest, { fetch_event_types: ['scheduled_messages'] })).state.scheduled_messages).toEqual(
        (await t.api.get('/scheduled_messages', t.cast.guest)).body.scheduled_messages,
      );
      await t.api.delete(`/scheduled_messages/${id}`, owner);
      expect((await pending(t, mine)).map(({ id: _, ...e }) => e)).toEqual([
        { type: 'scheduled_messages', op: 'remove', scheduled_message_id: id },
      ]);
      expect(await pending(t, other)).toEqual([]);
    });
  });

  describe('delivery (the scheduler in this process)', () => {
    it('sends at the due time through the send path: message event, remove event, row delivered', async () => {
      const sender = t.cast.member;
      const delivered: Array<{ row: ScheduledMessageRow; at: number }> = [];
      const stop = startScheduledDelivery(t.ctx, {
        leaseMs: 5000,
        pollMs: 1000,
        onError: (err) => {
          throw err;
        },
        onDelivered: (row, _id, at) => delivered.push({ row, at }),
      });
      try {
        const c = await register(t, t.cast.admin, { event_types: ['message'] });
        const mine = await register(t, sender, { event_types: ['scheduled_messages', 'message'] });
        const ts = now() + 2;
        const id = await schedule(sender, { type: 'direct', to: [t.cast.admin.id], content: 'on time', scheduled_delivery_timestamp: ts });
        const deadline = Date.now() + 10_000;
        while (!delivered.some((d) => d.row.id === id) && Date.now() < deadline) await sleep(50);
        const d = delivered.find((x) => x.row.id === id)!;
        expect(d).toBeDefined();
        // Within a second of the due time (never before it).
        expect(d.at).toBeGreaterThanOrEqual(ts * 1000);
        expect(d.at - ts * 1000).toBeLessThan(1000);
        const row = (await t.ctx.db('scheduled_messages').where({ id }).first())!;
        expect(Boolean(row.delivered)).toBe(true);
        const msg = (await t.ctx.db('messages').where({ id: row.delivered_message_id }).first())!;
        expect(msg).toMatchObject({ sender_id: sender.id, content: 'on time' });
        const got = (await pending(t, c)).filter((e) => e.type === 'message');
        expect(got.map((e) => e.message.content)).toEqual(['on time']);
        const own = (await pending(t, mine)).map((e) => [e.type, e.op ?? null]);
        expect(own).toEqual([
          ['scheduled_messages', 'add'],
          ['message', null],
          ['scheduled_messages', 'remove'],
        ]);
        expect(
          (await t.api.get('/scheduled_messages', sender)).body.scheduled_messages.map(
            (m: { scheduled_message_id: number }) => m.scheduled_message_id,
          ),
        ).not.toContain(id);
      } finally {
        await stop();
      }
    });

    it('a delivery the send refuses marks it failed and Notification Bot tells the sender', async () => {
      const sender = t.cast.member;
      const ch = await createChannel(t, 'closing', [t.cast.owner, sender], { inviteOnly: true });
      const id = await schedule(sender, { to: ch.id, topic: 'bye', content: 'too late', scheduled_delivery_timestamp: now() + 1 });
      // The sender loses the right to post before the time comes: no longer subscribed to the private channel.
      await t.ctx.db('subscriptions').where({ user_id: sender.id, recipient_id: ch.recipient_id }).update({ active: false });
      const mine = await register(t, sender, { event_types: ['scheduled_messages', 'message'] });
      const failures: string[] = [];
      const stop = startScheduledDelivery(t.ctx, {
        leaseMs: 5000,
        pollMs: 500,
        onError: () => undefined,
        onFailed: (_r, why) => failures.push(why),
      });
      try {
        const deadline = Date.now() + 10_000;
        while (failures.length === 0 && Date.now() < deadline) await sleep(50);
      } finally {
        await stop();
      }
      const row = (await t.ctx.db('scheduled_messages').where({ id }).first())!;
      expect(Boolean(row.failed)).toBe(true);
      expect(Boolean(row.delivered)).toBe(false);
      expect(row.failure_message).toBe(failures[0]);
      const listed = (await t.api.get('/scheduled_messages', sender)).body.scheduled_messages.find(
        (m: { scheduled_message_id: number }) => m.scheduled_message_id === id,
      );
      expect(listed.failed).toBe(true);
      const events = await pending(t, mine);
      expect(events.map((e) => [e.type, e.op ?? null])).toEqual([
        ['message', null],
        ['scheduled_messages', 'update'],
      ]);
      const notice = events[0]!.message;
      expect(notice.sender_email).toBe('notification-bot@parley.invalid');
      const raw = (await t.ctx.db('messages').where({ id: notice.id }).first('content'))!;
      expect(raw.content).toBe(
        `The message you scheduled for <time:${new Date(Number(row.scheduled_timestamp) * 1000).toISOString().replace('.000Z', '+00:00')}> was not sent because of the following error:\n\n> ${failures[0]}\n\n[View scheduled messages](#scheduled)`,
      );
      expect(events[1]!.scheduled_message).toMatchObject({ scheduled_message_id: id, failed: true });
    });
  });
});
