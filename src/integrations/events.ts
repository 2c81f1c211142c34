/**
 * Zulip's generic event filters: `only_events` and `exclude_events`, JSON
 * lists of shell-style patterns (Python's fnmatch: `*`, `?`, `[seq]`,
 * `[!seq]`) matched against an integration's complete event type.
 */
export function eventPasses(event: string | null, only: readonly string[] | null, exclude: readonly string[] | null): boolean {
  if (event === null) return true;
  if (only !== null && !only.some((p) => shellMatch(event, p))) return false;
  if (exclude !== null && exclude.some((p) => shellMatch(event, p))) return false;
  return true;
}

const compiled = new Map<string, RegExp>();

export function shellMatch(text: string, pattern: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    re = new RegExp(`^${translate(pattern)}$`, 's');
    if (compiled.size < 1000) compiled.set(pattern, re);
  }
  return re.test(text);
}

function translate(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negated = body.startsWith('!');
      if (negated) body = body.slice(1);
      out += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = end;
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return out;
}
