import { channelNarrow, dmNarrow } from '../lib/narrow';
import { dateOf } from '../lib/time';
import { hashOf } from '../state/navigation';
import { channelName, me, userName, type Message } from '../state/store';
import { topicMenu } from '../state/ui';

/** The line above the first message of a conversation: channel › topic (with its menu) or the people of a direct one, and the day. */
export function RecipientLine({ m }: { m: Message }) {
  const myId = me.value?.user_id ?? 0;
  if (m.type === 'stream' && m.stream_id !== undefined) {
    const channelId = m.stream_id;
    const topic = m.subject || 'general chat';
    return (
      <header class="recipient">
        <a href={hashOf(channelNarrow(channelId))}>#{channelName(channelId)}</a>
        <span aria-hidden="true"> › </span>
        {m.match_subject ? (
          // The server's copy of the topic with the searched words marked, escaped by it.
          <a href={hashOf(channelNarrow(channelId, m.subject))} dangerouslySetInnerHTML={{ __html: m.match_subject }} />
        ) : (
          <a href={hashOf(channelNarrow(channelId, m.subject))}>{topic}</a>
        )}
        <button
          type="button"
          class="icon"
          aria-label={`Actions for topic ${topic}`}
          aria-haspopup="dialog"
          onClick={() => (topicMenu.value = { channelId, topic: m.subject })}
        >
          ⋯
        </button>
        <span class="date">{dateOf(m.timestamp)}</span>
      </header>
    );
  }
  const ids = Array.isArray(m.display_recipient) ? m.display_recipient.map((r) => r.id) : [];
  const others = ids.filter((id) => id !== myId);
  return (
    <header class="recipient dm">
      <a href={hashOf(dmNarrow(others.length ? others : [myId]))}>
        {others.length ? `You and ${others.map(userName).join(', ')}` : 'You (notes to self)'}
      </a>
      <span class="date">{dateOf(m.timestamp)}</span>
    </header>
  );
}
