import type { Knex } from 'knex';
import type { AppContext } from '../context';
import type { Tx } from '../db/transaction';
import { accessMessage, type AccessibleMessage } from '../access/messages';
import { loadViewer } from '../access/viewer';
import { realmUrl } from '../domain/realm-address';
import { MAX_MESSAGE_LENGTH, truncateContent } from '../domain/topics';
import { channelNarrowPath, encodeHashComponent } from '../markdown/zulip';
import { getDmParticipantUsers } from '../queries/messages';
import type { RealmRow, UserRow } from '../queries/rows';
import { getUserById } from '../queries/users';
import type { ScheduledMessageRow } from '../queries/scheduled-messages';

/**
 * The text of a reminder as Notification Bot sends it (Zulip's
 * get_reminder_formatted_content): what was asked, who said what where
 * (a silent mention, a link to the message, the channel and topic or the
 * other participants), and the message quoted in a fence no line of it can
 * close; a poll or to-do list is named instead of quoted.
 */
export async function formatReminderContent(
  db: Knex,
  config: { externalUrl: string },
  realm: RealmRow,
  user: UserRow,
  found: AccessibleMessage,
  note: string | null,
): Promise<string> {
  const { row } = found;
  const sender = (await getUserById(db, row.sender_id))!;
  const mention = silentMention(sender);
  const site = realmUrl(config.externalUrl, realm.string_id);
  const noted = (what: string) =>
    note ? `You requested a reminder for the following ${what}. Note:\n > ${note}` : `You requested a reminder for the following ${what}.`;
  let content: string;
  let where: string;
  let url: string;
  if (row.channel_id !== null) {
    const path = `${channelNarrowPath(row.channel_id, row.channel_name ?? '')}/topic/${encodeHashComponent(row.topic)}/near/${row.id}`;
    url = `${site}/${path.replace(/^\//, '')}`;
    content = noted('message');
    where = `in #**${row.channel_name ?? ''}>${row.topic}@${row.id}**`;
  } else {
    const participants = (await getDmParticipantUsers(db, [row.recipient_id])).get(row.recipient_id) ?? [sender];
    const ids = participants.map((u) => u.id);
    url = `${site}/#narrow/dm/${ids.join(',')}-${ids.length > 2 ? 'group' : 'dm'}/near/${row.id}`;
    content = noted('direct message');
    const others = participants.filter((u) => u.id !== sender.id);
    where = `to ${listForDisplay((others.length ? others : [sender]).map(silentMention))}`;
  }
  content += '\n\n';
  const widget = row.content.startsWith('/poll') ? 'poll' : row.content.startsWith('/todo') ? 'todo list' : null;
  if (widget) return `${content}${mention} [sent](${url}) a ${widget} ${where}.`;
  content += `${mention} [said](${url}) ${where}:\n`;
  const fence = unusedFence(row.content);
  const frame = `${fence}quote\n\n${fence}`;
  // The quote is cut so that the whole reminder fits in a message.
  const room = MAX_MESSAGE_LENGTH - [...content].length - [...frame].length;
  const quoted = [...row.content].length <= room ? row.content : truncateTo(row.content, room);
  return `${content}${fence}quote\n${quoted}\n${fence}`;
}

/** At delivery: the reminder rewritten from the message as it is now, or as stored when the user can no longer read it (Zulip's fallback). */
export async function reminderContentInTx(
  tx: Tx,
  ctx: Pick<AppContext, 'config'>,
  realm: RealmRow,
  user: UserRow,
  row: ScheduledMessageRow,
): Promise<string> {
  if (row.reminder_target_message_id === null) return row.content;
  let found: AccessibleMessage;
  try {
    found = await accessMessage(tx.trx, await loadViewer(tx.trx, user), row.reminder_target_message_id);
  } catch {
    return row.content;
  }
  return formatReminderContent(tx.trx, ctx.config, realm, user, found, row.reminder_note);
}

const silentMention = (u: Pick<UserRow, 'full_name' | 'id'>) => `@_**${u.full_name}|${u.id}**`;

/** "A", "A and B", "A, B, and C". */
function listForDisplay(items: string[]): string {
  if (items.length <= 2) return items.join(' and ');
  return `${items.slice(0, -1).join(', ')}, and ${items[items.length - 1]}`;
}

/** A backtick fence longer than any run of backticks that starts a line of `text` (at least three). */
function unusedFence(text: string): string {
  let longest = 0;
  for (const m of text.matchAll(/^\s*(`{3,})/gm)) longest = Math.max(longest, m[1]!.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function truncateTo(text: string, room: number): string {
  const marker = '\n[message truncated]';
  return [...text].slice(0, Math.max(0, room - [...marker].length)).join('') + marker;
}

// The full content of a reminder stays within a message's limit.
export const limitReminder = (content: string) => truncateContent(content);
