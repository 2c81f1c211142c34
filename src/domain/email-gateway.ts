import crypto from 'node:crypto';

/**
 * Addresses of the incoming email gateway (docs/architecture/email-gateway.md).
 * EMAIL_GATEWAY_PATTERN is an address with one `%s`, e.g.
 * `%s@chat.example.com`; what stands for `%s` is a channel address's
 * `name.token.options` or a missed-message address's `mm` token.
 */

/** The options a channel address may carry after its token (Zulip's optional_address_tokens). */
export interface AddressOptions {
  showSender?: boolean;
  includeFooter?: boolean;
  includeQuotes?: boolean;
  /** prefer-text (true) or prefer-html (false); text by default. */
  preferText?: boolean;
}

const OPTION_WORDS: Record<string, (o: AddressOptions) => void> = {
  'show-sender': (o) => (o.showSender = true),
  'include-footer': (o) => (o.includeFooter = true),
  'include-quotes': (o) => (o.includeQuotes = true),
  'prefer-text': (o) => (o.preferText = true),
  'prefer-html': (o) => (o.preferText = false),
};

/** A channel address's token: 32 hexadecimal digits, as Zulip's (secrets.token_hex(16)). */
export const newChannelEmailToken = () => crypto.randomBytes(16).toString('hex');

/** A missed-message address's token: "mm" and 32 hexadecimal digits (Zulip's generate_missed_message_token). */
export const newMissedMessageToken = () => `mm${crypto.randomBytes(16).toString('hex')}`;

/** Whether the part of an address the pattern's `%s` matched is a missed-message token (Zulip's is_mm_32_format). */
export const isMissedMessageToken = (s: string) => s.startsWith('mm') && s.length === 34;

/**
 * The channel's name as its address shows it, or "channel" when it cannot
 * be shown in ASCII without dropping letters (Zulip's rule): runs of
 * characters other than letters, digits and underscores become one hyphen,
 * accents are stripped, the rest lowercased; a name that loses characters
 * on the way is not used.
 */
export function addressNameOf(channelName: string): string {
  const hyphenated = channelName.replace(/[^\p{L}\p{N}_]+/gu, '-');
  const ascii = hyphenated
    .normalize('NFKD')
    .replace(/[^\p{ASCII}]/gu, '')
    .replace(/[^\w\s-]/g, '')
    .toLowerCase()
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
  return ascii && ascii.length === hyphenated.length ? ascii : 'channel';
}

/**
 * A channel's address: `name.token` (and `.show-sender`, which Zulip's
 * GET /streams/{id}/email_address always adds) in the pattern's `%s`.
 */
export function channelEmailAddress(pattern: string, channelName: string, token: string, showSender = true): string {
  return pattern.replace('%s', `${addressNameOf(channelName)}.${token}${showSender ? '.show-sender' : ''}`);
}

/** A missed-message email's Reply-To address. */
export const missedMessageEmailAddress = (pattern: string, token: string) => pattern.replace('%s', token);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * What the pattern's `%s` stands for in `address`, or null when the address
 * is not one of the gateway's. The domain compares without case, as mail
 * does.
 */
export function gatewayLocalPart(pattern: string, address: string): string | null {
  const [before, after] = pattern.split('%s') as [string, string];
  const match = new RegExp(`^${escapeRegExp(before)}(.+?)${escapeRegExp(after)}$`, 'i').exec(address.trim());
  return match ? match[1]! : null;
}

/**
 * A channel address's token and options (Zulip's decode_email_address):
 * `.` and `+` both separate the parts (older addresses used `+`), option
 * words are taken wherever they stand, and of what remains the token is the
 * second part (after the name) or the only one.
 */
export function decodeChannelLocalPart(localPart: string): { token: string; options: AddressOptions } {
  const options: AddressOptions = {};
  const rest: string[] = [];
  for (const part of localPart.split(/[.+]/)) {
    const set = OPTION_WORDS[part.toLowerCase()];
    if (set) set(options);
    else rest.push(part);
  }
  const token = (rest.length === 1 ? rest[0] : rest[1]) ?? '';
  return { token: token.toLowerCase(), options };
}

/**
 * A mail's Subject as a topic (Zulip's strip_from_subject): "Re:", "Fwd:",
 * "AW:" and their bracketed forms removed, characters a topic may not hold
 * dropped; an empty result becomes Zulip's "Email with no subject" (not
 * the empty topic, which an organization may forbid).
 */
export function topicFromSubject(subject: string): string {
  const stripped = subject
    .replace(/([[(] *)?\b(RE|AW|FWD?) *([-:;)\]][ :;\])-]*|$)|\]+ *$/gim, '')
    .trim()
    .replace(/[\p{Cc}\p{Cs}\p{Co}\p{Cn}]/gu, '');
  return stripped || 'Email with no subject';
}

/** Whether the Subject says the mail was forwarded: its quotations are kept then (Zulip's is_forwarded). */
export const isForwardedSubject = (subject: string) => /^([[(] *)?\b(FWD?) *([-:;)\]][ :;\])-]*|$)|^\]+ *$/i.test(subject);

/**
 * A signature block removed (Zulip's filter_footer): only when exactly one
 * line is "--", everything from it on goes; otherwise the text is kept.
 */
export function withoutFooter(text: string): string {
  const lines = text.split('\n');
  const index = lines.findIndex((l) => l.trim() === '--');
  if (index === -1 || lines.filter((l) => l.trim() === '--').length !== 1) return text;
  return lines.slice(0, index).join('\n').trim();
}

/** A file name as a Markdown link's text: brackets dropped, as Zulip does (its Markdown has no escape for them). */
export const linkTextOf = (fileName: string) => fileName.replace(/[[\]]/g, '');

/**
 * The quoted message of a reply removed (what Zulip asks of its quotation
 * library, in a simpler form): from a line like "-----Original Message-----"
 * or "On … wrote:" followed only by quoted (`>`) or blank lines, everything
 * goes; so do trailing quoted lines. Quotations inside the text stay.
 */
export function withoutQuotedReply(text: string): string {
  const lines = text.split('\n');
  const original = lines.findIndex((l) => /^\s*-{2,}\s*Original Message\s*-{2,}\s*$/i.test(l));
  let end = original === -1 ? lines.length : original;
  while (end > 0 && (lines[end - 1]!.trim() === '' || lines[end - 1]!.trimStart().startsWith('>'))) end--;
  const quoted = lines.slice(end, original === -1 ? lines.length : original).some((l) => l.trimStart().startsWith('>'));
  if (quoted && end > 0 && /\bwrote:\s*$/i.test(lines[end - 1]!)) {
    end--;
    while (end > 0 && lines[end - 1]!.trim() === '') end--;
  }
  if (original === -1 && !quoted) return text;
  return lines.slice(0, end).join('\n');
}
