import { signal } from '@preact/signals';
import { narrowHash, parseHash, type Narrow } from '../lib/narrow';
import { openNarrow } from './messages';
import { channelName } from './store';

/**
 * Where the user is: the narrow in the URL's fragment (Zulip's own
 * `#narrow/...` form, so its links work here), or an overlay such as
 * `#settings`. The back button moves between narrows.
 */
export const narrow = signal<Narrow>([]);
export const overlay = signal<string | null>(null);

export function hashOf(n: Narrow): string {
  return narrowHash(n, { channel: channelName });
}

export function go(n: Narrow): void {
  const hash = hashOf(n);
  if (location.hash !== hash) location.hash = hash;
  else void show(n);
}

async function show(n: Narrow): Promise<void> {
  overlay.value = null;
  narrow.value = n;
  await openNarrow(n);
}

export function followHash(): void {
  const parsed = parseHash(location.hash);
  if (parsed) void show(parsed);
  else overlay.value = location.hash.replace(/^#/, '').split('/')[0];
}

export function startNavigation(): void {
  window.addEventListener('hashchange', followHash);
  followHash();
}
