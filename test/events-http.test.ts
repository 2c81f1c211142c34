import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UserRow } from '../src/queries/rows';
import { ManualClock, until } from './support/clock';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';

/**
 * The flow a Zulip client library follows, over a real socket: register
 * (multipart, as the apps send it), long-poll GET /events, and a message
 * from someone else arriving on the open poll.
 */
eachDatabase('events over real HTTP', (dialect) => {
  let t: TestServer;
  let server: Server;
  let base: string;
  /** The queues' time (idle expiry, heartbeats): moved by the test, never waited for. */
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { clock });
    const { owner, member } = t.cast;
    await createChannel(t, 'general', [owner, member]);
    server = await new Promise<Server>((resolve) => {
      const s = t.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  });
  afterAll(async () => {
    t.ctx.queues.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await t.close();
  });

  const auth = (u: UserRow) => ({
    Authorization: 'Basic ' + Buffer.from(`${u.email}:${u.api_key}`).toString('base64'),
    'User-Agent': 'ZulipPython/0.9.0',
  });
  const post = async (u: UserRow, path: string, fields: Record<string, string>) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: auth(u), body: form });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const getEvents = async (u: UserRow, query: Record<string, string>, signal?: AbortSignal) => {
    const res = await fetch(`${base}/events?${new URLSearchParams(query)}`, { headers: auth(u), signal });
    return (await res.json()) as Record<string, any>;
  };

  it('registers, long-polls, and receives a message another user sends', async () => {
    const { member, owner } = t.cast;
    const reg = await post(member, '/register', { event_types: '["message"]', apply_markdown: 'true' });
    expect(reg.status).toBe(200);
    const { queue_id, last_event_id } = reg.body;
    const polling = getEvents(member, { queue_id, last_event_id: String(last_event_id) });
    await until(() => t.ctx.queues.access(member.id, queue_id).waiting, 'the poll waits');
    const sent = await post(owner, '/messages', { type: 'stream', to: 'general', topic: 'greetings', content: 'hello **there**' });
    expect(sent.status).toBe(200);
    const got = await polling;
    expect(got).toMatchObject({ result: 'success', queue_id });
    expect(got.events).toEqual([
      expect.objectContaining({
        id: 0,
        type: 'message',
        flags: [],
        message: expect.objectContaining({ id: sent.body.id, content: '<p>hello <strong>there</strong></p>', subject: 'greetings' }),
      }),
    ]);
    const next = await getEvents(member, { queue_id, last_event_id: '0', dont_block: 'true' });
    expect(next.events).toEqual([]);
  });

  it('a client that hangs up stops the wait, and its queue can expire', async () => {
    const { member } = t.cast;
    const reg = await post(member, '/register', {});
    const hangUp = new AbortController();
    const queueId: string = reg.body.queue_id;
    const polling = getEvents(member, { queue_id: queueId, last_event_id: '-1' }, hangUp.signal).catch((e: Error) => e.name);
    const queue = t.ctx.queues.access(member.id, queueId);
    await until(() => queue.waiting, 'the poll waits');
    hangUp.abort();
    expect(await polling).toBe('AbortError');
    await until(() => !queue.waiting, 'the server ends the wait');
    clock.advance(t.ctx.queues.limits.idleTimeoutMs);
    const gone = await getEvents(member, { queue_id: queueId, last_event_id: '-1', dont_block: 'true' });
    expect(gone).toEqual({ result: 'error', msg: `Bad event queue ID: ${queueId}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: queueId });
  });
});
