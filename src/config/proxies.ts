import { commaList, ConfigError, isAddressOrRange, setting } from './checks';

/** proxy-addr's names for address ranges (what Express's `trust proxy` accepts besides addresses). */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * TRUSTED_PROXIES: the load balancers whose X-Forwarded-For Parley believes
 * (addresses, CIDR ranges, or loopback / linklocal / uniquelocal), comma
 * separated; empty by default, so a client cannot pick its own address for the
 * per-address rate limit by sending the header. Behind HAProxy every request
 * comes from the proxy's address; trusting it gives each client its own limit.
 */
export function trustedProxiesSetting(env: NodeJS.ProcessEnv): string[] {
  const raw = setting(env, 'TRUSTED_PROXIES') ?? '';
  const entries = commaList(raw);
  for (const entry of entries) {
    if (RANGE_NAMES.has(entry) || isAddressOrRange(entry)) continue;
    throw new ConfigError(
      'TRUSTED_PROXIES',
      'must list addresses or CIDR ranges (or loopback, linklocal, uniquelocal), comma separated',
      raw,
    );
  }
  return entries;
}
