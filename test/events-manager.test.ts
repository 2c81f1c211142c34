import { InProcessBus } from '../src/events/bus';
import { QueueLimits, QueueManager } from '../src/events/manager';
import { parseCapabilities } from '../src/events/options';
import { queueOptions } from './support/queue-options';
import { ManualClock } from './support/clock';

/** The queue manager alone: ids, acknowledgement, waiting, caps and expiry, on a fake clock. */
describe('QueueManager', () => {
  let clock: ManualClock;
  let bus: InProcessBus;
  let m: QueueManager;
  const opts = queueOptions;
  const start = (limits: Partial<QueueLimits> = {}) => {
    clock = new ManualClock(1_000);
    bus = new InProcessBus();
    m = new QueueManager(bus, limits, clock);
  };
  const ping = (userIds: number[], n = 1) => {
    for (let i = 0; i < n; i++) bus.publish({ event: { type: 'ping', n: i }, userIds });
  };
  const ids = async (userId: number, queueId: string, last = -1) => (await m.poll(userId, queueId, last, true)).events.map((e) => e.id);
  afterEach(() => m.close());

  it('numbers events from 0 per queue and drops them only when acknowledged', async () => {
    start();
    const q = m.register(opts(1));
    ping([1], 3);
    expect(await ids(1, q.id)).toEqual([0, 1, 2]);
    expect(await ids(1, q.id)).toEqual([0, 1, 2]); // a retried poll loses nothing
    expect(await ids(1, q.id, 1)).toEqual([2]);
    expect(m.stats.events).toBe(1);
  });

  it('refuses an id already dropped or never queued, and keeps the events', async () => {
    start();
    const q = m.register(opts(1));
    ping([1], 2);
    await ids(1, q.id, 0);
    await expect(m.poll(1, q.id, -1, true)).rejects.toThrow('An event newer than -1 has already been pruned!');
    await expect(m.poll(1, q.id, 7, true)).rejects.toThrow('Event 7 was not in this queue');
    expect(await ids(1, q.id, 0)).toEqual([1]);
  });

  it('answers another user, an unknown id and an expired queue alike', async () => {
    start({ idleTimeoutMs: 1_000 });
    const q = m.register(opts(1));
    await expect(m.poll(2, q.id, -1, true)).rejects.toMatchObject({ code: 'BAD_EVENT_QUEUE_ID', data: { queue_id: q.id } });
    await expect(m.poll(1, 'nope', -1, true)).rejects.toMatchObject({ code: 'BAD_EVENT_QUEUE_ID' });
    clock.advance(999);
    expect(await ids(1, q.id)).toEqual([]);
    clock.advance(1_000);
    await expect(m.poll(1, q.id, -1, true)).rejects.toMatchObject({ code: 'BAD_EVENT_QUEUE_ID' });
    expect(m.stats.queues).toBe(0);
  });

  it('collects idle queues but never one a poll is waiting on', async () => {
    start({ idleTimeoutMs: 1_000, heartbeatMs: 60_000 });
    const idle = m.register(opts(1));
    const busy = m.register(opts(2));
    const waiting = m.poll(2, busy.id, -1, false);
    clock.advance(5_000);
    expect(m.collectGarbage()).toBe(1);
    expect(m.stats.queues).toBe(1);
    ping([2]);
    expect((await waiting).events.map((e) => e.event.type)).toEqual(['ping']);
    await expect(m.poll(1, idle.id, -1, true)).rejects.toMatchObject({ code: 'BAD_EVENT_QUEUE_ID' });
  });

  it('wakes a waiting poll on publish, and queues a heartbeat when nothing comes', async () => {
    start({ heartbeatMs: 30_000 });
    const q = m.register(opts(1));
    const woken = m.poll(1, q.id, -1, false);
    ping([1]);
    expect((await woken).events.map((e) => e.event.type)).toEqual(['ping']);
    expect(clock.pending).toBe(0); // the woken poll's heartbeat is cancelled
    const quiet = m.poll(1, q.id, 0, false);
    // The heartbeat comes 90–110% of heartbeatMs after the poll (27–33 s here), never sooner, never later.
    clock.advance(27_000 - 1);
    expect(q.waiting).toBe(true);
    clock.advance(6_000 + 1);
    expect((await quiet).events.map((e) => [e.id, e.event.type])).toEqual([[1, 'heartbeat']]);
  });

  it('stops waiting when the client goes away, so the queue can expire', async () => {
    start({ heartbeatMs: 60_000, idleTimeoutMs: 1_000 });
    const q = m.register(opts(1));
    const gone = new AbortController();
    const waiting = m.poll(1, q.id, -1, false, gone.signal);
    expect(q.waiting).toBe(true);
    gone.abort();
    expect((await waiting).events).toEqual([]);
    expect(q.waiting).toBe(false);
    clock.advance(1_000);
    expect(m.collectGarbage()).toBe(1);
  });

  it('a newer poll replaces a waiting one, whose abort then leaves the newer alone', async () => {
    start({ heartbeatMs: 60_000 });
    const q = m.register(opts(1));
    const first = new AbortController();
    const older = m.poll(1, q.id, -1, false, first.signal);
    const newer = m.poll(1, q.id, -1, false);
    expect((await older).events).toEqual([]);
    first.abort();
    expect(q.waiting).toBe(true);
    ping([1]);
    expect((await newer).events).toHaveLength(1);
  });

  it('discards the least recently polled queue of a user over the per-user cap', async () => {
    start({ maxQueuesPerUser: 2 });
    const a = m.register(opts(1));
    const b = m.register(opts(1));
    clock.advance(10);
    await ids(1, a.id); // a is now the more recent
    const c = m.register(opts(1));
    await expect(m.poll(1, b.id, -1, true)).rejects.toMatchObject({ code: 'BAD_EVENT_QUEUE_ID' });
    expect(await ids(1, a.id)).toEqual([]);
    expect(await ids(1, c.id)).toEqual([]);
  });

  it('discards the least recently polled queue of anyone over the total cap', async () => {
    start({ maxQueues: 2 });
    const a = m.register(opts(1));
    const b = m.register(opts(2));
    await ids(1, a.id);
    m.register(opts(3));
    await expect(m.poll(2, b.id, -1, true)).rejects.toMatchObject({ code: 'BAD_EVENT_QUEUE_ID' });
    expect(m.stats.queues).toBe(2);
  });

  it('discards a queue that holds too many events, and the fullest when all hold too many', async () => {
    start({ maxEventsPerQueue: 4, maxEventsTotal: 5 });
    const small = m.register(opts(1));
    const full = m.register(opts(2));
    ping([2], 5);
    await expect(m.poll(2, full.id, -1, true)).rejects.toMatchObject({ code: 'BAD_EVENT_QUEUE_ID' });
    const other = m.register(opts(3));
    ping([1], 1);
    ping([3], 4);
    ping([1], 1); // 2 + 4 = 6 > 5: the queue holding the most goes
    expect(await ids(1, small.id)).toEqual([0, 1]);
    await expect(m.poll(3, other.id, -1, true)).rejects.toMatchObject({ code: 'BAD_EVENT_QUEUE_ID' });
    expect(m.stats.events).toBe(2);
  });

  it('filters by event type, narrow, and the channel-typing capability', async () => {
    start();
    const typed = m.register(opts(1, { eventTypes: new Set(['typing', 'no-such-type']) }));
    const narrowed = m.register(opts(1, { narrow: [{ operator: 'channel', operand: 'design', negated: false }] }));
    const capable = m.register(opts(1, { capabilities: parseCapabilities({ stream_typing_notifications: true }) }));
    const message = (stream: string) => ({ type: 'stream', display_recipient: stream, stream_id: 1, subject: 't', sender_email: 'a@b' });
    bus.publish({ event: { type: 'message', message: message('design') }, userIds: [1], perUser: () => ({ flags: [] }) });
    bus.publish({ event: { type: 'message', message: message('other') }, userIds: [1], perUser: () => ({ flags: [] }) });
    bus.publish({ event: { type: 'typing', stream_id: 1, topic: 't' }, userIds: [1] });
    bus.publish({ event: { type: 'typing', recipients: [] }, userIds: [1] });
    const types = async (q: { id: string }) => (await m.poll(1, q.id, -1, true)).events.map((e) => e.event.type);
    expect(await types(typed)).toEqual(['typing']);
    expect(await types(narrowed)).toEqual(['message', 'typing']);
    expect(await types(capable)).toEqual(['message', 'message', 'typing', 'typing']);
  });

  it('shares one event object among queues and keeps per-receiver extras apart', async () => {
    start();
    const a = m.register(opts(1));
    const b = m.register(opts(2));
    bus.publish({
      event: { type: 'message', message: { type: 'private' } },
      userIds: [1, 2],
      perUser: (id) => ({ flags: id === 1 ? ['read'] : [] }),
    });
    const [ea] = (await m.poll(1, a.id, -1, true)).events;
    const [eb] = (await m.poll(2, b.id, -1, true)).events;
    expect(ea!.event).toBe(eb!.event);
    expect([ea!.extra, eb!.extra]).toEqual([{ flags: ['read'] }, { flags: [] }]);
  });

  it('leaves no timer behind after close', async () => {
    start({ heartbeatMs: 60_000 });
    const q = m.register(opts(1));
    const waiting = m.poll(1, q.id, -1, false);
    expect(clock.pending).toBe(1); // the heartbeat
    m.close();
    expect((await waiting).events).toEqual([]);
    expect(m.stats).toEqual({ queues: 0, events: 0 });
    expect(clock.pending).toBe(0);
  });
});
