import { ConfigError, oneOf, positiveInt, setting, settingOrDefault } from './checks';

/** A node name: what HAProxy matches in a queue id, so no `:` (the separator) and nothing a URL escapes. */
const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** NODE_ID, EVENT_BUS, REDIS_URL and REDIS_STREAM_MAXLEN (src/config.ts documents each). */
export function eventBusSettings(env: NodeJS.ProcessEnv) {
  const nodeId = setting(env, 'NODE_ID') ?? null;
  if (nodeId !== null && !NODE_ID.test(nodeId)) {
    throw new ConfigError('NODE_ID', 'must be 1 to 32 letters, digits, - or _ (starting with a letter or digit)', nodeId);
  }
  const eventBus = oneOf('EVENT_BUS', settingOrDefault(env, 'EVENT_BUS'), ['memory', 'redis'] as const);
  const rawRedisUrl = setting(env, 'REDIS_URL');
  const redisUrl = rawRedisUrl === undefined ? null : redisUrlSetting(rawRedisUrl);
  if (eventBus === 'redis' && redisUrl === null) throw new ConfigError('REDIS_URL', 'must be set when EVENT_BUS=redis', '');
  const redisStreamMaxLen = positiveInt('REDIS_STREAM_MAXLEN', settingOrDefault(env, 'REDIS_STREAM_MAXLEN'));
  return { nodeId, eventBus, redisUrl, redisStreamMaxLen };
}

/** redis:// or rediss://; the message never repeats a password. */
function redisUrlSetting(raw: string): string {
  const u = URL.canParse(raw) ? new URL(raw) : null;
  if (!u || (u.protocol !== 'redis:' && u.protocol !== 'rediss:') || !u.hostname) {
    throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL (redis://host:port)', raw.replace(/:[^:@/]*@/, ':***@'));
  }
  return raw;
}
