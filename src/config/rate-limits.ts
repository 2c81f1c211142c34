import { ConfigError, oneOf, setting, settingOrDefault } from './checks';
import { RATE_LIMIT_STORES, type RateLimitStore } from '../domain/rate-limits';

/**
 * RATE_LIMIT_STORE (src/config.ts documents it). `redis` counts in the Redis
 * server of REDIS_URL (the event bus's setting, src/config/event-bus.ts checks
 * its form): without one the store has nowhere to count, which is refused at
 * start rather than found out at the first request.
 */
export function rateLimitStoreSetting(env: NodeJS.ProcessEnv): RateLimitStore {
  const store = oneOf('RATE_LIMIT_STORE', settingOrDefault(env, 'RATE_LIMIT_STORE'), RATE_LIMIT_STORES);
  if (store === 'redis' && setting(env, 'REDIS_URL') === undefined) {
    throw new ConfigError('REDIS_URL', 'must be set when RATE_LIMIT_STORE=redis', '');
  }
  return store;
}
