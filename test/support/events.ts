import type { Dialect } from '../../src/db/connection';
import type { Clock } from '../../src/events/clock';
import type { UserRow } from '../../src/queries/rows';
import { createChannel, startTestServer, TestServer } from './server';

type ChannelRef = { id: number; recipient_id: number };

/**
 * The world the events suites share: the cast, #general (everyone active),
 * #open (public, only the owner) and #secret (private with protected
 * history: the owner and the moderator).
 */
export async function startEventsServer(
  dialect: Dialect,
  opts: { clock?: Clock } = {},
): Promise<{ t: TestServer; general: ChannelRef; open: ChannelRef; secret: ChannelRef }> {
  const t = await startTestServer(dialect, undefined, opts);
  const { owner, admin, moderator, member, guest, bot } = t.cast;
  const general = await createChannel(t, 'general', [owner, admin, moderator, member, guest, bot]);
  const open = await createChannel(t, 'open', [owner]);
  const secret = await createChannel(t, 'secret', [owner, moderator], { inviteOnly: true });
  return { t, general, open, secret };
}

/** Discards the queues (answering any open poll, clearing timers) and drops the database. */
export async function stopEventsServer(t: TestServer): Promise<void> {
  t.ctx.queues.close();
  await t.close();
}

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

export const sendToChannel = async (
  t: TestServer,
  user: UserRow,
  to: string,
  topic: string,
  content: string,
  extra: Record<string, unknown> = {},
) => {
  const res = await t.api.post('/messages', user, { type: 'channel', to, topic, content, ...extra });
  if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
  return res.body.id as number;
};

export const sendDirect = async (t: TestServer, user: UserRow, to: UserRow[], content: string) => {
  const res = await t.api.post('/messages', user, { type: 'direct', to: to.map((u) => u.id), content });
  if (res.status !== 200) throw new Error(`send failed: ${JSON.stringify(res.body)}`);
  return res.body.id as number;
};
