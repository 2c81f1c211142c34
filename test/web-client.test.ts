import { describeInBrowser } from './support/browser';
import { apiAsOwner, channelId, eventually, text, useWebClient, userId } from './support/web-client';

/**
 * The web client (web/) in Debian's Chromium against a real Parley process:
 * two demo people, each in a browser context of their own, log in at
 * /login/ and chat. Every screen is checked by axe-core (no serious or
 * critical violation) and photographed (.tmp/screenshots/; docs/screenshots/
 * with UPDATE_SCREENSHOTS=1). No page may break its Content-Security-Policy,
 * log an error or request anything from another origin. More of the client:
 * test/web-client-compose.test.ts and test/web-client-views.test.ts.
 */
describeInBrowser('the web client in Chromium', 'test/web-client.test.ts', (CHROMIUM) => {
  // Two browser contexts and a server process on two shared cores.
  jest.setTimeout(120_000);
  const f = useWebClient(CHROMIUM, { name: 'web' });
  it('sends a visitor without a session to the login page, and logs them in to the combined feed', async () => {
    await f.olivia.goto(`${f.server.url}/`);
    expect(new URL(f.olivia.url()).pathname).toBe('/login/');
    await f.check(f.olivia, 'login');
    await f.logIn(f.olivia, 'olivia@example.com');
    await f.logIn(f.max, 'max@example.com');
    await eventually(async () => expect(await text(f.olivia.locator('h1.narrow-title'))).toBe('Combined feed'));
    // The demo organization's conversations, drawn from the server.
    await f.olivia.locator('article.message').first().waitFor();
    expect(await f.olivia.locator('nav.sidebar .channels a', { hasText: 'general' }).count()).toBe(1);
    await f.check(f.olivia, 'combined-feed');
  });

  it('shows a message sent by one person to the other at once, unread, and marks it read once seen', async () => {
    await f.max.goto(`${f.server.url}/#narrow/channel/${await channelId(f.max, 'random')}-random`);
    await f.olivia.goto(`${f.server.url}/#narrow/channel/${await channelId(f.olivia, 'general')}-general/topic/lunch`);
    await f.olivia.locator('textarea#compose-content').fill('Lunch at **noon**?');
    await f.olivia.getByRole('button', { name: 'Send' }).click();
    await f.olivia.locator('article.message .content strong', { hasText: 'noon' }).waitFor();
    // Max is elsewhere: the message counts as unread in #general.
    const generalCount = f.max.locator('nav.sidebar .channels li', { hasText: 'general' }).locator('.count');
    await generalCount.waitFor();
    const before = Number(await generalCount.textContent());
    expect(before).toBeGreaterThanOrEqual(1);
    await f.max.locator('nav.sidebar .channels a', { hasText: 'general' }).click();
    await f.max.locator('article.message .content strong', { hasText: 'noon' }).waitFor();
    // Seen while the page has focus: read, for the server too.
    await eventually(async () => expect(await generalCount.count()).toBe(0));
    await f.check(f.max, 'channel');
  });

  it('puts a reaction on the other person’s screen, and takes it back', async () => {
    const message = f.max.locator('article.message', { hasText: 'Lunch at' });
    await message.getByRole('button', { name: 'Message actions' }).click();
    await f.max.getByRole('button', { name: 'React with +1' }).click();
    const seen = f.olivia.locator('article.message', { hasText: 'Lunch at' }).locator('button.reaction');
    await eventually(async () => expect(await text(seen)).toMatch(/1/));
    await f.check(f.olivia, 'reaction');
    await message.locator('button.reaction').click();
    await eventually(async () => expect(await seen.count()).toBe(0));
  });

  it('edits and deletes a message for everyone', async () => {
    const mine = f.olivia.locator('article.message', { hasText: 'Lunch at' });
    await mine.getByRole('button', { name: 'Message actions' }).click();
    await f.olivia.getByRole('button', { name: 'Edit' }).click();
    const editor = f.olivia.locator('textarea#edit-content');
    await eventually(async () => expect(await editor.inputValue()).toBe('Lunch at **noon**?'));
    await editor.fill('Lunch at **one**?');
    await f.olivia.getByRole('button', { name: 'Save' }).click();
    await f.max.locator('article.message .content strong', { hasText: 'one' }).waitFor();
    await f.max.locator('article.message', { hasText: 'Lunch at' }).locator('.edited').waitFor();
    await mine.getByRole('button', { name: 'Message actions' }).click();
    await f.olivia.getByRole('button', { name: 'Delete' }).click();
    await eventually(async () => expect(await f.max.locator('article.message', { hasText: 'Lunch at' }).count()).toBe(0));
  });

  it('carries direct messages between the two', async () => {
    const maxId = await userId(f.olivia, 'max@example.com');
    await f.olivia.goto(`${f.server.url}/#narrow/dm/${maxId}`);
    await eventually(async () => expect(await text(f.olivia.locator('h1.narrow-title'))).toBe('Max Member'));
    await f.olivia.locator('textarea#compose-content').fill('A word in private');
    await f.olivia.locator('textarea#compose-content').press('Control+Enter');
    const dmLink = f.max.locator('nav.sidebar .dms a', { hasText: 'Olivia Owner' });
    await eventually(async () => expect(await text(dmLink.locator('.count'))).toBe('1'));
    await dmLink.click();
    await f.max.locator('article.message', { hasText: 'A word in private' }).waitFor();
    await f.check(f.max, 'direct-messages');
  });

  it('stars a message and finds it among starred messages and by search', async () => {
    const message = f.max.locator('article.message', { hasText: 'A word in private' });
    await message.getByRole('button', { name: 'Message actions' }).click();
    await f.max.getByRole('button', { name: 'Star' }).click();
    await message.locator('.star').waitFor();
    await f.max.locator('nav.sidebar a', { hasText: 'Starred messages' }).click();
    await eventually(async () => expect(await text(f.max.locator('h1.narrow-title'))).toBe('Starred messages'));
    await f.max.locator('article.message', { hasText: 'A word in private' }).waitFor();
    await f.max.locator('input#search').fill('private is:dm');
    await f.max.locator('input#search').press('Enter');
    await f.max.locator('article.message', { hasText: 'A word in private' }).waitFor();
    await f.check(f.max, 'search');
  });

  it('picks up again after the server lost its event queue, with what was sent meanwhile', async () => {
    await f.max.goto(`${f.server.url}/#narrow/channel/${await channelId(f.max, 'general')}-general`);
    await f.max.locator('article.message').first().waitFor();
    // A restart forgets every event queue: the client's next poll gets BAD_EVENT_QUEUE_ID.
    await f.restart();
    await apiAsOwner(f.server, 'POST', '/messages', {
      type: 'channel',
      to: 'general',
      topic: 'restarts',
      content: 'Sent while you were away',
    });
    await f.max.locator('article.message', { hasText: 'Sent while you were away' }).waitFor({ timeout: 60_000 });
    await apiAsOwner(f.server, 'POST', '/messages', { type: 'channel', to: 'general', topic: 'restarts', content: 'And one after' });
    await f.max.locator('article.message', { hasText: 'And one after' }).waitFor({ timeout: 30_000 });
  });

  it('draws a dark theme and fits a phone', async () => {
    await f.olivia.emulateMedia({ colorScheme: 'dark' });
    await f.olivia.goto(`${f.server.url}/#narrow/channel/${await channelId(f.olivia, 'general')}-general`);
    await f.olivia.locator('article.message').first().waitFor();
    const background = await f.olivia.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(27, 29, 33)');
    await f.check(f.olivia, 'dark');
    await f.olivia.emulateMedia({ colorScheme: 'light' });
    await f.olivia.setViewportSize({ width: 390, height: 844 });
    const overflow = await f.olivia.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBe(0);
    await f.check(f.olivia, 'phone');
    await f.olivia.setViewportSize({ width: 1280, height: 800 });
  });

  it('logs out', async () => {
    await f.max.getByRole('button', { name: 'Log out' }).click();
    await f.max.waitForURL(/\/login\/$/);
    await f.max.goto(`${f.server.url}/`);
    expect(new URL(f.max.url()).pathname).toBe('/login/');
  });

  it('has no serious or critical accessibility violation on any screen', () => {
    expect(f.a11y).toEqual([]);
  });

  it('broke no rule of its Content-Security-Policy, logged no error and asked no other origin', () => {
    expect(f.problems).toEqual([]);
  });
});
