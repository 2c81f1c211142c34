import { useState } from 'preact/hooks';
import { COMBINED_FEED, isSearch, termOf, type Narrow, type Term } from '../lib/narrow';
import { channelName, userName } from '../state/store';
import { flagNarrow } from '../state/topics';
import { unread } from '../state/unread';

/** The open narrow in words, as the page's heading. */
export function narrowTitle(n: Narrow): string {
  if (n.length === 0) return 'Combined feed';
  const channel = termOf(n, 'channel');
  const topic = termOf(n, 'topic');
  const dm = termOf(n, 'dm');
  const is = termOf(n, 'is');
  if (isSearch(n)) return 'Search results';
  if (channel && typeof channel.operand === 'number') {
    return topic ? `#${channelName(channel.operand)} › ${String(topic.operand) || 'general chat'}` : `#${channelName(channel.operand)}`;
  }
  if (dm && Array.isArray(dm.operand)) return dm.operand.map(userName).join(', ');
  if (is?.operand === 'starred') return 'Starred messages';
  if (is?.operand === 'mentioned') return 'Mentions';
  if (is?.operand === 'dm') return 'Direct messages';
  return 'Search results';
}

/** One search term in words: "sender: Ana Lee", "not has: link". */
function termText(t: Term): string {
  let value: string;
  if (t.operator === 'channel' && typeof t.operand === 'number') value = `#${channelName(t.operand)}`;
  else if (t.operator === 'sender' && typeof t.operand === 'number') value = userName(t.operand);
  else if (Array.isArray(t.operand)) value = t.operand.map(userName).join(', ');
  else if (t.operator === 'dm-including' && typeof t.operand === 'number') value = userName(t.operand);
  else value = String(t.operand);
  const name = t.operator === 'search' ? 'words' : t.operator;
  return `${t.negated ? 'not ' : ''}${name}: ${value}`;
}

/** The heading of the open narrow; a search's terms as chips; "Mark all as read" in the combined feed. */
export function NarrowTitle({ narrow }: { narrow: Narrow }) {
  const title = narrowTitle(narrow);
  const [error, setError] = useState<string | null>(null);
  document.title = title;
  return (
    <div class="narrow-bar">
      <h1 class="narrow-title">{title}</h1>
      {isSearch(narrow) && (
        <ul class="chips" aria-label="Search terms">
          {narrow.map((t, i) => (
            <li key={i} class="chip">
              {termText(t)}
            </li>
          ))}
        </ul>
      )}
      {narrow.length === 0 && unread.value.total > 0 && (
        <button
          type="button"
          class="mark-all"
          onClick={() => {
            setError(null);
            flagNarrow(COMBINED_FEED, 'read').catch((e: unknown) => setError(e instanceof Error ? e.message : String(e)));
          }}
        >
          Mark all as read
        </button>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
