import { performance } from 'node:perf_hooks';
import { eachDatabase } from './support/databases';
import { poll, register, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import { ManualClock, until } from './support/clock';
import type { TestServer } from './support/server';

/** The queue protocol over HTTP: ids, acknowledgement, blocking, heartbeats, expiry, bad queues. */
eachDatabase('events: the queue protocol', (dialect) => {
  let t: TestServer;
  /** The queues' time: expiry and heartbeats happen when the test moves it, at Zulip's real intervals. */
  const clock = new ManualClock();
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect, { clock }));
  });
  afterAll(() => stopEventsServer(t));

  const get = (user = t.cast.member, query: Record<string, unknown>) => t.api.get('/events', user, query);
  /** Resolves once the member's poll on `queueId` is parked, waiting for an event. */
  const parked = (queueId: string) => until(() => t.ctx.queues.access(t.cast.member.id, queueId).waiting, 'the poll waits');

  it('registers a queue with an unguessable id, starting at -1', async () => {
    const c = await register(t, t.cast.member);
    expect(c.queueId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(c.lastEventId).toBe(-1);
    expect(c.state).toMatchObject({
      zulip_feature_level: expect.any(Number),
      zulip_version: expect.any(String),
      zulip_merge_base: expect.any(String),
    });
  });

  it('dont_block answers at once, with nothing when nothing happened', async () => {
    const c = await register(t, t.cast.member);
    const res = await get(t.cast.member, { queue_id: c.queueId, last_event_id: -1, dont_block: true });
    expect(res.body).toEqual({ result: 'success', msg: '', events: [], queue_id: c.queueId });
  });

  it('keeps events until acknowledged, so a retried request loses nothing', async () => {
    const c = await register(t, t.cast.member);
    const a = await sendToChannel(t, t.cast.owner, 'general', 'ack', 'one');
    const b = await sendToChannel(t, t.cast.owner, 'general', 'ack', 'two');
    const first = await get(t.cast.member, { queue_id: c.queueId, last_event_id: -1, dont_block: true });
    const retried = await get(t.cast.member, { queue_id: c.queueId, last_event_id: -1, dont_block: true });
    expect(retried.body.events).toEqual(first.body.events);
    expect(first.body.events.map((e: any) => [e.id, e.message.id])).toEqual([
      [0, a],
      [1, b],
    ]);
    const after = await get(t.cast.member, { queue_id: c.queueId, last_event_id: 0, dont_block: true });
    expect(after.body.events.map((e: any) => e.id)).toEqual([1]);
    const done = await get(t.cast.member, { queue_id: c.queueId, last_event_id: 1, dont_block: true });
    expect(done.body.events).toEqual([]);
  });

  it('refuses an acknowledgement of something dropped or never queued, dropping nothing', async () => {
    const c = await register(t, t.cast.member);
    await sendToChannel(t, t.cast.owner, 'general', 'ack', 'one');
    await sendToChannel(t, t.cast.owner, 'general', 'ack', 'two');
    await get(t.cast.member, { queue_id: c.queueId, last_event_id: 0, dont_block: true });
    const beyond = await get(t.cast.member, { queue_id: c.queueId, last_event_id: 5, dont_block: true });
    expect(beyond.body).toEqual({ result: 'error', msg: 'Event 5 was not in this queue', code: 'BAD_REQUEST' });
    const older = await get(t.cast.member, { queue_id: c.queueId, last_event_id: -1, dont_block: true });
    expect(older.body).toEqual({ result: 'error', msg: 'An event newer than -1 has already been pruned!', code: 'BAD_REQUEST' });
    const still = await get(t.cast.member, { queue_id: c.queueId, last_event_id: 0, dont_block: true });
    expect(still.body.events.map((e: any) => e.id)).toEqual([1]);
  });

  it('requires queue_id and last_event_id', async () => {
    const c = await register(t, t.cast.member);
    expect((await get(t.cast.member, { last_event_id: -1 })).body).toEqual({
      result: 'error',
      msg: "Missing 'queue_id' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'queue_id',
    });
    expect((await get(t.cast.member, { queue_id: c.queueId })).body).toEqual({
      result: 'error',
      msg: "Missing 'last_event_id' argument",
      code: 'BAD_REQUEST',
    });
  });

  it("answers an unknown queue, and another user's, with BAD_EVENT_QUEUE_ID and changes nothing", async () => {
    const c = await register(t, t.cast.member);
    await sendToChannel(t, t.cast.owner, 'general', 'mine', 'for the member');
    const bad = (id: string) => ({ result: 'error', msg: `Bad event queue ID: ${id}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: id });
    const unknown = await get(t.cast.member, { queue_id: 'no-such-queue', last_event_id: -1, dont_block: true });
    expect([unknown.status, unknown.body]).toEqual([400, bad('no-such-queue')]);
    expect((await get(t.cast.admin, { queue_id: c.queueId, last_event_id: -1, dont_block: true })).body).toEqual(bad(c.queueId));
    expect((await t.api.delete('/events', t.cast.admin, { queue_id: c.queueId })).body).toEqual(bad(c.queueId));
    expect(await poll(t, c)).toHaveLength(1);
  });

  it('DELETE /events discards the queue', async () => {
    const c = await register(t, t.cast.member);
    expect((await t.api.delete('/events', t.cast.member, { queue_id: c.queueId })).body).toEqual({ result: 'success', msg: '' });
    const gone = { result: 'error', msg: `Bad event queue ID: ${c.queueId}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: c.queueId };
    const res = await get(t.cast.member, { queue_id: c.queueId, last_event_id: -1, dont_block: true });
    expect([res.status, res.body]).toEqual([400, gone]);
    const again = await t.api.delete('/events', t.cast.member, { queue_id: c.queueId });
    expect([again.status, again.body]).toEqual([400, gone]);
  });

  it('a queue left idle for ten minutes expires; polling keeps it alive', async () => {
    const idle = t.ctx.queues.limits.idleTimeoutMs;
    expect(idle).toBe(10 * 60_000);
    const c = await register(t, t.cast.member);
    clock.advance(idle - 1);
    expect(await poll(t, c)).toEqual([]);
    clock.advance(idle - 1);
    expect(await poll(t, c)).toEqual([]);
    clock.advance(idle);
    const res = await get(t.cast.member, { queue_id: c.queueId, last_event_id: -1, dont_block: true });
    expect([res.status, res.body]).toEqual([
      400,
      { result: 'error', msg: `Bad event queue ID: ${c.queueId}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: c.queueId },
    ]);
  });

  it('a long-poll returns within 100 ms of the commit', async () => {
    const c = await register(t, t.cast.member);
    await poll(t, c); // the test client compiles the response schema on first use: not part of the latency
    let committedAt = 0;
    const stop = t.ctx.bus.subscribe(() => {
      committedAt ||= performance.now();
    });
    try {
      const waiting = get(t.cast.member, { queue_id: c.queueId, last_event_id: -1 }).then((res) => ({ res, at: performance.now() }));
      await parked(c.queueId);
      const id = await sendToChannel(t, t.cast.owner, 'general', 'fast', 'wake up');
      const { res, at } = await waiting;
      expect(res.body.events.map((e: any) => e.message.id)).toEqual([id]);
      const latency = at - committedAt;
      expect(latency).toBeGreaterThanOrEqual(0);
      expect(latency).toBeLessThan(100);
    } finally {
      stop();
    }
  });

  it('sends a heartbeat after 45 to 55 s of nothing, which is acknowledged like any event', async () => {
    expect(t.ctx.queues.limits.heartbeatMs).toBe(50_000);
    const c = await register(t, t.cast.member);
    const waiting = get(t.cast.member, { queue_id: c.queueId, last_event_id: -1 });
    await parked(c.queueId);
    clock.advance(45_000 - 1);
    expect(t.ctx.queues.access(t.cast.member.id, c.queueId).waiting).toBe(true);
    clock.advance(10_000 + 1);
    expect(t.ctx.queues.access(t.cast.member.id, c.queueId).waiting).toBe(false);
    const res = await waiting;
    expect(res.body.events).toEqual([{ id: 0, type: 'heartbeat' }]);
    const next = await get(t.cast.member, { queue_id: c.queueId, last_event_id: 0, dont_block: true });
    expect(next.body.events).toEqual([]);
  });
});
