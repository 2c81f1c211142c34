/**
 * The keys that appear twice in one object of a JSON text, at any depth
 * (`path.key`). JSON.parse keeps the last of two equal keys without a word,
 * so a text spliced from parts (src/serializers/encoded-json.ts) whose
 * parts both name a field would decode to one of them silently.
 */
export function duplicateKeys(text: string): string[] {
  const found: string[] = [];
  // One frame per open object or array: its keys (objects only) and whether the next string is a key.
  const frames: Array<{ keys: Set<string> | null; expectKey: boolean; path: string }> = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw new Error(`unterminated string at ${i}`);
      const top = frames[frames.length - 1];
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) found.push(`${top.path}.${key}`);
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j + 1;
      continue;
    }
    if (c === '{' || c === '[') {
      const parent = frames[frames.length - 1];
      frames.push({ keys: c === '{' ? new Set() : null, expectKey: c === '{', path: `${parent?.path ?? '$'}${c === '{' ? '' : '[]'}` });
    } else if (c === '}' || c === ']') frames.pop();
    else if (c === ',') {
      const top = frames[frames.length - 1];
      if (top?.keys) top.expectKey = true;
    }
    i++;
  }
  return found;
}
