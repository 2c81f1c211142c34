import type { MessageBusEvent } from '../src/serializers/messages';
import type { UserRow } from '../src/queries/rows';
import { ManualClock, until } from './support/clock';
import { eachDatabase } from './support/databases';
import { register, sendToChannel, startEventsServer, stopEventsServer, type Client } from './support/events';
import { countQueries, createMembers, subscribe, type TestServer } from './support/server';

/** How many clients long-poll at once below: enough that timers and sweeps run over a crowd, not one queue. */
const CROWD = 60;

/**
 * Delivery when many queues take one event: every poll gets its own
 * heartbeat and expired queues go, while the event itself is built once
 * and shared, with each receiver's flags and each queue's shaping apart.
 */
eachDatabase('events: many queues, one event', (dialect) => {
  let t: TestServer;
  let crowd: UserRow[];
  const clock = new ManualClock();
  let general: { id: number; recipient_id: number };
  beforeAll(async () => {
    ({ t, general } = await startEventsServer(dialect, { clock }));
    crowd = await createMembers(t, 'crowd', CROWD);
    await subscribe(t, general, crowd);
  });
  afterAll(() => stopEventsServer(t));

  const getEvents = (c: Client, extra: Record<string, unknown> = {}) =>
    t.api.get('/events', c.user, { queue_id: c.queueId, last_event_id: c.lastEventId, ...extra });

  it('gives each of many waiting polls its heartbeat, and drops the queues nobody polls once they expire', async () => {
    const polling = await Promise.all(crowd.slice(0, CROWD / 2).map((u) => register(t, u, { event_types: ['message'] })));
    const silent = await Promise.all(crowd.slice(CROWD / 2).map((u) => register(t, u, { event_types: ['message'] })));
    const waiting = t.ctx.queues.waitingPolls();
    const answers = polling.map((c) => getEvents(c));
    await until(() => t.ctx.queues.waitingPolls() === waiting + polling.length, 'every poll waits');

    // Past the longest heartbeat delay (55 s): each waiting poll ends with its own heartbeat, and only that.
    const firstStep = t.ctx.queues.limits.heartbeatMs * 1.1 + 1;
    clock.advance(firstStep);
    for (const res of await Promise.all(answers)) {
      expect(res.status).toBe(200);
      expect(res.body.events).toEqual([{ type: 'heartbeat', id: 0 }]);
    }
    expect(t.ctx.queues.waitingPolls()).toBe(waiting);

    // The pollers come back and wait again; the silent queues reach their idle timeout, counted from their registration.
    for (const c of polling) c.lastEventId = 0;
    const again = polling.map((c) => getEvents(c));
    await until(() => t.ctx.queues.waitingPolls() === waiting + polling.length, 'every poll waits again');
    clock.advance(t.ctx.queues.limits.idleTimeoutMs - firstStep);
    expect(t.ctx.queues.collectGarbage()).toBe(silent.length);
    for (const res of await Promise.all(again)) expect(res.body.events).toEqual([{ type: 'heartbeat', id: 1 }]);
    for (const c of silent) {
      const res = await getEvents(c, { dont_block: true });
      expect(res.body).toMatchObject({ result: 'error', code: 'BAD_EVENT_QUEUE_ID', queue_id: c.queueId });
    }
    for (const c of polling) {
      c.lastEventId = 1;
      expect((await getEvents(c, { dont_block: true })).body.events).toEqual([]);
    }
  });

  it('builds the event once: each receiver sees the message as it would fetch it, with its own flags', async () => {
    const { owner, admin, moderator, member } = t.cast;
    const kinds = [
      { user: member, fields: { apply_markdown: true, client_gravatar: false } },
      { user: crowd[0]!, fields: { apply_markdown: true, client_gravatar: false } },
      { user: admin, fields: { apply_markdown: false, client_gravatar: false } },
      { user: moderator, fields: { apply_markdown: true, client_gravatar: true } },
      { user: owner, fields: { apply_markdown: true, client_gravatar: false } },
    ];
    const clients = await Promise.all(kinds.map((k) => register(t, k.user, { event_types: ['message'], ...k.fields })));
    const id = await sendToChannel(t, owner, 'general', 'shared', `Hello @**${member.full_name}**, see *this*`, {
      queue_id: clients[4]!.queueId,
      local_id: 'echo-1',
    });

    const events = await Promise.all(clients.map(async (c) => (await getEvents(c, { dont_block: true })).body.events));
    for (const [i, c] of clients.entries()) {
      expect(events[i]).toHaveLength(1);
      const fetched = await t.api.get('/messages', c.user, {
        anchor: id,
        num_before: 0,
        num_after: 0,
        narrow: [],
        ...kinds[i]!.fields,
      });
      const { flags, ...message } = fetched.body.messages[0];
      expect(events[i][0].message).toEqual(message);
      expect(events[i][0].flags).toEqual(flags);
    }
    expect(events[0][0].flags).toEqual(['mentioned']);
    expect(events[1][0].flags).toEqual([]);
    expect(events[4][0].local_message_id).toBe('echo-1');
    for (const i of [0, 1, 2, 3]) expect(events[i][0]).not.toHaveProperty('local_message_id');
    expect(events[2][0].message.content).toBe(`Hello @**${member.full_name}**, see *this*`);
    expect(events[0][0].message.content).toContain('<em>this</em>');

    // One queued object behind every queue, still as published: no queue's shaping changed it.
    const queued = clients.map((c) => t.ctx.queues.access(c.user.id, c.queueId).events[0]!.event as unknown as MessageBusEvent);
    for (const q of queued) expect(q).toBe(queued[0]);
    expect(queued[0]!.message.content).toContain('<em>this</em>');
    // A retried poll of each kind reads the same again.
    for (const [i, c] of clients.entries()) expect((await getEvents(c, { dont_block: true })).body.events).toEqual(events[i]);
  });

  it('registers a message-only queue without reading the organization', async () => {
    const message = await countQueries(t, () => register(t, crowd[1]!, { event_types: ['message'] }));
    const everything = await countQueries(t, () => register(t, crowd[1]!, { event_types: ['message', 'realm', 'subscription'] }));
    // Authentication, then max_message_id alone: no organization row, groups or memberships.
    expect(message.queries).toBeLessThanOrEqual(2);
    expect(everything.queries).toBeGreaterThan(message.queries + 3);
  });
});
