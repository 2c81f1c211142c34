import { boolean, ConfigError, hostName, portNumber, positiveInt, setting, settingOrDefault } from './checks';

/** An address as a From or a test recipient may be: something@a.domain, nothing else around it. */
export const MAIL_ADDRESS = /^[^\s@<>()",;:]+@[^\s@<>()",;:]+$/;

/**
 * Outgoing mail (docs/architecture/email.md), with the names of Zulip's
 * settings (Django's, which Zulip's SMTP settings are):
 *
 * - EMAIL_HOST: the SMTP server. Unset: nothing is sent over SMTP; each
 *   mail is written to DATA_DIR/emails/ instead (as Zulip's development
 *   email log keeps them), and the server says so when it starts.
 * - EMAIL_USE_TLS: STARTTLS on a plain connection (port 587 by default);
 *   EMAIL_USE_SSL: TLS from the first byte (port 465 by default). Django
 *   refuses both at once, and so does Parley. Without either no STARTTLS
 *   is attempted, as Django does not attempt it.
 * - EMAIL_PORT: Django's default is 25 whatever the encryption; Parley
 *   picks the port each encryption is served on (465 for SSL, 587 for
 *   STARTTLS, 25 otherwise), since port 25 with EMAIL_USE_SSL could never
 *   work. Set it and that is the port.
 * - EMAIL_HOST_USER / EMAIL_HOST_PASSWORD: authentication, only when both
 *   are set (Django's rule); one without the other is refused, since it can
 *   only be a mistake.
 * - NOREPLY_EMAIL_ADDRESS: the From address of every mail (Zulip's default:
 *   noreply@ the host of EXTERNAL_URL).
 * - EMAIL_TIMEOUT_SECONDS (Django's EMAIL_TIMEOUT): how long connecting, the
 *   greeting and each answer may take; an attempt as a whole gets three
 *   times as long.
 * - EMAIL_MAX_ATTEMPTS, EMAIL_RETRY_SECONDS: a mail the server did not take
 *   for a reason that may pass (a 4xx answer, a connection error) is tried
 *   again after EMAIL_RETRY_SECONDS, doubled after each attempt up to an
 *   hour, at most EMAIL_MAX_ATTEMPTS times in all.
 */
export function emailSettings(env: NodeJS.ProcessEnv, externalUrl: string) {
  const host = setting(env, 'EMAIL_HOST');
  const useTls = boolean('EMAIL_USE_TLS', settingOrDefault(env, 'EMAIL_USE_TLS'));
  const useSsl = boolean('EMAIL_USE_SSL', settingOrDefault(env, 'EMAIL_USE_SSL'));
  if (useTls && useSsl) {
    throw new ConfigError(
      'EMAIL_USE_TLS and EMAIL_USE_SSL',
      'cannot both be true (STARTTLS on a plain connection, or TLS from the start: set one)',
      'true, true',
    );
  }
  const port = setting(env, 'EMAIL_PORT');
  const user = setting(env, 'EMAIL_HOST_USER') ?? null;
  const password = setting(env, 'EMAIL_HOST_PASSWORD') ?? null;
  if ((user === null) !== (password === null)) {
    throw new ConfigError(
      user === null ? 'EMAIL_HOST_PASSWORD' : 'EMAIL_HOST_USER',
      `is set but ${user === null ? 'EMAIL_HOST_USER' : 'EMAIL_HOST_PASSWORD'} is not (authentication needs both; neither for none)`,
      user === null ? '(a password)' : user,
    );
  }
  const given = setting(env, 'NOREPLY_EMAIL_ADDRESS');
  if (given !== undefined && !MAIL_ADDRESS.test(given)) {
    throw new ConfigError('NOREPLY_EMAIL_ADDRESS', 'must be an email address (name@domain)', given);
  }
  const noreply = given ?? defaultNoreply(externalUrl);
  return {
    emailHost: host === undefined ? null : hostName('EMAIL_HOST', host),
    emailPort: port !== undefined ? portNumber('EMAIL_PORT', port) : useSsl ? 465 : useTls ? 587 : 25,
    emailHostUser: user,
    emailHostPassword: password,
    emailUseTls: useTls,
    emailUseSsl: useSsl,
    noreplyEmailAddress: noreply,
    emailTimeoutSeconds: positiveInt('EMAIL_TIMEOUT_SECONDS', settingOrDefault(env, 'EMAIL_TIMEOUT_SECONDS')),
    emailMaxAttempts: positiveInt('EMAIL_MAX_ATTEMPTS', settingOrDefault(env, 'EMAIL_MAX_ATTEMPTS')),
    emailRetrySeconds: positiveInt('EMAIL_RETRY_SECONDS', settingOrDefault(env, 'EMAIL_RETRY_SECONDS')),
  };
}

/**
 * Zulip's default From: noreply@ the host of the server's URL, its port left
 * out. An IPv6 address is written as RFC 5321 writes an address literal.
 */
function defaultNoreply(externalUrl: string): string {
  const host = new URL(externalUrl).hostname;
  return host.startsWith('[') ? `noreply@[IPv6:${host.slice(1, -1)}]` : `noreply@${host}`;
}

export type EmailSettings = ReturnType<typeof emailSettings>;
