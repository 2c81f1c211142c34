import { signal } from '@preact/signals';
import { channelNarrow, COMBINED_FEED, isSearch, narrowHash, parseHash, type Narrow } from '../lib/narrow';
import { openNarrow } from './messages';
import { followOpenTopicWith } from './events';
import { channelName } from './store';
import { sidebarOpen } from './ui';

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

/** The last narrow shown that was not a search, where Escape out of a search returns. */
export const lastPlace = signal<Narrow>(COMBINED_FEED);

async function show(n: Narrow): Promise<void> {
  overlay.value = null;
  // On a phone the sidebar is a drawer over the list: choosing a narrow closes it.
  sidebarOpen.value = false;
  if (!isSearch(n)) lastPlace.value = n;
  narrow.value = n;
  await openNarrow(n);
}

export function followHash(): void {
  const parsed = parseHash(location.hash);
  if (parsed) void show(parsed);
  else overlay.value = location.hash.replace(/^#/, '').split('/')[0];
}

export function startNavigation(): void {
  followOpenTopicWith((to) => go(channelNarrow(to.channelId, to.topic)));
  window.addEventListener('hashchange', followHash);
  followHash();
}
