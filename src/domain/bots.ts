import { ApiError } from '../errors';
import { BotType, isValidEmail } from './users';

/** Zulip's Service.ALLOWED_INTERFACE_TYPES: 1 its own outgoing webhook format, 2 Slack's. */
export const SERVICE_INTERFACES: readonly number[] = [1, 2];

/**
 * The bot types someone may create (Zulip's UserProfile.allowed_bot_types):
 * every type but embedded for members of can_create_bots_group (Parley runs
 * no embedded bots: Zulip's EMBEDDED_BOTS_ENABLED off), only incoming webhook
 * bots for members of can_create_write_only_bots_group alone.
 */
export function allowedBotTypes(mayCreateAny: boolean, mayCreateWriteOnly: boolean): number[] {
  if (mayCreateAny) return [BotType.DEFAULT, BotType.INCOMING_WEBHOOK, BotType.OUTGOING_WEBHOOK];
  return mayCreateWriteOnly ? [BotType.INCOMING_WEBHOOK] : [];
}

/**
 * Who may create a bot of this type (Zulip's check_bot_creation_policy
 * since the two group settings replaced bot_creation_policy at feature
 * level 344): members of can_create_bots_group any type, members of
 * can_create_write_only_bots_group incoming webhook bots.
 */
export function checkBotCreationPolicy(botType: number, mayCreateAny: boolean, mayCreateWriteOnly: boolean): void {
  if (mayCreateAny) return;
  if (botType === BotType.INCOMING_WEBHOOK && mayCreateWriteOnly) return;
  throw new ApiError('Insufficient permission');
}

/** A bot's username, trimmed; an empty one is refused (Zulip's check_short_name). */
export function checkShortName(raw: string): string {
  const short = raw.trim();
  if (short.length === 0) throw new ApiError('Bad name or username');
  return short;
}

// RFC 5322's dot-atom, the only local part Django's email validator and our
// isValidEmail both take unquoted.
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/**
 * A new bot's email: `<short_name>-bot@<bot domain>`. A username that does not
 * make a valid address is "Bad name or username", as Zulip's CreateUserForm
 * answers it.
 */
export function botEmail(shortName: string, botDomain: string): string {
  const local = `${shortName}-bot`;
  const email = `${local}@${botDomain}`;
  if (!DOT_ATOM.test(local) || local.length > 64 || !isValidEmail(email)) throw new ApiError('Bad name or username');
  return email;
}

/**
 * An outgoing webhook's URL parameter. Zulip declares it JSON-encoded
 * (`"https://..."`, as its web app sends it); a bare URL is taken too. The
 * empty string is Zulip's default for payload_url and passes. Otherwise an
 * http(s) URL with a host, or Zulip's "<name> is not a URL".
 */
export function checkServiceUrl(name: string, raw: string): string {
  let value = raw;
  if (raw.startsWith('"')) {
    try {
      const decoded: unknown = JSON.parse(raw);
      if (typeof decoded === 'string') value = decoded;
    } catch {
      // Not JSON after all: the text as sent, checked below.
    }
  }
  if (value === '') return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApiError(`${name} is not a URL`);
  }
  if (!['http:', 'https:', 'ftp:', 'ftps:'].includes(url.protocol) || !url.hostname) throw new ApiError(`${name} is not a URL`);
  return value;
}

export function checkInterfaceType(value: number): void {
  if (!SERVICE_INTERFACES.includes(value)) throw new ApiError('Invalid interface type');
}
