import crypto from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { RedisBus } from './redis-bus';

/** The Redis bus of EVENT_BUS=redis, named after NODE_ID (or host, PID and a random part when unset). */
export function redisBusFor(config: Config, log?: Logger): RedisBus {
  let lastLogged = 0;
  return new RedisBus({
    url: config.redisUrl!,
    nodeId: config.nodeId ?? `${os.hostname()}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`,
    maxLen: config.redisStreamMaxLen,
    // A Redis outage repeats the same error on every retry: at most one line a second.
    onError: (err, what) => {
      const now = Date.now();
      if (now - lastLogged < 1000) return;
      lastLogged = now;
      log?.error({ err }, `event bus: ${what} failed`);
    },
  });
}
