import type { Page } from 'playwright-core';
import { describeInBrowser } from './support/browser';
import { channelId, eventually, text, useWebClient, userId } from './support/web-client';

/**
 * The web client's compose box in Debian's Chromium against a real Parley
 * process, with two demo people (Olivia and Max) in browser contexts of
 * their own: the Markdown preview, completion of mentions, channels, topics
 * and emoji, uploads (dropped, pasted, chosen), typing notices, new direct
 * messages and replies, a network loss, and drafts kept per conversation.
 * Screens are checked as in test/web-client.test.ts.
 */
/** A one-pixel PNG. */
const DOT_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describeInBrowser('the web client’s compose box in Chromium', 'test/web-client-compose.test.ts', (CHROMIUM) => {
  jest.setTimeout(120_000);
  const f = useWebClient(CHROMIUM, { name: 'web-compose' });
  const ids = { general: 0, random: 0, olivia: 0, max: 0, mia: 0 };

  /** Opens a narrow by its hash in the page as it is (no reload, so the client's memory stays). */
  async function open(page: Page, hash: string): Promise<void> {
    await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
    await page.waitForFunction(`location.hash === ${JSON.stringify(hash)}`);
  }
  // Page code is written as strings: the tests are compiled without the DOM's types.
  const focused = (page: Page) => page.evaluate('document.activeElement?.id');
  const topic = (channel: number, name: string) => `#narrow/channel/${channel}-x/topic/${encodeURIComponent(name)}`;
  const field = (page: Page) => page.locator('textarea#compose-content');
  const suggestion = (page: Page, label: string) => page.locator('#compose-suggestions [role=option]', { hasText: label });

  it('logs both people in', async () => {
    await f.logIn(f.olivia, 'olivia@example.com');
    await f.logIn(f.max, 'max@example.com');
    ids.general = await channelId(f.olivia, 'general');
    ids.random = await channelId(f.olivia, 'random');
    ids.olivia = await userId(f.olivia, 'olivia@example.com');
    ids.max = await userId(f.olivia, 'max@example.com');
    ids.mia = await userId(f.olivia, 'mia@example.com');
  });

  it('previews Markdown as the server renders it, and goes back to the text unchanged', async () => {
    await open(f.olivia, topic(ids.general, 'preview'));
    const markdown = 'This is **bold** and *slanted*';
    await field(f.olivia).fill(markdown);
    await f.olivia.getByRole('button', { name: 'Preview', exact: true }).click();
    const preview = f.olivia.locator('.compose-preview .content');
    await preview.locator('strong', { hasText: 'bold' }).waitFor();
    expect(await preview.locator('em', { hasText: 'slanted' }).count()).toBe(1);
    expect(await field(f.olivia).count()).toBe(0);
    await f.check(f.olivia, 'compose-preview');
    await f.olivia.getByRole('button', { name: 'Preview', exact: true }).click();
    await field(f.olivia).waitFor();
    expect(await field(f.olivia).inputValue()).toBe(markdown);
    await eventually(async () => expect(await focused(f.olivia)).toBe('compose-content'));
    await field(f.olivia).fill('');
  });

  it('completes a mention by Enter, Tab or a click, and the mention reaches the person', async () => {
    // Max is elsewhere, so the mention stays unread for him.
    await open(f.max, `#narrow/channel/${ids.random}-random`);
    await f.max.locator('article.message').first().waitFor();
    const mentions = f.max.locator('nav.sidebar .views a', { hasText: 'Mentions' }).locator('.count');
    const before = (await mentions.count()) ? Number(await text(mentions)) : 0;

    await open(f.olivia, topic(ids.general, 'mentions'));
    const box = field(f.olivia);
    for (const take of ['Enter', 'Tab', 'click'] as const) {
      await box.fill('');
      await box.pressSequentially('Hi @ma');
      await suggestion(f.olivia, 'Max Member').waitFor();
      if (take === 'Enter') await f.check(f.olivia, 'compose-suggestions');
      if (take === 'click') await suggestion(f.olivia, 'Max Member').click();
      else await box.press(take);
      await eventually(async () => expect(await box.inputValue()).toBe('Hi @**Max Member** '));
      expect(await f.olivia.locator('#compose-suggestions').count()).toBe(0);
      // The field kept focus: typing goes on where the mention ended.
      expect(await focused(f.olivia)).toBe('compose-content');
    }
    await box.pressSequentially('have a look');
    await box.press('Control+Enter');
    await f.olivia.locator('article.message .content .user-mention', { hasText: 'Max Member' }).last().waitFor();
    await eventually(async () => expect(Number(await text(mentions))).toBe(before + 1));
    await open(f.max, topic(ids.general, 'mentions'));
    await f.max.locator('article.message.mentioned', { hasText: 'have a look' }).waitFor();
  });

  it('completes a channel, then its topics, and emoji; the topic field offers the channel’s topics', async () => {
    const box = field(f.olivia);
    await box.fill('');
    await box.pressSequentially('See #gen');
    await suggestion(f.olivia, 'general').waitFor();
    await box.press('Enter');
    await eventually(async () => expect(await box.inputValue()).toBe('See #**general**'));
    await box.pressSequentially('>wel');
    await suggestion(f.olivia, 'welcome').waitFor();
    await box.press('Enter');
    await eventually(async () => expect(await box.inputValue()).toBe('See #**general>welcome** '));
    await box.pressSequentially('and :tad');
    await suggestion(f.olivia, 'tada').waitFor();
    await box.press('Tab');
    await eventually(async () => expect(await box.inputValue()).toBe('See #**general>welcome** and :tada: '));
    await box.press('Control+Enter');
    const sent = f.olivia.locator('article.message', { hasText: 'See' }).last();
    await sent.locator('a.stream-topic', { hasText: 'general' }).waitFor();
    await sent.locator('.emoji').waitFor();

    await f.olivia.locator('input#compose-topic').focus();
    await eventually(async () =>
      expect(await f.olivia.evaluate("[...document.querySelectorAll('datalist#compose-topic-names option')].map((o) => o.value)")).toEqual(
        expect.arrayContaining(['welcome', 'announcements', 'mentions']),
      ),
    );
  });

  it('uploads a file dropped, pasted or chosen, links it, and the other person downloads it', async () => {
    await open(f.olivia, topic(ids.general, 'files'));
    const box = field(f.olivia);
    await box.fill('Files:');
    // A DataTransfer holding one small text file, made in the page.
    const filesIn = (name: string) => `(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([${JSON.stringify(`contents of ${name}`)}], ${JSON.stringify(name)}, { type: 'text/plain' }));
      return dt;
    })()`;

    await f.olivia.locator('form.compose').dispatchEvent('drop', { dataTransfer: await f.olivia.evaluateHandle(filesIn('dropped.txt')) });
    await eventually(async () => expect(await box.inputValue()).toMatch(/\[dropped\.txt\]\(\/user_uploads\/[^)]+\)/));

    await f.olivia.evaluate(`document.getElementById('compose-content').dispatchEvent(
      new ClipboardEvent('paste', { clipboardData: ${filesIn('pasted.txt')}, bubbles: true, cancelable: true }),
    )`);
    await eventually(async () => expect(await box.inputValue()).toMatch(/\[pasted\.txt\]\(\/user_uploads\/[^)]+\)/));

    const chooser = f.olivia.waitForEvent('filechooser');
    await f.olivia.getByRole('button', { name: 'Attach files' }).click();
    await (
      await chooser
    ).setFiles([
      { name: 'chosen.txt', mimeType: 'text/plain', buffer: Buffer.from('contents of chosen.txt') },
      { name: 'dot.png', mimeType: 'image/png', buffer: DOT_PNG },
    ]);
    await eventually(async () => expect(await box.inputValue()).toMatch(/\[dot\.png\]\(\/user_uploads\/[^)]+\)/));
    await eventually(async () => expect(await box.inputValue()).toMatch(/\[chosen\.txt\]\(\/user_uploads\/[^)]+\)/));
    expect(await box.inputValue()).not.toMatch(/Uploading/);

    await f.olivia.getByRole('button', { name: 'Send' }).click();
    await open(f.max, topic(ids.general, 'files'));
    const message = f.max.locator('article.message', { hasText: 'Files:' });
    for (const name of ['dropped.txt', 'pasted.txt', 'chosen.txt']) {
      const link = message.locator('.content a', { hasText: name });
      await link.waitFor();
      const href = (await link.getAttribute('href')) ?? '';
      expect(href).toMatch(/^\/user_uploads\//);
      const url = `${f.server.url}${href}`;
      // With Max's session cookie the file is his to read; without a session it is not.
      const res = await f.max.request.get(url);
      expect(res.status()).toBe(200);
      expect(await res.text()).toBe(`contents of ${name}`);
      expect((await fetch(url, { redirect: 'manual' })).status).not.toBe(200);
    }
    // The picture is previewed, and the page may load it (its policy allows images of its own origin).
    await message.locator('.message_inline_image img').waitFor();
    await eventually(async () =>
      expect(await f.max.evaluate("document.querySelector('article.message .message_inline_image img').naturalWidth")).toBe(1),
    );
  });

  it('tells the other person who is typing, until the message is sent', async () => {
    await open(f.max, topic(ids.general, 'typing'));
    await open(f.olivia, topic(ids.general, 'typing'));
    const notice = f.max.locator('.typing-notice');
    expect(await text(notice)).toBe('');
    await field(f.olivia).pressSequentially('Typing slowly');
    await eventually(async () => expect(await text(notice)).toBe('Olivia Owner is typing…'));
    // Elsewhere, Olivia's typing is not shown.
    expect(await text(f.olivia.locator('.typing-notice'))).toBe('');
    await field(f.olivia).press('Control+Enter');
    await f.max.locator('article.message', { hasText: 'Typing slowly' }).waitFor();
    await eventually(async () => expect(await text(notice)).toBe(''));
  });

  it('tells the other person of a direct conversation who is typing, until the text is emptied', async () => {
    await open(f.max, `#narrow/dm/${ids.olivia}`);
    await open(f.olivia, `#narrow/dm/${ids.max}`);
    const notice = f.max.locator('.typing-notice');
    await field(f.olivia).pressSequentially('Hm');
    await eventually(async () => expect(await text(notice)).toBe('Olivia Owner is typing…'));
    await field(f.olivia).press('Backspace');
    await field(f.olivia).press('Backspace');
    await eventually(async () => expect(await text(notice)).toBe(''));
  });

  it('starts a direct message and a group one with the picker; replies go to the message’s conversation', async () => {
    await open(f.max, `#narrow/channel/${ids.random}-random`);
    await open(f.olivia, topic(ids.general, 'dms'));
    const picker = f.olivia.locator('input#dm-recipient');
    const person = (label: string) => f.olivia.locator('#dm-recipient-suggestions [role=option]', { hasText: label });

    await f.olivia.getByRole('button', { name: 'New direct message' }).click();
    await eventually(async () => expect(await focused(f.olivia)).toBe('dm-recipient'));
    await picker.pressSequentially('max');
    await person('Max Member').waitFor();
    await f.check(f.olivia, 'compose-dm-picker');
    await picker.press('Enter');
    await f.olivia.locator('.recipients .chip', { hasText: 'Max Member' }).waitFor();
    await field(f.olivia).fill('Just the two of us');
    await f.olivia.getByRole('button', { name: 'Send' }).click();
    await eventually(async () => expect(await field(f.olivia).inputValue()).toBe(''));

    await f.olivia.getByRole('button', { name: 'Message a channel' }).click();
    await f.olivia.getByRole('button', { name: 'New direct message' }).click();
    expect(await f.olivia.locator('.recipients .chip').count()).toBe(0);
    for (const [typed, name] of [
      ['max', 'Max Member'],
      ['mia', 'Mia Member'],
    ]) {
      await picker.pressSequentially(typed);
      await person(name).click();
      await f.olivia.locator('.recipients .chip', { hasText: name }).waitFor();
    }
    await field(f.olivia).fill('All three of us');
    await f.olivia.getByRole('button', { name: 'Send' }).click();
    await eventually(async () => expect(await field(f.olivia).inputValue()).toBe(''));

    const dmRows = async () => (await f.max.locator('nav.sidebar .dms a').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
    // Direct conversations are named by their people in the order of their IDs.
    await eventually(async () => expect(await dmRows()).toEqual(expect.arrayContaining(['Olivia Owner 1', 'Olivia Owner, Mia Member 1'])));

    // Max replies to each from the list of all direct messages, where the compose box has no conversation of its own.
    await f.max.locator('nav.sidebar .views a', { hasText: 'Direct messages' }).click();
    const reply = async (said: string, answer: string, chips: string[]) => {
      const m = f.max.locator('article.message', { hasText: said });
      await m.getByRole('button', { name: 'Message actions' }).click();
      await f.max.getByRole('button', { name: 'Reply' }).click();
      await eventually(async () =>
        expect((await f.max.locator('.recipients .chip').allTextContents()).sort()).toEqual(chips.map((c) => `${c}×`).sort()),
      );
      await eventually(async () => expect(await focused(f.max)).toBe('compose-content'));
      await field(f.max).fill(answer);
      await field(f.max).press('Control+Enter');
      await f.max.locator('article.message', { hasText: answer }).waitFor();
    };
    await reply('All three of us', 'Reply to the group', ['Olivia Owner', 'Mia Member']);
    await reply('Just the two of us', 'Reply to you alone', ['Olivia Owner']);

    // The server filed each reply under its conversation.
    const inConversation = async (others: number[]) => {
      const narrow = JSON.stringify([{ operator: 'dm', operand: others }]);
      const res = await f.olivia.request.get(
        `${f.server.url}/json/messages?anchor=newest&num_before=10&num_after=0&narrow=${encodeURIComponent(narrow)}`,
      );
      return ((await res.json()) as { messages: { content: string }[] }).messages.map((m) => m.content);
    };
    expect((await inConversation([ids.max, ids.mia])).join('\n')).toMatch(/Reply to the group/);
    expect((await inConversation([ids.max, ids.mia])).join('\n')).not.toMatch(/Reply to you alone/);
    expect((await inConversation([ids.max])).join('\n')).toMatch(/Reply to you alone/);
    expect((await inConversation([ids.max])).join('\n')).not.toMatch(/Reply to the group/);
  });

  it('shows what was sent while the network was gone once it is back', async () => {
    await open(f.max, topic(ids.general, 'offline'));
    await open(f.olivia, topic(ids.general, 'offline'));
    // The new topic is loaded (empty) and the client is live before the network goes.
    await f.max.locator('.message-list .status', { hasText: 'No messages here yet.' }).waitFor();
    expect(await f.max.locator('.connection[role=status]').count()).toBe(0);
    const maxContext = f.max.context();
    await maxContext.setOffline(true);
    await field(f.olivia).fill('Sent while Max was offline');
    await field(f.olivia).press('Control+Enter');
    await f.olivia.locator('article.message', { hasText: 'Sent while Max was offline' }).waitFor();
    // Max's client notices it lost the server.
    await f.max.locator('.connection[role=status]').waitFor({ timeout: 30_000 });
    expect(await f.max.locator('article.message', { hasText: 'Sent while Max was offline' }).count()).toBe(0);
    await maxContext.setOffline(false);
    await f.max.locator('article.message', { hasText: 'Sent while Max was offline' }).waitFor({ timeout: 40_000 });
    await eventually(async () => expect(await f.max.locator('.connection[role=status]').count()).toBe(0));
  });

  it('keeps a draft for each conversation while moving between them', async () => {
    const box = field(f.olivia);
    await open(f.olivia, topic(ids.general, 'draft one'));
    await box.fill('First draft');
    await open(f.olivia, topic(ids.general, 'draft two'));
    await eventually(async () => expect(await box.inputValue()).toBe(''));
    await box.fill('Second draft');
    await open(f.olivia, `#narrow/dm/${ids.max}`);
    await eventually(async () => expect(await box.inputValue()).toBe(''));
    await box.fill('Private draft');
    await open(f.olivia, topic(ids.general, 'draft one'));
    await eventually(async () => expect(await box.inputValue()).toBe('First draft'));
    await open(f.olivia, `#narrow/dm/${ids.max}`);
    await eventually(async () => expect(await box.inputValue()).toBe('Private draft'));
    await open(f.olivia, topic(ids.general, 'draft two'));
    await eventually(async () => expect(await box.inputValue()).toBe('Second draft'));
    // Topics differ only in case: the same conversation, the same draft.
    await open(f.olivia, topic(ids.general, 'Draft One'));
    await eventually(async () => expect(await box.inputValue()).toBe('First draft'));
  });

  it('has no serious or critical accessibility violation on any screen', () => {
    expect(f.a11y).toEqual([]);
  });

  it('broke no rule of its Content-Security-Policy, logged no error and asked no other origin', () => {
    expect(f.problems).toEqual([]);
  });
});
