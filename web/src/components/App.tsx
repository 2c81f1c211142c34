import { cookie, CSRF_COOKIE } from '../api/client';
import { useEffect, useRef } from 'preact/hooks';
import { narrow, overlay } from '../state/navigation';
import { connection, me, realm } from '../state/store';
import { helpOpen, sidebarOpen, topicMenu, userCard } from '../state/ui';
import { Compose } from './Compose';
import { HelpDialog } from './HelpDialog';
import { MessageList } from './MessageList';
import { NarrowTitle } from './NarrowTitle';
import { SearchBar } from './SearchBar';
import { Settings } from './Settings';
import { Sidebar } from './Sidebar';
import { TopicMenu } from './TopicMenu';
import { UserCard } from './UserCard';

/**
 * The page: the top bar, the sidebar (a drawer on a phone), and the open
 * narrow's title, messages and compose box — or an overlay such as the
 * settings in its place; with the menus and cards opened from anywhere.
 */
export function App() {
  const open = sidebarOpen.value;
  const wasOpen = useRef(false);
  // The drawer takes the focus when it opens, and gives it back to its button when it closes.
  useEffect(() => {
    if (open) document.querySelector<HTMLElement>('#sidebar a')?.focus();
    else if (wasOpen.current) document.querySelector<HTMLElement>('.menu-button')?.focus();
    wasOpen.current = open;
  }, [open]);
  return (
    <div class={`app ${open ? 'sidebar-open' : ''}`}>
      <header class="topbar">
        <button
          type="button"
          class="icon menu-button"
          aria-label="Channels and conversations"
          aria-expanded={open}
          aria-controls="sidebar"
          onClick={() => (sidebarOpen.value = !open)}
        >
          ☰
        </button>
        <a class="realm-name" href="#feed">
          {realm.value.name}
        </a>
        <SearchBar />
        {connection.value === 'reconnecting' && (
          <span class="connection" role="status">
            Reconnecting…
          </span>
        )}
        <button type="button" class="icon help-button" aria-label="Keyboard shortcuts" onClick={() => (helpOpen.value = true)}>
          ?
        </button>
        <a class="settings-link" href="#settings" aria-current={overlay.value === 'settings' ? 'page' : undefined}>
          Settings<span class="visually-hidden"> for {me.value?.full_name}</span>
        </a>
        <form method="post" action="/accounts/logout/" class="logout">
          <input type="hidden" name="csrfmiddlewaretoken" value={cookie(CSRF_COOKIE) ?? ''} />
          <button type="submit">Log out</button>
        </form>
      </header>
      {open && <div class="drawer-backdrop" aria-hidden="true" onClick={() => (sidebarOpen.value = false)} />}
      <Sidebar />
      <main class="conversation">
        {overlay.value === 'settings' ? (
          <Settings />
        ) : (
          <>
            <NarrowTitle narrow={narrow.value} />
            <MessageList />
            <Compose />
          </>
        )}
      </main>
      {topicMenu.value && (
        <TopicMenu
          key={`${topicMenu.value.channelId}:${topicMenu.value.topic}`}
          channelId={topicMenu.value.channelId}
          topic={topicMenu.value.topic}
          onClose={() => (topicMenu.value = null)}
        />
      )}
      {userCard.value !== null && <UserCard key={userCard.value} userId={userCard.value} onClose={() => (userCard.value = null)} />}
      {helpOpen.value && <HelpDialog onClose={() => (helpOpen.value = false)} />}
    </div>
  );
}
