import type { AppContext } from '../context';
import type { Data, Params } from '../contract';
import { inTransaction } from '../db/transaction';
import { realmUrl } from '../domain/realm-address';
import { RecipientType } from '../domain/recipients';
import { reportTypeName } from '../domain/reports';
import { effectiveTopicsPolicy, EMPTY_TOPIC_DISPLAY_NAME, MAX_MESSAGE_LENGTH, normalizeTopic } from '../domain/topics';
import { ApiError } from '../errors';
import { accessMessage } from '../access/messages';
import { loadCaller, type Caller } from '../access/viewer';
import { channelNarrowPath, encodeHashComponent } from '../markdown/zulip';
import { getChannelById } from '../queries/channels';
import { getDmParticipantUsers, type MessageRow } from '../queries/messages';
import type { UserRow } from '../queries/rows';
import { getUserById } from '../queries/users';
import { sendMessageInTx } from './messages';
import { INTERNAL, notificationBot } from './notifications';

/**
 * POST /messages/{id}/report: the report becomes a Notification Bot message
 * in the organization's moderation request channel, in the topic
 * "<sender's name> moderation", quoting the reason and the reporter's
 * description, and the reported message in a spoiler with a link to it.
 *
 * The checks run in Zulip's order — the report type, the description, the
 * configured channel, then the message (the same 'Invalid message(s)' for
 * one that is missing or that the reporter cannot read) — and the message is
 * sent in one transaction, so a refused report sends nothing.
 */
export async function doReportMessage(ctx: AppContext, viewer: Caller, p: Params<'report-message'>): Promise<Data<'report-message'>> {
  const reason = reportTypeName(p.report_type);
  if (reason === undefined) throw new ApiError('Invalid report_type: Value error, Not in the list of possible values');
  const description = p.description ?? '';
  // Zulip requires an explanation only for 'other', and only refuses it empty.
  if (p.report_type === 'other' && description === '') throw new ApiError('An explanation is required.');

  const realm = viewer.realm;
  const channel =
    realm.moderation_request_channel_id === null ? undefined : await getChannelById(ctx.db, realm.id, realm.moderation_request_channel_id);
  // An archived channel takes no messages: reporting is off until another is chosen.
  if (!channel || channel.deactivated) throw new ApiError('Message reporting is not enabled in this organization.');

  const { row } = await accessMessage(ctx.db, viewer, p.message_id);
  const sender = (await getUserById(ctx.db, row.sender_id))!;
  const participants =
    row.recipient_type === RecipientType.CHANNEL
      ? null
      : ((await getDmParticipantUsers(ctx.db, [row.recipient_id])).get(row.recipient_id) ?? [sender]);
  const content = reportContent({
    reporter: viewer.user,
    sender,
    message: row,
    participants,
    reason,
    description,
    realmUrl: realmUrl(ctx.config.externalUrl, realm.string_id),
  });
  // A channel that allows only the empty topic gets the reports there.
  const topic =
    effectiveTopicsPolicy(channel.topics_policy, realm.topics_policy) === 'empty_topic_only'
      ? ''
      : normalizeTopic(`${sender.full_name} moderation`);

  await inTransaction(ctx.db, async (tx) => {
    const bot = await notificationBot(tx, realm.id);
    await sendMessageInTx(tx, ctx.bus, await loadCaller(tx.trx, bot, realm), { kind: 'channel', channel, topic }, content, INTERNAL);
  });
  return {};
}

interface ReportParts {
  reporter: UserRow;
  sender: UserRow;
  message: MessageRow;
  /** A direct message's participants, sender included, by id; null for a channel message. */
  participants: UserRow[] | null;
  reason: string;
  description: string;
  realmUrl: string;
}

/**
 * Zulip's report text: who reported whose message and when (for a direct
 * message, to whom, unless the reporter received it), the reason in bold
 * with the description in a quote block, then the reported message in a
 * spoiler headed by a link to it, fenced with more backticks than it uses.
 */
export function reportContent(r: ReportParts): string {
  const reporter = silentMention(r.reporter);
  const sender = silentMention(r.sender);
  const when = globalTime(r.message.date_sent);
  let header: string;
  let original: string;
  if (r.participants === null) {
    header = `${reporter} reported a message sent by ${sender} at ${when}.`;
    original = `Original message at ${messageLinkSyntax(r.message.channel_id!, r.message.channel_name!, r.message.topic, r.message.id)}`;
  } else {
    const ids = r.participants.map((u) => u.id).sort((a, b) => a - b);
    if (r.participants.length <= 2) {
      if (r.sender.id !== r.reporter.id) header = `${reporter} reported a direct message sent by ${sender} at ${when}.`;
      else {
        // Reporting one's own direct message names whom it went to (oneself, in a note to self).
        const to = r.participants.find((u) => u.id !== r.reporter.id) ?? r.reporter;
        header = `${reporter} reported a direct message sent by ${sender} to ${silentMention(to)} at ${when}.`;
      }
    } else {
      const others = r.participants
        .filter((u) => u.id !== r.sender.id)
        .map(silentMention)
        .sort();
      const last = others.pop()!;
      // "A and B", "A, B, and C": the serial comma once there are three or more.
      const list = others.join(', ') + (others.length > 1 ? ',' : '');
      header = `${reporter} reported a direct message sent by ${sender} to ${list} and ${last} at ${when}.`;
    }
    const slug = `${ids.join(',')}-${ids.length >= 3 ? 'group' : 'dm'}`;
    original = `[Original message](${r.realmUrl}/#narrow/dm/${slug}/near/${r.message.id})`;
  }
  const quoted = truncate(r.message.content, MAX_MESSAGE_LENGTH - 1000 - 500, '\n[message truncated]');
  const fence = unusedFence(quoted);
  return `${header}\n\`\`\`quote\n**${r.reason}**. ${r.description}\n\`\`\`\n\n${fence} spoiler ${original}\n${quoted}\n${fence}`;
}

const silentMention = (u: UserRow) => `@_**${u.full_name}|${u.id}**`;

/** Zulip's global time syntax, <time:2024-05-01T12:00:00+00:00>, which each reader sees in their own time zone. */
const globalTime = (seconds: number) => `<time:${new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00')}>`;

/** Characters the #**channel>topic@id** syntax cannot hold; such names get a plain Markdown link instead. */
const BROKEN_LINK_CHARS = /[`>*&[\]]|\$\$/g;
const LINK_ESCAPES: Record<string, string> = {
  '`': '&#96;',
  '>': '&gt;',
  '*': '&#42;',
  '&': '&amp;',
  $$: '&#36;&#36;',
  '[': '&#91;',
  ']': '&#93;',
};

/** A link to a channel message: #**channel>topic@id**, or the Markdown link Zulip falls back to. */
function messageLinkSyntax(channelId: number, channelName: string, topic: string, messageId: number): string {
  const broken = (s: string) => new RegExp(BROKEN_LINK_CHARS.source).test(s);
  if (!broken(channelName) && !broken(topic)) return `#**${channelName}>${topic}@${messageId}**`;
  const escape = (s: string) => s.replace(BROKEN_LINK_CHARS, (c) => LINK_ESCAPES[c]!);
  const url = `${channelNarrowPath(channelId, channelName).slice(1)}/topic/${encodeHashComponent(topic)}/near/${messageId}`;
  return `[#${escape(channelName)} > ${escape(topic === '' ? EMPTY_TOPIC_DISPLAY_NAME : topic)} @ 💬](${url})`;
}

/** At most `max` code points, the marker included, as Zulip's truncate_content. */
function truncate(text: string, max: number, marker: string): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  return chars.slice(0, max - [...marker].length).join('') + marker;
}

/** A backtick fence longer than any the text opens a line with (three at least). */
function unusedFence(text: string): string {
  let length = 3;
  for (const m of text.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, m[1]!.length + 1);
  return '`'.repeat(length);
}
