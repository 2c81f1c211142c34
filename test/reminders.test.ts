import { startScheduledDelivery } from '../src/actions/scheduled-delivery';
import { eachDatabase } from './support/databases';
import { pending, register, sendToChannel } from './support/events';
import type { TestServer } from './support/server';
import { createChannel, startTestServer } from './support/server';

const now = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

eachDatabase('message reminders', (dialect) => {
  let t: TestServer;
  let messageId: number;
  let channelId: number;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    channelId = (await createChannel(t, 'tasks', [t.cast.owner, t.cast.member, t.cast.admin])).id;
    messageId = await sendToChannel(t, t.cast.owner, 'tasks', 'todo', 'Please **review** the plan');
    // Migrating MariaDB's template database takes tens of seconds on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  const count = async () => Number(((await t.ctx.db('scheduled_messages').count('* as n')) as Array<{ n: number }>)[0]!.n);

  it('POST /reminders stores a reminder with Zulip’s text; GET, register and events show it to its owner only', async () => {
    const user = t.cast.member;
    const mine = await register(t, user, { event_types: ['reminders'] });
    const ts = now() + 3600;
    const res = await t.api.post('/reminders', user, { message_id: messageId, scheduled_delivery_timestamp: ts, note: 'by Friday' });
    expect(res.status).toBe(200);
    const id = res.body.reminder_id as number;
    const row = (await t.ctx.db('scheduled_messages').where({ id }).first())!;
    const owner = t.cast.owner;
    expect(row.content).toBe(
      'You requested a reminder for the following message. Note:\n > by Friday\n\n' +
        `@_**${owner.full_name}|${owner.id}** [said](${t.ctx.config.externalUrl}/#narrow/channel/${channelId}-tasks/topic/todo/near/${messageId}) in #**tasks>todo@${messageId}**:\n` +
        '```quote\nPlease **review** the plan\n```',
    );
    const list = (await t.api.get('/reminders', user)).body.reminders;
    const object = {
      reminder_id: id,
      type: 'private',
      to: [user.id],
      content: row.content,
      rendered_content: row.rendered_content,
      scheduled_delivery_timestamp: ts,
      failed: false,
      reminder_target_message_id: messageId,
    };
    expect(list).toEqual([object]);
    expect((await pending(t, mine)).map(({ id: _, ...e }) => e)).toEqual([{ type: 'reminders', op: 'add', reminders: [object] }]);
    expect((await register(t, user, { fetch_event_types: ['reminders'] })).state.reminders).toEqual([object]);
    expect((await t.api.get('/reminders', t.cast.admin)).body.reminders).toEqual([]);

    // Another user's reminder is a missing one.
    expect((await t.api.delete(`/reminders/${id}`, t.cast.admin)).body).toEqual({
      result: 'error',
      msg: 'Reminder does not exist',
      code: 'BAD_REQUEST',
    });
    const del = await t.api.delete(`/reminders/${id}`, user);
    expect(del.status).toBe(200);
    expect((await pending(t, mine)).map(({ id: _, ...e }) => e)).toEqual([{ type: 'reminders', op: 'remove', reminder_id: id }]);
    expect((await t.api.delete(`/reminders/${id}`, user)).status).toBe(404);
  });

  it.each([
    ['a time in the past', { scheduled_delivery_timestamp: 100 }, 'Scheduled delivery time must be in the future.'],
    ['a message the caller cannot read', { message_id: 'SECRET' }, 'Invalid message(s)'],
    ['a missing message', { message_id: 99999999 }, 'Invalid message(s)'],
    ['a note over 1,000 characters', { note: 'x'.repeat(1001) }, 'Maximum reminder note length: 1000 characters'],
  ])('refuses %s, storing nothing', async (_name, fields, msg) => {
    const f: Record<string, unknown> = { message_id: messageId, scheduled_delivery_timestamp: now() + 60, ...fields };
    if (f.message_id === 'SECRET') {
      await createChannel(t, `secret-${Date.now()}`, [t.cast.owner], { inviteOnly: true });
      const secret = await sendToChannel(
        t,
        t.cast.owner,
        (await t.ctx.db('channels').orderBy('id', 'desc').first('name'))!.name,
        'x',
        'hidden',
      );
      f.message_id = secret;
    }
    const before = await count();
    const res = await t.api.post('/reminders', t.cast.member, f);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(msg));
    expect(await count()).toBe(before);
  });

  it('is delivered on time by the scheduler as a Notification Bot direct message, then removed', async () => {
    const user = t.cast.admin;
    const mine = await register(t, user, { event_types: ['reminders', 'message'] });
    const ts = now() + 2;
    const res = await t.api.post('/reminders', user, { message_id: messageId, scheduled_delivery_timestamp: ts });
    const id = res.body.reminder_id as number;
    const at: number[] = [];
    const stop = startScheduledDelivery(t.ctx, {
      leaseMs: 5000,
      pollMs: 1000,
      onError: () => undefined,
      onDelivered: (r, _m, when) => r.id === id && at.push(when),
    });
    try {
      const deadline = Date.now() + 10_000;
      while (at.length === 0 && Date.now() < deadline) await sleep(50);
    } finally {
      await stop();
    }
    expect(at[0]! - ts * 1000).toBeLessThan(1000);
    const row = (await t.ctx.db('scheduled_messages').where({ id }).first())!;
    const msg = (await t.ctx.db('messages').where({ id: row.delivered_message_id! }).first())!;
    const bot = (await t.ctx.db('users').where({ id: msg.sender_id }).first('email'))!;
    expect(bot.email).toBe('notification-bot@parley.invalid');
    expect(msg.content).toBe(row.content);
    const events = (await pending(t, mine)).map((e) => [e.type, e.op ?? null]);
    expect(events).toEqual([
      ['reminders', 'add'],
      ['message', null],
      ['reminders', 'remove'],
    ]);
    expect((await t.api.get('/reminders', user)).body.reminders).toEqual([]);
  });
});
