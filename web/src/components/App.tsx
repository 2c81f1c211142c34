import { useState } from 'preact/hooks';
import { parseSearch } from '../lib/narrow';
import { go, narrow } from '../state/navigation';
import { channelByName, connection, realm } from '../state/store';
import { Compose } from './Compose';
import { MessageList } from './MessageList';
import { NarrowTitle } from './NarrowTitle';
import { Sidebar } from './Sidebar';

/** The page: the sidebar, and the open narrow's title, messages and compose box. */
export function App() {
  const [query, setQuery] = useState('');
  return (
    <div class="app">
      <header class="topbar">
        <span class="realm-name">{realm.value.name}</span>
        <form
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            if (query.trim()) go(parseSearch(query, (name) => channelByName(name)?.stream_id));
          }}
        >
          <label class="visually-hidden" for="search">
            Search messages
          </label>
          <input id="search" type="search" placeholder="Search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </form>
        {connection.value === 'reconnecting' && (
          <span class="connection" role="status">
            Reconnecting…
          </span>
        )}
        <form method="post" action="/accounts/logout/" class="logout">
          <input type="hidden" name="csrfmiddlewaretoken" value={csrf()} />
          <button type="submit">Log out</button>
        </form>
      </header>
      <Sidebar />
      <main class="conversation">
        <NarrowTitle narrow={narrow.value} />
        <MessageList />
        <Compose />
      </main>
    </div>
  );
}

function csrf(): string {
  const m = /(?:^|;\s*)csrftoken=([^;]*)/.exec(document.cookie);
  return m ? decodeURIComponent(m[1]) : '';
}
