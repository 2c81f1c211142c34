import { withEmojiGlyphs } from '../lib/emoji';
import { memo } from 'preact/compat';
import { ago, timeOf } from '../lib/time';
import { users, type Message } from '../state/store';
import { Avatar } from './Avatar';
import { Reactions } from './Reactions';
import { RecipientLine } from './RecipientLine';

export interface ItemProps {
  message: Message;
  flags: ReadonlySet<string>;
  /** The sender's name and picture: the first of a run of one sender's messages. */
  showSender: boolean;
  /** Whether the channel and topic (or conversation) line is drawn above: the first of a run in one conversation. */
  recipientLine: boolean;
  selected: boolean;
  onActions: (m: Message) => void;
}

/**
 * One message. Its HTML is the server's rendering of its Markdown (Zulip's
 * rendered content, sanitised by the server); the page's policy runs no
 * script that HTML could hold. In search results the server's copy with the
 * matched words marked (match_content) is shown instead.
 */
export const MessageItem = memo(function MessageItem({ message: m, flags, showSender, recipientLine, selected, onActions }: ItemProps) {
  const unread = !flags.has('read');
  const mentioned = [...flags].some((f) => f.endsWith('mentioned'));
  const edited = m.last_edit_timestamp ?? null;
  // The sender's name as it is now: a rename (a realm_user event) shows on their earlier messages too, as in Zulip.
  const sender = users.value.get(m.sender_id)?.full_name ?? m.sender_full_name;
  return (
    <article
      class={`message ${unread ? 'unread' : ''} ${mentioned ? 'mentioned' : ''} ${showSender ? 'first' : ''} ${selected ? 'selected' : ''}`}
      data-message-id={m.id}
      aria-label={`${sender}, ${timeOf(m.timestamp)}`}
      aria-current={selected ? 'true' : undefined}
    >
      {recipientLine && <RecipientLine m={m} />}
      <div class="message-row">
        <div class="gutter">
          {showSender ? (
            // The sender's name beside it is the same control for the keyboard and screen readers.
            <button type="button" class="avatar-button" data-user-id={m.sender_id} tabIndex={-1} aria-hidden="true">
              <Avatar userId={m.sender_id} url={m.avatar_url} name={sender} />
            </button>
          ) : null}
        </div>
        <div class="message-body">
          {showSender && (
            <div class="sender">
              <button type="button" class="link sender-name" data-user-id={m.sender_id}>
                {sender}
              </button>
              <time dateTime={new Date(m.timestamp * 1000).toISOString()}>{timeOf(m.timestamp)}</time>
            </div>
          )}
          <div class="content" dangerouslySetInnerHTML={{ __html: withEmojiGlyphs(m.match_content ?? m.content) }} />
          {edited !== null ? (
            <span class="edited" title={`Edited ${ago(edited)}`}>
              (edited)<span class="visually-hidden"> {ago(edited)}</span>
            </span>
          ) : null}
          <Reactions message={m} />
        </div>
        <div class="message-tools">
          {flags.has('starred') && (
            <span class="star" role="img" aria-label="Starred">
              ★
            </span>
          )}
          <button type="button" class="icon" aria-label="Message actions" aria-haspopup="dialog" onClick={() => onActions(m)}>
            ⋯
          </button>
        </div>
      </div>
    </article>
  );
});
