import { narrow } from '../state/navigation';
import { target, targetOfNarrow, typingKeyOf } from '../state/compose';
import { channelByName, typing, userName } from '../state/store';

/** Who is typing, in words: Zulip names up to three and then says "Several people". */
export function typingText(names: readonly string[]): string {
  if (names.length === 0) return '';
  if (names.length === 1) return `${names[0]} is typing…`;
  if (names.length <= 3) return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} are typing…`;
  return 'Several people are typing…';
}

/**
 * "X is typing…" for the open conversation (or, in a view of many, the one
 * the compose box writes to), from the typing events state/events.ts keeps.
 * A polite live region, so that a screen reader hears it without losing
 * its place; it stays in the page when empty so that changes are announced.
 */
export function TypingNotice() {
  const t = targetOfNarrow(narrow.value) ?? target.value;
  const key = typingKeyOf(t, t.kind === 'channel' ? channelByName(t.channel)?.stream_id : undefined);
  const ids = key ? (typing.value.get(key) ?? []) : [];
  return (
    <p class="typing-notice" aria-live="polite">
      {typingText(ids.map(userName))}
    </p>
  );
}
