/**
 * Client-supplied text that ends up in an error message or a log line is cut
 * to a readable length: a 5 MB channel name or a list of 1,000 of them must
 * not come back in full.
 */
export function bounded(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** "a, b, c" — or the first `max` items and how many more. Each item is bounded too. */
export function boundedList(items: readonly string[], max = 10): string {
  const shown = items.slice(0, max).map((s) => bounded(s, 100));
  const rest = items.length - shown.length;
  return rest > 0 ? `${shown.join(', ')} and ${rest} more` : shown.join(', ');
}
