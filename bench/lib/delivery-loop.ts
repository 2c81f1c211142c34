import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Credential, Manifest } from './dataset';
import { basic, request } from './http';

/**
 * The send → event loop behind the event figure (bench/run.ts) and its
 * delivery-by-delivery view (bench/delivery-trace.ts): B registers a queue
 * for message events; then, one delivery at a time, B long-polls, A posts
 * to the 2-member channel 5 ms later (so the poll is parked), and the round
 * ends when B's poll returns the message. `warmup` rounds run first and are
 * not returned. Both callers drive this one function, so a figure and its
 * trace measure the same loop.
 */
export interface DeliveryLoopOptions {
  port: number;
  manifest: Manifest;
  creds: Map<number, Credential>;
  warmup: number;
  rounds: number;
  /** Stops early (fewer rounds) once this long has passed since registering. */
  timeLimitMs?: number;
  /** Prefix of each probe message's content. */
  label: string;
  /** Called every 500 rounds (negative while warming up). */
  progress?: (round: number) => void;
}

/** One delivery, on the clock `now()` (shared with a child process that records its side). */
export interface DeliveryRound {
  /** Just before A's POST went out. */
  sent: number;
  /** When A's POST was answered. */
  answered: number;
  /** When B's GET /events returned with the message. */
  delivered: number;
}

export interface DeliveryLoopResult {
  /** Why nothing was measured (an endpoint answers 501 in this tree), or null. */
  skipped: string | null;
  rounds: DeliveryRound[];
}

/** Milliseconds on a clock every process of the machine shares. */
export const now = (): number => performance.timeOrigin + performance.now();

/** A poll that has not seen the message after this many returns is a failure, not a slow delivery. */
const MAX_POLLS = 20;

export async function runDeliveryLoop(o: DeliveryLoopOptions): Promise<DeliveryLoopResult> {
  const sender = o.creds.get(o.manifest.targets.eventSender.id)!;
  const receiver = o.creds.get(o.manifest.targets.eventReceiver.id)!;
  const agentA = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const agentB = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const rounds: DeliveryRound[] = [];
  try {
    const reg = await request(agentB, o.port, 'POST', '/api/v1/register', basic(receiver), { event_types: JSON.stringify(['message']) });
    if (reg.status === 501) return { skipped: 'POST /register answers 501 (not implemented in this tree)', rounds };
    if (reg.status !== 200) throw new Error(`POST /register: HTTP ${reg.status}: ${JSON.stringify(reg.body).slice(0, 300)}`);
    const queueId = reg.body.queue_id as string;
    let lastEventId = reg.body.last_event_id as number;
    const started = Date.now();
    for (let i = -o.warmup; i < o.rounds; i++) {
      if (o.timeLimitMs !== undefined && Date.now() - started >= o.timeLimitMs) break;
      const content = `${o.label}-${i}-${Date.now()}`;
      const poll = (async () => {
        for (let tries = 0; tries < MAX_POLLS; tries++) {
          const q = new URLSearchParams({ queue_id: queueId, last_event_id: String(lastEventId) });
          const r = await request(agentB, o.port, 'GET', `/api/v1/events?${q}`, basic(receiver));
          if (r.status === 501) throw new SkipError('GET /events answers 501');
          if (r.status !== 200) throw new Error(`GET /events: HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
          const events = r.body.events as Array<{ id: number; type: string; message?: { content: string } }>;
          if (events.length) lastEventId = events[events.length - 1]!.id;
          if (events.some((e) => e.type === 'message' && String(e.message?.content ?? '').includes(content))) return now();
        }
        throw new Error(`no message event after ${MAX_POLLS} polls`);
      })();
      // A rejected poll is awaited below; until then it must not count as unhandled.
      poll.catch(() => undefined);
      // Let the long-poll reach the server and park before sending.
      await new Promise((r) => setTimeout(r, 5));
      const sent = now();
      const post = await request(agentA, o.port, 'POST', '/api/v1/messages', basic(sender), {
        type: 'stream',
        to: String(o.manifest.targets.eventChannel.id),
        topic: 'latency',
        content,
      });
      if (post.status === 501) throw new SkipError('POST /messages answers 501');
      if (post.status !== 200) throw new Error(`POST /messages: HTTP ${post.status}: ${JSON.stringify(post.body).slice(0, 300)}`);
      const answered = now();
      const delivered = await poll;
      if (i >= 0) rounds.push({ sent, answered, delivered });
      if (i % 500 === 0) o.progress?.(i);
    }
    await request(agentB, o.port, 'DELETE', `/api/v1/events?${new URLSearchParams({ queue_id: queueId })}`, basic(receiver));
    return { skipped: null, rounds };
  } catch (err) {
    if (err instanceof SkipError) return { skipped: err.message, rounds: [] };
    throw err;
  } finally {
    agentA.destroy();
    agentB.destroy();
  }
}

/** An endpoint this tree does not implement: the figure is skipped, not failed. */
class SkipError extends Error {}
