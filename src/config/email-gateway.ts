import fs from 'node:fs';
import { ConfigError, hostName, portNumber, positiveInt, setting, settingOrDefault } from './checks';

/**
 * The incoming email gateway (docs/architecture/email-gateway.md):
 * - EMAIL_GATEWAY_PATTERN: the gateway's addresses, one `%s` for the part
 *   that names the channel or conversation (Zulip's setting, e.g.
 *   `%s@chat.example.com`). Unset: no channel has an address (GET
 *   /streams/{id}/email_address answers an empty string, as Zulip does)
 *   and missed-message emails carry no reply address.
 * - EMAIL_GATEWAY_PORT: Parley listens for SMTP there (unset: it does not;
 *   a pattern without a port suits a deployment whose mail server hands
 *   mail to a listener elsewhere). EMAIL_GATEWAY_HOST: the address it
 *   binds, loopback by default, behind the organization's mail server.
 * - EMAIL_GATEWAY_MAX_MESSAGE_MIB: the largest mail accepted, announced with
 *   the SIZE extension and enforced on the bytes received (Zulip's SMTP
 *   server, aiosmtpd, accepts 32 MiB).
 * - EMAIL_GATEWAY_TLS_CERT and EMAIL_GATEWAY_TLS_KEY: PEM files; both set,
 *   the listener offers STARTTLS (never requires it).
 */
export function emailGatewaySettings(env: NodeJS.ProcessEnv) {
  const pattern = setting(env, 'EMAIL_GATEWAY_PATTERN') ?? '';
  if (pattern !== '' && (pattern.split('%s').length !== 2 || !/^[^@\s]*%s[^@\s]*@[^@\s]+$/.test(pattern))) {
    throw new ConfigError(
      'EMAIL_GATEWAY_PATTERN',
      'must be an email address with one %s in its local part, like %s@chat.example.com',
      pattern,
    );
  }
  const port = setting(env, 'EMAIL_GATEWAY_PORT');
  if (port !== undefined && pattern === '') {
    throw new ConfigError('EMAIL_GATEWAY_PORT', 'needs EMAIL_GATEWAY_PATTERN set (the addresses it accepts)', port);
  }
  const cert = setting(env, 'EMAIL_GATEWAY_TLS_CERT');
  const key = setting(env, 'EMAIL_GATEWAY_TLS_KEY');
  if ((cert === undefined) !== (key === undefined)) {
    throw new ConfigError('EMAIL_GATEWAY_TLS_CERT', 'and EMAIL_GATEWAY_TLS_KEY must be set together', cert ?? key ?? '');
  }
  for (const [name, file] of [
    ['EMAIL_GATEWAY_TLS_CERT', cert],
    ['EMAIL_GATEWAY_TLS_KEY', key],
  ] as const) {
    if (file !== undefined && !fs.existsSync(file)) throw new ConfigError(name, 'must name a readable PEM file', file);
  }
  return {
    emailGatewayPattern: pattern,
    emailGatewayPort: port === undefined ? null : portNumber('EMAIL_GATEWAY_PORT', port),
    emailGatewayHost: hostName('EMAIL_GATEWAY_HOST', settingOrDefault(env, 'EMAIL_GATEWAY_HOST')),
    emailGatewayMaxMessageBytes:
      positiveInt('EMAIL_GATEWAY_MAX_MESSAGE_MIB', settingOrDefault(env, 'EMAIL_GATEWAY_MAX_MESSAGE_MIB')) * 1024 * 1024,
    emailGatewayTls: cert !== undefined && key !== undefined ? { certFile: cert, keyFile: key } : null,
  };
}

export type EmailGatewaySettings = ReturnType<typeof emailGatewaySettings>;
