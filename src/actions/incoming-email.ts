import type { AppContext } from '../context';
import { inTransaction, type Tx } from '../db/transaction';
import {
  type AddressOptions,
  decodeChannelLocalPart,
  gatewayLocalPart,
  isForwardedSubject,
  isMissedMessageToken,
  linkTextOf,
  missedMessageEmailAddress,
  newMissedMessageToken,
  topicFromSubject,
  withoutFooter,
  withoutQuotedReply,
} from '../domain/email-gateway';
import { RecipientType } from '../domain/recipients';
import { RateLimitNotes } from '../domain/rate-limits';
import { MAX_MESSAGE_LENGTH, normalizeContent, normalizeTopic } from '../domain/topics';
import { ApiError } from '../errors';
import { loadCaller, type Caller } from '../access/viewer';
import { getChannelEmailAddressByToken, type ChannelEmailAddressRow } from '../queries/channel-email-addresses';
import { getChannelById, type ChannelRow } from '../queries/channels';
import { getDmParticipants, getMessageRow, type MessageRow } from '../queries/messages';
import {
  getMissedMessageAddressByToken,
  incrementMissedMessageAddressUse,
  insertMissedMessageAddress,
  type MissedMessageAddressRow,
} from '../queries/missed-message-addresses';
import { getRealmById } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { getUserById, listUsersByIds } from '../queries/users';
import { emailGatewayBot } from './channel-email';
import { checkMayPostInChannel, sendMessageInTx, type SendTarget } from './messages';
import { INTERNAL, notificationBot } from './notifications';
import { doStoreUpload } from './uploads';

/**
 * A mail the gateway refuses, with the SMTP reply that says why: at RCPT
 * (an address that is not one of the gateway's, an unknown token, a sender
 * no longer allowed to post) or after DATA (a forged sender, no body, an
 * attachment over the limits). The text is for the sending mail server's
 * bounce: it names the problem, never a token.
 */
export class GatewayRefusal extends Error {
  constructor(
    readonly code: number,
    /** The enhanced status code (RFC 3463), e.g. "5.1.1". */
    readonly status: string,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayRefusal';
  }

  get response(): string {
    return `${this.status} ${this.message}`;
  }
}

const badMailbox = (why: string) => new GatewayRefusal(550, '5.1.1', `Bad destination mailbox address: ${why}`);
const denied = (why: string) => new GatewayRefusal(550, '5.7.1', `Permission denied: ${why}`);
const unusable = (why: string) => new GatewayRefusal(550, '5.6.0', why);

/** A mail as the listener parsed it (src/gateway/listener.ts, with mailparser). */
export interface IncomingMail {
  /** The From header as written, for the `show-sender` line. */
  fromHeader: string;
  /** The From header's addresses. */
  fromAddresses: string[];
  subject: string;
  /** The text/plain part, or null when there is none. */
  text: string | null;
  /** The text/html part converted to Markdown, or null when there is none. */
  htmlAsMarkdown: string | null;
  attachments: Array<{ fileName: string; contentType: string; content: Buffer }>;
}

/** Where a gateway address leads. */
export type GatewayRecipient =
  | {
      kind: 'channel';
      address: ChannelEmailAddressRow;
      options: AddressOptions;
      /** Who posts, where, in which organization: as checked. */
      sender: UserRow;
      realm: RealmRow;
      channel: ChannelRow;
    }
  | { kind: 'missed-message'; address: MissedMessageAddressRow; user: UserRow; realm: RealmRow; message: MessageRow };

/**
 * The gateway recipient an address names, checked as Zulip's SMTP server
 * checks it at RCPT (validate_to_address): a missed-message address must
 * exist, its user be active and, for a channel message, still allowed to
 * post there; a channel address must exist and be active, its sender (or,
 * for the Email Gateway bot, its creator) still allowed to post, and only
 * channel addresses count against the organization's rate limit (they are
 * what automated senders use).
 */
export async function checkGatewayRecipient(ctx: AppContext, address: string, opts: { rateLimit: boolean }): Promise<GatewayRecipient> {
  const pattern = ctx.config.emailGatewayPattern;
  const local = pattern === '' ? null : gatewayLocalPart(pattern, address);
  if (local === null) throw badMailbox('address not recognized by the gateway.');
  if (isMissedMessageToken(local.toLowerCase())) {
    const row = await getMissedMessageAddressByToken(ctx.db, local.toLowerCase());
    if (!row) throw badMailbox('notification reply address is invalid.');
    const { user, realm, message } = await missedMessageContext(ctx, row);
    if (message.recipient_type === RecipientType.CHANNEL) {
      // Direct messages' rules are checked when the reply is sent; a
      // channel's are checked now, so that a refusal reaches the sender.
      await checkCanPostAs(ctx, user, realm, message.channel_id!);
    }
    return { kind: 'missed-message', address: row, user, realm, message };
  }
  const { token, options } = decodeChannelLocalPart(local);
  const row = token === '' ? undefined : await getChannelEmailAddressByToken(ctx.db, token);
  if (!row || row.deactivated) throw badMailbox('unknown channel address.');
  if (opts.rateLimit) {
    try {
      await ctx.rateLimits.consume('emailGatewayRealm', String(row.realm_id), new RateLimitNotes());
    } catch (err) {
      if (err instanceof ApiError && err.status === 429) {
        throw new GatewayRefusal(450, '4.7.0', 'Rate-limited due to too many emails on this organization.');
      }
      throw err;
    }
  }
  return { kind: 'channel', address: row, options, ...(await checkChannelAddressAccess(ctx, row)) };
}

/**
 * The Reply-To of a missed-message email about `messageId` to `userId`
 * (Zulip's create_missed_message_address): a new address, recorded in the
 * transaction that queues the mail; null when the server has no gateway
 * (the mail then names no reply address; Zulip's is its no-reply one).
 */
export async function newMissedMessageReplyTo(
  ctx: Pick<AppContext, 'config'>,
  tx: Tx,
  userId: number,
  messageId: number,
  nowSeconds: number,
): Promise<string | null> {
  const pattern = ctx.config.emailGatewayPattern;
  if (pattern === '') return null;
  const token = newMissedMessageToken();
  await insertMissedMessageAddress(tx.trx, {
    user_id: userId,
    message_id: messageId,
    email_token: token,
    created_at: nowSeconds,
  });
  return missedMessageEmailAddress(pattern, token);
}

/** The address's user, organization and message; a missing one makes the address invalid. */
async function missedMessageContext(
  ctx: AppContext,
  row: MissedMessageAddressRow,
): Promise<{ user: UserRow; realm: RealmRow; message: MessageRow }> {
  const user = await getUserById(ctx.db, row.user_id);
  const message = await getMessageRow(ctx.db, row.message_id);
  const realm = user && (await getRealmById(ctx.db, user.realm_id));
  if (!user || !realm || !message || message.realm_id !== realm.id) throw badMailbox('notification reply address is invalid.');
  if (!user.is_active || realm.deactivated) throw denied('the user this address belongs to is deactivated.');
  return { user, realm, message };
}

/** The channel, which `user` may still post in; otherwise a refusal with the reason the API would give. */
async function checkCanPostAs(
  ctx: AppContext,
  user: UserRow,
  realm: RealmRow,
  channelId: number,
): Promise<{ caller: Caller; channel: ChannelRow }> {
  if (!user.is_active) throw denied('the user this address belongs to is deactivated.');
  const channel = await getChannelById(ctx.db, realm.id, channelId);
  if (!channel) throw badMailbox('the channel no longer exists.');
  const caller = await loadCaller(ctx.db, user, realm);
  try {
    checkMayPostInChannel(caller, channel);
  } catch (err) {
    if (err instanceof ApiError) throw denied(err.message);
    throw err;
  }
  return { caller, channel };
}

/**
 * Zulip's check_access_for_channel_email_address: an address posting as
 * the Email Gateway bot is checked with its creator's rights (the bot is
 * subscribed nowhere); one posting as the creator or their bot, with the
 * sender's.
 */
async function checkChannelAddressAccess(
  ctx: AppContext,
  row: ChannelEmailAddressRow,
): Promise<{ sender: UserRow; realm: RealmRow; channel: ChannelRow }> {
  const realm = await getRealmById(ctx.db, row.realm_id);
  const [sender, creator] = await Promise.all([getUserById(ctx.db, row.sender_id), getUserById(ctx.db, row.creator_id)]);
  if (!realm || realm.deactivated || !sender || !creator) throw badMailbox('unknown channel address.');
  const gatewayBot = await inTransaction(ctx.db, (tx) => emailGatewayBot(tx, realm.id));
  if (!sender.is_active) throw denied('the sender of this address is deactivated.');
  const { channel } = await checkCanPostAs(ctx, sender.id === gatewayBot.id ? creator : sender, realm, row.channel_id);
  return { sender, realm, channel };
}

/**
 * Posts a mail the listener accepted for `address` (Zulip's
 * process_message), checking everything again (time passed since RCPT):
 * - to a channel address: a message in the channel as the address's
 *   sender, topic from the Subject, body from the mail (construct_zulip_body);
 * - to a missed-message address: a reply where the notified message was,
 *   as the user the notification was for, sent only when the mail's From
 *   is that user's own address (see docs/architecture/email-gateway.md,
 *   "Forged senders"); `times_used` counts it.
 * Refusals are GatewayRefusal; the message goes through the ordinary send
 * path, so events, push notifications and caches follow as for any message.
 */
export async function doProcessIncomingEmail(ctx: AppContext, address: string, mail: IncomingMail): Promise<{ messageId: number }> {
  const recipient = await checkGatewayRecipient(ctx, address, { rateLimit: false });
  if (recipient.kind === 'channel') {
    const { sender, realm, channel } = recipient;
    const options = { ...recipient.options };
    // A forwarded mail's quotation is what was forwarded: kept unless the address says otherwise.
    options.includeQuotes ??= isForwardedSubject(mail.subject);
    const content = await zulipBody(ctx, mail, realm, sender, options);
    const caller = await loadCaller(ctx.db, sender, realm);
    const topic = normalizeTopic(topicFromSubject(mail.subject));
    // Internal: the posting rules were checked for the address's user above
    // (the Email Gateway bot itself is subscribed nowhere).
    return { messageId: await send(ctx, caller, { kind: 'channel', channel, topic }, content, true) };
  }
  const { address: row, user, realm, message } = recipient;
  checkFromIsUser(mail, user);
  await incrementMissedMessageAddressUse(ctx.db, row.id);
  const content = await zulipBody(ctx, mail, realm, user, {});
  const caller = await loadCaller(ctx.db, user, realm);
  if (message.recipient_type === RecipientType.CHANNEL) {
    const channel = await getChannelById(ctx.db, realm.id, message.channel_id!);
    if (!channel) throw badMailbox('the channel no longer exists.');
    try {
      return { messageId: await send(ctx, caller, { kind: 'channel', channel, topic: message.topic }, content, false) };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // As Zulip does: the user hears why from Notification Bot; the mail was taken.
      const text = `Error sending message to channel ${channel.name} via message notification email reply:\n${err.message}`;
      await inTransaction(ctx.db, async (tx) => {
        const bot = await loadCaller(tx.trx, await notificationBot(tx, realm.id), realm);
        await sendMessageInTx(tx, ctx.bus, bot, { kind: 'direct', recipients: [user] }, text, INTERNAL);
      });
      throw unusable(`The reply could not be posted: ${err.message}`);
    }
  }
  // A direct message: the reply goes to the same conversation (Zulip's
  // internal send, without the direct-message permission checks).
  const participants = (await getDmParticipants(ctx.db, [message.recipient_id])).get(message.recipient_id) ?? [];
  const others = participants.filter((id) => id !== user.id);
  const recipients = await listUsersByIds(ctx.db, realm.id, others.length > 0 ? others : [user.id]);
  return { messageId: await send(ctx, caller, { kind: 'direct', recipients }, content, true) };
}

async function send(ctx: AppContext, caller: Caller, target: SendTarget, content: string, internal: boolean): Promise<number> {
  const linkifiers = await ctx.caches.linkifiers.get(caller.realm.id);
  const mutingUsers = await ctx.caches.mutingUsers.get(caller.user.id);
  const id = await inTransaction(ctx.db, (tx) =>
    // Zulip's normalize_body: trailing whitespace and leading blank lines go, as for any message.
    sendMessageInTx(tx, ctx.bus, caller, target, normalizeContent(content), {
      client: 'ZulipEmailGateway',
      readBySender: false,
      internal,
      messageCache: ctx.messageCache,
      linkifiers,
      mutingUsers,
    }),
  );
  return id.committed();
}

/**
 * Forged senders: a missed-message address stands for one user, so a reply
 * to it must come From that user's delivery address. (Whether the From
 * itself is forged is the receiving mail server's to judge, by SPF, DKIM
 * and DMARC, before it hands the mail to Parley.)
 */
function checkFromIsUser(mail: IncomingMail, user: UserRow): void {
  const expected = user.delivery_email.toLowerCase();
  if (!mail.fromAddresses.some((a) => a.toLowerCase() === expected)) {
    throw denied('the sender is not the person this notification reply address was sent to.');
  }
}

/**
 * A mail's message content (Zulip's construct_zulip_body): the preferred
 * body part (text unless the address says prefer-html), quotations and a
 * signature removed unless the address keeps them, "(No email body)" when
 * nothing is left, the From line first for show-sender, and each attachment
 * uploaded as `uploader` and linked at the end; the body is cut so that the
 * links always fit.
 */
async function zulipBody(
  ctx: AppContext,
  mail: IncomingMail,
  realm: RealmRow,
  uploader: UserRow,
  options: AddressOptions,
): Promise<string> {
  let body = extractBody(mail, options);
  body = body.replaceAll('\u0000', '');
  if (!options.includeFooter) body = withoutFooter(body);
  if (!body.endsWith('\n')) body += '\n';
  if (body.trim() === '') body = '(No email body)';
  const preamble = options.showSender ? `From: ${mail.fromHeader}\n` : '';
  const links = await uploadAttachments(ctx, mail, realm, uploader);
  const postamble = links.length > 0 ? `\n${links.join('\n')}` : '';
  const room = MAX_MESSAGE_LENGTH - [...preamble].length - [...postamble].length;
  const marker = '\n[message truncated]';
  const chars = [...body];
  if (chars.length > room) body = chars.slice(0, Math.max(0, room - marker.length)).join('') + marker;
  return preamble + body + postamble;
}

function extractBody(mail: IncomingMail, options: AddressOptions): string {
  const strip = (s: string | null) => (s === null || options.includeQuotes ? s : withoutQuotedReply(s));
  const text = strip(mail.text);
  const html = strip(mail.htmlAsMarkdown);
  if (text === null && html === null) throw unusable('Unable to find plaintext or HTML message body.');
  if (!text && !html) throw unusable('Email has no nonempty body sections.');
  const preferText = options.preferText ?? true;
  return (preferText ? text || html : html || text)!;
}

/** Each attachment stored as an upload of `uploader` (the quota applies), as Markdown links. */
async function uploadAttachments(ctx: AppContext, mail: IncomingMail, realm: RealmRow, uploader: UserRow): Promise<string[]> {
  const limit = ctx.config.maxFileUploadSizeMib * 1024 * 1024;
  const links: string[] = [];
  for (const a of mail.attachments) {
    if (a.content.length > limit) {
      throw new GatewayRefusal(552, '5.3.4', `Attachment ${linkTextOf(a.fileName)} is larger than ${ctx.config.maxFileUploadSizeMib} MiB.`);
    }
    const file = await ctx.storage.create();
    file.stream.end(a.content);
    try {
      const stored = await doStoreUpload(ctx, uploader, realm, {
        originalname: a.fileName,
        mimetype: a.contentType,
        size: a.content.length,
        file,
      });
      links.push(`[${linkTextOf(stored.filename)}](${stored.url})`);
    } catch (err) {
      await file.abort();
      if (err instanceof ApiError) throw new GatewayRefusal(552, '5.3.4', `Attachment ${linkTextOf(a.fileName)} refused: ${err.message}`);
      throw err;
    }
  }
  return links;
}
