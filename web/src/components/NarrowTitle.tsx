import { termOf, type Narrow } from '../lib/narrow';
import { channelName, userName } from '../state/store';

/** The open narrow in words, as the page's heading. */
export function narrowTitle(n: Narrow): string {
  if (n.length === 0) return 'Combined feed';
  const channel = termOf(n, 'channel');
  const topic = termOf(n, 'topic');
  const dm = termOf(n, 'dm');
  const is = termOf(n, 'is');
  const search = termOf(n, 'search');
  if (channel && typeof channel.operand === 'number') {
    return topic ? `#${channelName(channel.operand)} › ${String(topic.operand) || 'general chat'}` : `#${channelName(channel.operand)}`;
  }
  if (dm && Array.isArray(dm.operand)) return dm.operand.map(userName).join(', ');
  if (is?.operand === 'starred') return 'Starred messages';
  if (is?.operand === 'mentioned') return 'Mentions';
  if (is?.operand === 'dm') return 'Direct messages';
  if (search) return `Search: ${String(search.operand)}`;
  return 'Search results';
}

export function NarrowTitle({ narrow }: { narrow: Narrow }) {
  const title = narrowTitle(narrow);
  document.title = title;
  return <h1 class="narrow-title">{title}</h1>;
}
