import { useEffect, useRef, useState } from 'preact/hooks';
import { isSearch, parseSearch, searchText, type Narrow } from '../lib/narrow';
import { go, lastPlace, narrow } from '../state/navigation';
import { channelByName, channelName, userByEmailOrName, users } from '../state/store';

export function textOf(n: Narrow): string {
  return searchText(n, { channel: channelName, userEmail: (id) => users.value.get(id)?.email ?? String(id) });
}

/**
 * The search box, in Zulip's syntax (channel:, topic:, sender:, dm:, is:,
 * has:, near:, id:, words, - to negate). It shows the open narrow's terms
 * when that narrow is a search; Escape in it returns to the narrow open
 * before the search.
 */
export function SearchBar() {
  const input = useRef<HTMLInputElement>(null);
  const current = narrow.value;
  const [query, setQuery] = useState('');
  useEffect(() => {
    setQuery(isSearch(current) ? textOf(current) : '');
  }, [JSON.stringify(current)]);

  return (
    <form
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        if (!query.trim()) return;
        go(parseSearch(query, { channelId: (name) => channelByName(name)?.stream_id, userId: (t) => userByEmailOrName(t)?.user_id }));
        input.current?.blur();
      }}
    >
      <label class="visually-hidden" for="search">
        Search messages
      </label>
      <input
        id="search"
        ref={input}
        type="search"
        placeholder="Search"
        autoComplete="off"
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key !== 'Escape') return;
          e.preventDefault();
          setQuery(isSearch(current) ? textOf(current) : '');
          input.current?.blur();
          if (isSearch(current)) go(lastPlace.value);
        }}
      />
    </form>
  );
}
