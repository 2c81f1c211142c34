import { computed, signal } from '@preact/signals';
import type { EmojiLike } from '../lib/autocomplete';
import { emojiGlyph } from '../lib/emoji';
import { customEmoji, realm } from './store';

/**
 * The emoji the compose box completes: the server's Unicode emoji by
 * Zulip's names (every name of each, canonical first) and the
 * organization's custom emoji. The Unicode names are fetched once, when
 * first needed.
 */
const unicode = signal<readonly EmojiLike[]>([]);
let loading: Promise<boolean> | null = null;
let loaded = false;

/**
 * Fetches the Unicode emoji names unless they are here or on their way;
 * resolves to true only for the call that brought them, so a caller
 * redrawing on arrival redraws once.
 */
export function loadEmojiNames(): Promise<boolean> {
  const url = realm.value.emojiDataUrl;
  if (loaded || loading || !url) return Promise.resolve(false);
  // A plain fetch(), not the API client: register's server_emoji_data_url
  // names a static data file (like Zulip's under /static/generated/), not an
  // operation of the API under /json. Only its path is used, since the URL
  // carries the server's configured origin and the page may reach only its own.
  const path = new URL(url, location.href).pathname;
  loading = fetch(path, { credentials: 'omit' })
    .then((r) => (r.ok ? (r.json() as Promise<{ code_to_names: Record<string, string[]> }>) : Promise.reject(new Error(r.statusText))))
    .then((doc) => {
      const list: EmojiLike[] = [];
      for (const [code, names] of Object.entries(doc.code_to_names)) {
        const text = emojiGlyph(code, 'unicode_emoji', names[0] ?? '');
        for (const name of names) list.push({ name, text });
      }
      unicode.value = list;
      loaded = true;
      return true;
    })
    .catch(() => {
      // Tried again on the next `:`.
      loading = null;
      return false;
    });
  return loading;
}

export const allEmoji = computed<readonly EmojiLike[]>(() => {
  const custom: EmojiLike[] = [];
  for (const e of customEmoji.value.values()) if (!e.deactivated) custom.push({ name: e.name, src: e.source_url });
  const taken = new Set(custom.map((e) => e.name));
  // A custom emoji takes its name from a Unicode one, as on Zulip's server.
  return [...custom, ...unicode.value.filter((e) => !taken.has(e.name))];
});
