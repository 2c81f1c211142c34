import type { Schema } from '../contract';
import type { UserRow } from '../queries/rows';
import { EncodedJson, encodedList, encodedMembers, keptTexts } from './encoded-json';
import {
  displayRecipient,
  editHistoryField,
  flagsOf,
  type DictReadContext,
  type MessageDict,
  type MessageViewOptions,
  ownFields,
  senderFields,
  topicFields,
} from './message-dicts';

/**
 * The encoded members of a dict's own fields, per content variant
 * (Markdown source or HTML), made when a page first needs them. Kept by
 * the dict object itself: a cached dict is replaced, never changed, when
 * its message changes (src/cache/messages.ts).
 */
const ownText = keptTexts<MessageDict>();

const ownMembers = (d: MessageDict, applyMarkdown: boolean): string =>
  ownText(d, applyMarkdown ? 'html' : 'source', () => encodedMembers(ownFields(d, applyMarkdown)));

/**
 * A sender's encoded fields, by the user row the user cache hands out (a
 * new row after any change to the user), the avatar URL this request
 * shows (it depends on the reader's client_gravatar and on whether they may
 * see the sender's address) and the organization's subdomain.
 */
const senderText = keptTexts<UserRow>();

function senderMembers(sender: UserRow, rc: DictReadContext, opts: MessageViewOptions): string {
  const fields = senderFields(sender, rc, opts);
  // The organization's subdomain is in it too (sender_realm_str), and may change.
  const variant = `${JSON.stringify(fields.avatar_url)}\u0000${fields.sender_realm_str}`;
  return senderText(sender, variant, () => encodedMembers(fields));
}

/** Search highlights of one message (GET /messages with a search narrow). */
export type MatchFields = Pick<Schema<'Message'>, 'match_content' | 'match_subject'>;

/**
 * A page of messages as JSON text: `renderMessageDict`'s objects, encoded
 * part by part. The dict's own part is encoded once per dict and variant;
 * the parts that follow the request — sender, channel name, topic and its
 * links, flags — once per sender, recipient, topic and flag set of the
 * page; edit history and search highlights per message. What a page of
 * cached messages costs is then a concatenation, not the objects and the
 * escaping of every message's content.
 */
export function encodeMessagePage(
  page: ReadonlyArray<{ dict: MessageDict; flags: number | null; match?: MatchFields }>,
  rc: DictReadContext,
  opts: MessageViewOptions,
): EncodedJson<Array<Schema<'Message'>>> {
  const senders = new Map<number, string>();
  const recipients = new Map<number, string>();
  const topics = new Map<string, string>();
  const flagTexts = new Map<number | null, string>();
  const out: string[] = [];
  for (const { dict: d, flags, match } of page) {
    let sender = senders.get(d.sender_id);
    if (sender === undefined) senders.set(d.sender_id, (sender = senderMembers(rc.users.get(d.sender_id)!, rc, opts)));
    let recipient = recipients.get(d.recipient_id);
    if (recipient === undefined) recipients.set(d.recipient_id, (recipient = JSON.stringify(displayRecipient(d, rc))));
    // A topic's text is a channel's: direct messages share one entry, under a key no topic has.
    const topicKey = d.stream_id === null ? '\u0000dm' : d.topic;
    let topic = topics.get(topicKey);
    if (topic === undefined) topics.set(topicKey, (topic = encodedMembers(topicFields(d, rc, opts.allowEmptyTopicName))));
    let flagText = flagTexts.get(flags);
    if (flagText === undefined) flagTexts.set(flags, (flagText = JSON.stringify(flagsOf(flags))));
    let text = `{${ownMembers(d, opts.applyMarkdown)},${sender},"display_recipient":${recipient},${topic},"flags":${flagText}`;
    if (d.edits.length) {
      const history = encodedMembers(editHistoryField(d, rc, opts.allowEmptyTopicName));
      if (history) text += `,${history}`;
    }
    if (match) {
      const highlights = encodedMembers(match);
      if (highlights) text += `,${highlights}`;
    }
    out.push(`${text}}`);
  }
  return encodedList(out);
}
