import type { UserRow } from '../../src/queries/rows';
import type { TestServer } from './server';

/** A registered queue and the last event id its client has seen. */
export interface Client {
  user: UserRow;
  queueId: string;
  lastEventId: number;
  state: Record<string, any>;
}

/** POST /register as `user`; fails the test unless it succeeds. */
export async function register(t: TestServer, user: UserRow, fields: Record<string, unknown> = {}): Promise<Client> {
  const res = await t.api.post('/register', user, fields);
  if (res.status !== 200) throw new Error(`register failed: ${JSON.stringify(res.body)}`);
  return { user, queueId: res.body.queue_id, lastEventId: res.body.last_event_id, state: res.body };
}

/** GET /events, acknowledging what the client saw; advances lastEventId. */
export async function poll(t: TestServer, c: Client, opts: { dontBlock?: boolean } = {}): Promise<Array<Record<string, any>>> {
  const res = await t.api.get('/events', c.user, { queue_id: c.queueId, last_event_id: c.lastEventId, dont_block: opts.dontBlock ?? true });
  if (res.status !== 200) throw new Error(`GET /events failed: ${JSON.stringify(res.body)}`);
  const events = res.body.events as Array<Record<string, any>>;
  if (events.length) c.lastEventId = events[events.length - 1]!.id;
  return events;
}

/** The pending events (without waiting), heartbeats left out. */
export async function pending(t: TestServer, c: Client): Promise<Array<Record<string, any>>> {
  return (await poll(t, c)).filter((e) => e.type !== 'heartbeat');
}

/** Of each client, the types of its pending events. */
export async function pendingTypes(t: TestServer, clients: Client[]): Promise<string[][]> {
  const out: string[][] = [];
  for (const c of clients) out.push((await pending(t, c)).map((e) => e.type));
  return out;
}

export const sendToChannel = async (t: TestServer, user: UserRow, to: string, topic: string, content: string, extra: Record<string, unknown> = {}) => {
  const res = await t.api.post('/messages', user, { type: 'channel', to, topic, content, ...extra });
  if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
  return res.body.id as number;
};

export const sendDirect = async (t: TestServer, user: UserRow, to: UserRow[], content: string) => {
  const res = await t.api.post('/messages', user, { type: 'direct', to: to.map((u) => u.id), content });
  if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
  return res.body.id as number;
};
