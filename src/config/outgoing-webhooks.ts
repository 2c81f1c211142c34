import { commaList, ConfigError, isAddressOrRange, positiveInt, setting, settingOrDefault } from './checks';

/** A host name as a URL carries it: letters, digits, hyphens and dots. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)*\.?$/i;

/**
 * OUTGOING_WEBHOOK_ALLOWED_HOSTS: the hosts outgoing webhooks may reach
 * although they are private (src/domain/outgoing-webhook-urls.ts): host
 * names, addresses and CIDR ranges, comma separated; empty by default, so
 * a bot's URL cannot reach the server's own network. And
 * OUTGOING_WEBHOOK_TIMEOUT_SECONDS, how long a webhook's answer may take
 * (Zulip's setting of that name, 10 seconds).
 */
export function outgoingWebhookSettings(env: NodeJS.ProcessEnv) {
  const raw = setting(env, 'OUTGOING_WEBHOOK_ALLOWED_HOSTS') ?? '';
  const entries = commaList(raw);
  for (const entry of entries) {
    if (isAddressOrRange(entry) || HOST_NAME.test(entry)) continue;
    throw new ConfigError('OUTGOING_WEBHOOK_ALLOWED_HOSTS', 'must list host names, addresses or CIDR ranges, comma separated', raw);
  }
  return {
    outgoingWebhookAllowedHosts: entries,
    outgoingWebhookTimeoutSeconds: positiveInt(
      'OUTGOING_WEBHOOK_TIMEOUT_SECONDS',
      settingOrDefault(env, 'OUTGOING_WEBHOOK_TIMEOUT_SECONDS'),
    ),
  };
}
