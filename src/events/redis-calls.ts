import type { Redis } from 'ioredis';

/**
 * Redis calls bounded in time, for the connections that must never hold up
 * a health check or a stop (the event bus's and the rate limits').
 */

/** `work`'s value, or 'late' once `ms` have passed without it settling. */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A PING within `timeoutMs` (the health check); not connected: refused at once, never queued. */
export async function pingRedis(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status !== 'ready') throw new Error(`not connected (${client.status})`);
  if ((await within(client.ping(), timeoutMs)) === 'late') throw new Error(`no answer in ${timeoutMs} ms`);
}

/**
 * Closes a connection: QUIT when connected (replies still due arrive first),
 * cut after `timeoutMs`; at once when not connected.
 */
export async function closeRedis(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready')
    await within(
      client.quit().catch(() => undefined),
      timeoutMs,
    );
  client.disconnect();
}
