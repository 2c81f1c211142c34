import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { describeInBrowser } from './support/browser';
import { apiAsOwner, channelId, eventually, jsonAs, text, useWebClient, userId } from './support/web-client';

/**
 * The web client's views in Debian's Chromium against a real Parley
 * process, two demo people in browser contexts of their own: a long topic's
 * history loaded both ways from the first unread message, the topic menu
 * (mute, resolve, move), mentions, presence and user cards, personal
 * settings with the sessions list, keyboard shortcuts and the phone's
 * drawer. Each main screen is checked by axe-core and photographed, as in
 * test/web-client.test.ts.
 */
describeInBrowser('the web client’s views in Chromium', 'test/web-client-views.test.ts', (CHROMIUM) => {
  // Two browser contexts and a server process on two shared cores.
  jest.setTimeout(120_000);
  const f = useWebClient(CHROMIUM, { name: 'web-views' });
  let general = 0;
  let random = 0;

  const goTo = (page: Page, hash: string) => page.goto(`${f.server.url}/#${hash}`);
  const title = (page: Page) => text(page.locator('h1.narrow-title'));
  /** A channel's line in the sidebar (not its topics' lines). */
  const channelRow = (page: Page, name: string) =>
    page.locator('nav.sidebar .channels > li').filter({ has: page.locator('.channel-row a', { hasText: new RegExp(`^${name}\\b`) }) });
  const channelCount = async (page: Page, name: string) => {
    const count = channelRow(page, name).locator('.channel-row .count');
    return (await count.count()) ? Number(await text(count)) : 0;
  };
  const sidebarTopic = (page: Page, channel: string, topic: string) =>
    channelRow(page, channel).locator('.topic-row', { has: page.locator('.topic-name', { hasText: new RegExp(`^${topic}$`) }) });
  const post = (topic: string, content: string, to = 'general') =>
    apiAsOwner(f.server, 'POST', '/messages', { type: 'channel', to, topic, content }) as Promise<{ id: number }>;

  it('shows a person as active once they are on the page', async () => {
    await f.logIn(f.max, 'max@example.com');
    general = await channelId(f.max, 'general');
    random = await channelId(f.max, 'random');
    const dot = f.max.locator('nav.sidebar .dms a', { hasText: 'Olivia Owner' }).locator('.presence');
    expect(await dot.getAttribute('class')).not.toMatch(/\bactive\b/);
    await f.logIn(f.olivia, 'olivia@example.com');
    await eventually(async () => expect(await dot.getAttribute('class')).toMatch(/\bactive\b/), 30_000);
  });

  it('opens a long topic at the first unread message, loads its history both ways and draws only a few rows', async () => {
    // Max is elsewhere while the history is written, so that nothing of it is seen (and read) early.
    await goTo(f.max, `narrow/channel/${random}-random`);
    await eventually(async () => expect(await title(f.max)).toBe('#random'));
    const ids: number[] = [];
    for (let i = 1; i <= 300; i++) ids.push((await post('history', `history-${String(i).padStart(3, '0')}`)).id);
    await jsonAs(f.max, 'POST', '/messages/flags', { messages: JSON.stringify(ids.slice(0, 200)), op: 'add', flag: 'read' });

    await goTo(f.max, `narrow/channel/${general}-general/topic/history`);
    const row = (n: number) =>
      f.max.locator('.rows > .row', { has: f.max.locator('.content', { hasText: `history-${String(n).padStart(3, '0')}` }) });
    // It opens at the first unread (history-201), in view, with only part of the older ones loaded.
    await row(201).waitFor();
    await eventually(async () => expect(await row(201).locator('article').isVisible()).toBe(true));
    const box = await row(201).boundingBox();
    const list = await f.max.locator('.message-list').boundingBox();
    expect(box && list && box.y >= list.y - 1 && box.y < list.y + list.height).toBe(true);
    const olderLoaded = Number(await row(201).getAttribute('data-index'));
    expect(olderLoaded).toBeGreaterThan(0);
    expect(olderLoaded).toBeLessThan(200);
    expect(await row(1).count()).toBe(0);

    // Scrolling up loads older pages until the first message. A page that arrives moves the list to
    // keep what was in view, which may draw the first row for a moment only: it is read in the same try.
    await eventually(async () => {
      await f.max.locator('.message-list').evaluate((el) => (el.scrollTop = 0));
      expect(await row(1).getAttribute('data-index', { timeout: 1_000 })).toBe('0');
    }, 30_000);
    expect(await f.max.locator('article.message').count()).toBeLessThan(60);

    // Scrolling down reaches the newest.
    await eventually(async () => {
      await f.max.locator('.message-list').evaluate((el) => (el.scrollTop = el.scrollHeight));
      expect(await row(300).getAttribute('data-index', { timeout: 1_000 })).toBe('299');
      expect(await f.max.locator('.message-list .status.end').count()).toBe(1);
    }, 30_000);
    // Virtualised: 300 loaded, a screenful (and the overscan) drawn.
    expect(await f.max.locator('article.message').count()).toBeLessThan(60);
  });

  it('mutes a topic from the sidebar’s topic menu, out of the sidebar and the counts, and unmutes it', async () => {
    await goTo(f.max, `narrow/channel/${random}-random`);
    await eventually(async () => expect(await title(f.max)).toBe('#random'));
    await f.max.getByRole('button', { name: 'Show topics of general' }).click();
    await jsonAs(f.max, 'POST', '/mark_all_as_read', {});
    await eventually(async () => expect(await f.max.locator('nav.sidebar .count').count()).toBe(0));
    const before = 0;
    await post('noisy', 'noisy one');
    await post('noisy', 'noisy two');
    const topic = sidebarTopic(f.max, 'general', 'noisy');
    await eventually(async () => expect(await text(topic.locator('.count'))).toBe('2'));
    await eventually(async () => expect(await channelCount(f.max, 'general')).toBe(before + 2));

    await topic.getByRole('button', { name: 'Actions for topic noisy' }).click();
    const menu = f.max.getByRole('dialog', { name: 'Topic noisy in #general' });
    await menu.waitFor();
    await f.check(f.max, 'views-topic-menu');
    await menu.getByRole('button', { name: 'Mute topic' }).click();
    await eventually(async () => expect(await topic.count()).toBe(0));
    await eventually(async () => expect(await channelCount(f.max, 'general')).toBe(before));

    // Back from the recipient line's menu in the topic itself.
    await goTo(f.max, `narrow/channel/${general}-general/topic/noisy`);
    await f.max.locator('article.message', { hasText: 'noisy one' }).waitFor();
    await f.max.locator('header.recipient').getByRole('button', { name: 'Actions for topic noisy' }).first().click();
    await f.max.getByRole('dialog', { name: 'Topic noisy in #general' }).getByRole('button', { name: 'Unmute topic' }).click();
    await eventually(async () => expect(await sidebarTopic(f.max, 'general', 'noisy').count()).toBe(1));
  });

  it('lists a busy channel’s topics as Zulip does: 8 recent, 12 with unread ones, the open one, the rest behind “More topics”', async () => {
    await jsonAs(f.max, 'POST', '/mark_all_as_read', {});
    await goTo(f.max, `narrow/is/starred`);
    await eventually(async () => expect(await f.max.locator('nav.sidebar .count').count()).toBe(0));
    for (let i = 1; i <= 14; i++) await post(`busy-${String(i).padStart(2, '0')}`, `busy topic ${i}`, 'random');
    await f.max.getByRole('button', { name: 'Show topics of random' }).click();
    const names = () => channelRow(f.max, 'random').locator('.topic-row .topic-name').allTextContents();
    const more = channelRow(f.max, 'random').locator('.more-topics');
    // Newest first: busy-14 … busy-03 (12, all unread); busy-02 and busy-01 wait behind the button with their 2 messages.
    await eventually(async () =>
      expect(await names()).toEqual(Array.from({ length: 12 }, (_, i) => `busy-${String(14 - i).padStart(2, '0')}`)),
    );
    expect(await text(more.locator('.count'))).toBe('2');

    // The topic open now is always listed.
    await goTo(f.max, `narrow/channel/${random}-random/topic/busy-01`);
    await eventually(async () => expect(await names()).toContain('busy-01'));
    expect(await names()).not.toContain('busy-02');

    await more.getByRole('button', { name: 'More topics' }).click();
    await eventually(async () => expect(await names()).toEqual(expect.arrayContaining(['busy-01', 'busy-02', 'busy-14'])));
    await more.getByRole('button', { name: 'Fewer topics' }).click();
    await eventually(async () => expect(await names()).not.toContain('busy-02'));
  });

  it('resolves a topic for both people and unresolves it', async () => {
    await post('ready to ship', 'Shipping it?');
    // In the channel's view, where the renamed topic's messages stay; with nothing unread it opens at the newest.
    await jsonAs(f.olivia, 'POST', '/mark_all_as_read', {});
    await eventually(async () => expect(await f.olivia.locator('nav.sidebar .views .count').count()).toBe(0));
    await goTo(f.olivia, `narrow/channel/${general}-general`);
    await f.olivia.locator('article.message', { hasText: 'Shipping it?' }).waitFor();
    // Max has the topic itself open: his page follows it to its new name, as Zulip's does.
    await jsonAs(f.max, 'POST', '/mark_all_as_read', {});
    await eventually(async () => expect(await f.max.locator('nav.sidebar .views .count').count()).toBe(0));
    await goTo(f.max, `narrow/channel/${general}-general/topic/ready to ship`);
    await f.max.locator('article.message', { hasText: 'Shipping it?' }).waitFor();

    await f.olivia
      .locator('article.message', { hasText: 'Shipping it?' })
      .getByRole('button', { name: 'Actions for topic ready to ship' })
      .click();
    await f.olivia
      .getByRole('dialog', { name: 'Topic ready to ship in #general' })
      .getByRole('button', { name: 'Mark as resolved' })
      .click();
    await eventually(async () => expect(await sidebarTopic(f.max, 'general', '✔ ready to ship').count()).toBe(1));
    await eventually(async () => expect(await sidebarTopic(f.max, 'general', 'ready to ship').count()).toBe(0));
    await eventually(async () => expect(await title(f.max)).toBe('#general › ✔ ready to ship'));
    await f.max.locator('article.message', { hasText: 'Shipping it?' }).waitFor();
    // Olivia's list shows the topic's new name.
    const oliviaLine = f.olivia.locator('article.message', { hasText: 'Shipping it?' }).locator('header.recipient');
    await eventually(async () => expect(await text(oliviaLine.locator('a').nth(1))).toBe('✔ ready to ship'));

    await oliviaLine.getByRole('button', { name: 'Actions for topic ✔ ready to ship' }).click();
    await f.olivia
      .getByRole('dialog', { name: 'Topic ✔ ready to ship in #general' })
      .getByRole('button', { name: 'Mark as unresolved' })
      .click();
    await eventually(async () => expect(await sidebarTopic(f.max, 'general', 'ready to ship').count()).toBe(1));
    await eventually(async () => expect(await sidebarTopic(f.max, 'general', '✔ ready to ship').count()).toBe(0));
    await eventually(async () => expect(await text(oliviaLine.locator('a').nth(1))).toBe('ready to ship'));
  });

  it('moves a topic to another channel, where the other person finds it', async () => {
    await post('wrong place', 'This belongs in random');
    await goTo(f.olivia, `narrow/channel/${general}-general/topic/wrong place`);
    await f.olivia.locator('article.message', { hasText: 'This belongs in random' }).waitFor();
    await goTo(f.max, `narrow/channel/${random}-random`);
    await eventually(async () => expect(await title(f.max)).toBe('#random'));

    await f.olivia.locator('header.recipient').getByRole('button', { name: 'Actions for topic wrong place' }).click();
    await f.olivia.getByRole('dialog', { name: 'Topic wrong place in #general' }).getByRole('button', { name: 'Move topic…' }).click();
    const move = f.olivia.getByRole('dialog', { name: 'Move messages' });
    await move.getByLabel('Channel').selectOption({ label: '#random' });
    await f.check(f.olivia, 'views-move-topic');
    await move.getByRole('button', { name: 'Move' }).click();
    await eventually(async () => expect(await move.count()).toBe(0));

    // Max's open channel lists it (unread, moved with its messages).
    await eventually(async () => expect(await sidebarTopic(f.max, 'random', 'wrong place').count()).toBe(1));
    await sidebarTopic(f.max, 'random', 'wrong place').locator('a').click();
    await eventually(async () => expect(await title(f.max)).toBe('#random › wrong place'));
    await f.max.locator('article.message', { hasText: 'This belongs in random' }).waitFor();
  });

  it('lists a message mentioning the person under Mentions, with the count', async () => {
    const mentions = f.max.locator('nav.sidebar .views a', { hasText: 'Mentions' });
    const count = async () => ((await mentions.locator('.count').count()) ? Number(await text(mentions.locator('.count'))) : 0);
    const before = await count();
    await post('hello max', '@**Max Member** can you look at this?', 'random');
    await eventually(async () => expect(await count()).toBe(before + 1));
    await mentions.click();
    await eventually(async () => expect(await title(f.max)).toBe('Mentions'));
    await f.max.locator('article.message.mentioned', { hasText: 'can you look at this?' }).waitFor();
  });

  it('opens a sender’s card from their name, with a link to a direct conversation', async () => {
    await f.max.locator('article.message', { hasText: 'can you look at this?' }).locator('.sender-name').click();
    const card = f.max.getByRole('dialog', { name: 'About Olivia Owner' });
    await card.waitFor();
    expect(await text(card.locator('h2'))).toBe('Olivia Owner');
    expect(await text(card.locator('.card-head p.soft').first())).toBe('Owner');
    expect(await text(card.locator('dd').last())).toMatch(/^\d{1,2}:\d\d( [AP]M)? \(UTC\)$/);
    await f.check(f.max, 'views-user-card');
    await card.getByRole('link', { name: 'Send direct message' }).click();
    await eventually(async () => expect(await title(f.max)).toBe('Olivia Owner'));
    expect(f.max.url()).toContain(`#narrow/dm/${await userId(f.max, 'olivia@example.com')}`);
    expect(await card.count()).toBe(0);
  });

  it('switches the theme to dark and back in personal settings', async () => {
    await f.olivia.locator('a.settings-link').click();
    await f.olivia.locator('h1#settings-title').waitFor();
    await f.check(f.olivia, 'views-settings');
    const theme = f.olivia.getByLabel('Theme');
    await theme.selectOption({ label: 'Dark' });
    await eventually(async () => expect(await f.olivia.locator('html').getAttribute('data-theme')).toBe('dark'));
    expect(await f.olivia.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(27, 29, 33)');
    await f.check(f.olivia, 'views-settings-dark');
    // Kept by the server: a reload draws dark again.
    await f.olivia.reload();
    await f.olivia.locator('h1#settings-title').waitFor();
    expect(await f.olivia.locator('html').getAttribute('data-theme')).toBe('dark');
    await f.olivia.getByLabel('Theme').selectOption({ label: 'Light' });
    await eventually(async () => expect(await f.olivia.locator('html').getAttribute('data-theme')).toBe('light'));
    expect(await f.olivia.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(255, 255, 255)');
  });

  it('renames a person, which the other sees on their messages and in the sidebar', async () => {
    const name = f.olivia.getByLabel('Full name');
    await name.fill('Olivia Renamed');
    await f.olivia.locator('form.row-form').getByRole('button', { name: 'Save' }).click();
    await f.olivia.getByRole('status').filter({ hasText: 'Name saved.' }).waitFor();
    // Max is in the conversation with her.
    await eventually(async () => expect(await f.max.locator('nav.sidebar .dms a', { hasText: 'Olivia Renamed' }).count()).toBe(1));
    await goTo(f.max, 'narrow/is/mentioned');
    await eventually(async () =>
      expect(await text(f.max.locator('article.message', { hasText: 'can you look at this?' }).locator('.sender-name'))).toBe(
        'Olivia Renamed',
      ),
    );
    await name.fill('Olivia Owner');
    await f.olivia.locator('form.row-form').getByRole('button', { name: 'Save' }).click();
    await eventually(async () => expect(await f.max.locator('nav.sidebar .dms a', { hasText: 'Olivia Owner' }).count()).toBe(1));
  });

  it('draws a person’s uploaded picture from Parley, and initials for a Gravatar one (no outside image)', async () => {
    await goTo(f.max, 'narrow/is/mentioned');
    const avatar = f.max.locator('article.message', { hasText: 'can you look at this?' }).locator('.avatar').first();
    await eventually(async () => expect(await avatar.getAttribute('class')).toMatch(/\binitials\b/));
    expect(await text(avatar)).toBe('OO');

    const origin = new URL(f.olivia.url()).origin;
    const csrf = (await f.olivia.context().cookies(origin)).find((c) => c.name === 'csrftoken')?.value ?? '';
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 20, g: 120, b: 200 } } })
      .png()
      .toBuffer();
    const uploaded = await f.olivia.request.post(`${origin}/json/users/me/avatar`, {
      headers: { 'X-CSRFToken': csrf },
      multipart: { file: { name: 'me.png', mimeType: 'image/png', buffer: png } },
    });
    expect(uploaded.status()).toBe(200);
    // The realm_user event brings her picture's URL to Max's page, on the messages already drawn.
    await eventually(async () => expect(await avatar.evaluate((el) => el.tagName)).toBe('IMG'));
    const src = (await avatar.getAttribute('src'))!;
    expect(new URL(src, origin).origin).toBe(origin);
    await eventually(async () =>
      expect(await avatar.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0),
    );

    expect((await f.olivia.request.delete(`${origin}/json/users/me/avatar`, { headers: { 'X-CSRFToken': csrf } })).status()).toBe(200);
    await eventually(async () => expect(await avatar.getAttribute('class')).toMatch(/\binitials\b/));
  });

  it('lists muted topics in the settings and unmutes one there', async () => {
    await post('muted here', 'Quiet please');
    await jsonAs(f.max, 'POST', '/user_topics', { stream_id: String(general), topic: 'muted here', visibility_policy: '1' });
    await goTo(f.max, 'settings');
    await f.max.locator('h1#settings-title').waitFor();
    const item = f.max.locator('ul.muted-topics li', { hasText: '#general › muted here' });
    await item.waitFor();
    await item.getByRole('button', { name: 'Unmute' }).click();
    await eventually(async () => expect(await item.count()).toBe(0));
    await f.max.getByText('You have not muted any topics.').waitFor();
    // The server knows: a fresh page has no muted topic either.
    await f.max.reload();
    await f.max.getByText('You have not muted any topics.').waitFor();
  });

  it('lists the person’s sessions, the current one marked, and logs another one out', async () => {
    const context = await f.browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const other = await context.newPage();
      await f.logIn(other, 'max@example.com');
      await f.max.reload();
      await f.max.locator('h1#settings-title').waitFor();
      const rows = f.max.locator('table.sessions tbody tr');
      await eventually(async () => expect(await rows.count()).toBe(2));
      expect(await f.max.locator('table.sessions .current-session').count()).toBe(1);
      const current = rows.filter({ has: f.max.locator('.current-session') });
      expect(await current.getByRole('button', { name: /^Log out/ }).count()).toBe(0);
      await f.check(f.max, 'views-sessions');
      await rows
        .filter({ hasNot: f.max.locator('.current-session') })
        .getByRole('button', { name: /^Log out/ })
        .click();
      await eventually(async () => expect(await rows.count()).toBe(1));
      // The other page's next request is refused: it goes to the login page.
      await other.evaluate(`location.hash = '#narrow/is/starred'`);
      await other.waitForURL(/\/login\//);
      // This one is still signed in.
      await f.max.reload();
      await f.max.locator('h1#settings-title').waitFor();
    } finally {
      await context.close();
    }
  });

  it('answers the keyboard: search, moving the selection, star, reply, help and the next unread topic', async () => {
    await jsonAs(f.max, 'POST', '/mark_all_as_read', {});
    for (const n of ['one', 'two', 'three']) await post('keys', `keys ${n}`);
    await goTo(f.max, `narrow/channel/${general}-general/topic/keys`);
    await f.max.locator('article.message', { hasText: 'keys three' }).waitFor();
    await eventually(async () => expect(await f.max.locator('nav.sidebar .views .count').count()).toBe(0));
    const page = f.max;
    await page.locator('.message-list').focus();

    await page.keyboard.press('/');
    expect(await page.evaluate('document.activeElement.id')).toBe('search');
    await page.locator('.message-list').focus();

    const selected = page.locator('article.message.selected');
    const select = async (content: string) => {
      await page.locator('article.message', { hasText: content }).locator('.content').click();
      await eventually(async () => expect(await text(selected.locator('.content'))).toBe(content));
    };
    await select('keys one');
    await page.keyboard.press('j');
    await eventually(async () => expect(await text(selected.locator('.content'))).toBe('keys two'));
    await page.keyboard.press('j');
    await eventually(async () => expect(await text(selected.locator('.content'))).toBe('keys three'));
    await page.keyboard.press('k');
    await eventually(async () => expect(await text(selected.locator('.content'))).toBe('keys two'));

    await page.keyboard.press('*');
    await page.locator('article.message', { hasText: 'keys two' }).locator('.star').waitFor();
    expect(await page.locator('article.message', { hasText: 'keys one' }).locator('.star').count()).toBe(0);

    await goTo(page, `narrow/channel/${random}-random`);
    await page.locator('article.message', { hasText: 'This belongs in random' }).waitFor();
    await select('This belongs in random');
    await page.keyboard.press('r');
    await eventually(async () => expect(await page.evaluate('document.activeElement.id')).toBe('compose-content'));
    expect(await page.locator('#compose-channel').inputValue()).toBe('random');
    expect(await page.locator('#compose-topic').inputValue()).toBe('wrong place');
    await page.locator('.message-list').focus();

    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    await f.check(page, 'views-help');
    await page.keyboard.press('Escape');
    await eventually(async () => expect(await help.count()).toBe(0));

    await post('next up', 'Unread, in another topic');
    await page.locator('nav.sidebar .views a', { hasText: 'Combined feed' }).locator('.count').waitFor();
    await page.locator('.message-list').focus();
    await page.keyboard.press('n');
    await eventually(async () => expect(await title(page)).toBe('#general › next up'));
    await page.locator('article.message', { hasText: 'Unread, in another topic' }).waitFor();
  });

  it('opens the sidebar as a drawer at phone width, and closes it on choosing a channel', async () => {
    const page = f.olivia;
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await goTo(page, `narrow/channel/${general}-general`);
      await page.locator('article.message').first().waitFor();
      const menu = page.getByRole('button', { name: 'Channels and conversations' });
      const random = page.locator('nav.sidebar .channels .channel-row a', { hasText: /^random\b/ });
      expect(await random.isVisible()).toBe(false);
      await menu.click();
      await eventually(async () => expect(await menu.getAttribute('aria-expanded')).toBe('true'));
      await eventually(async () => expect(await random.isVisible()).toBe(true));
      await f.check(page, 'views-phone-drawer');
      expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
      await random.click();
      await eventually(async () => expect(await title(page)).toBe('#random'));
      await eventually(async () => expect(await random.isVisible()).toBe(false));
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('has no serious or critical accessibility violation on any screen', () => {
    expect(f.a11y).toEqual([]);
  });

  it('broke no rule of its Content-Security-Policy, logged no error and asked no other origin', () => {
    expect(f.problems).toEqual([]);
  });
});
