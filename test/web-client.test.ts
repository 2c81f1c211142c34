import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, screenshot, watchPage } from './support/browser';
import { startServerProcess, type ServerProcess } from './support/server-process';

/**
 * The web client (web/) in Debian's Chromium against a real Parley process:
 * two demo people, each in a browser context of their own, log in at
 * /login/ and chat. Every screen is checked by axe-core (no serious or
 * critical violation) and photographed (.tmp/screenshots/; docs/screenshots/
 * with UPDATE_SCREENSHOTS=1). No page may break its Content-Security-Policy,
 * log an error or request anything from another origin.
 */
const ROOT = path.join(__dirname, '..');
const PASSWORD = 'parley-demo-password';

describeInBrowser('the web client in Chromium', 'test/web-client.test.ts', (CHROMIUM) => {
  // Two browser contexts and a server process on two shared cores.
  jest.setTimeout(120_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-web-'));
  let port: number;
  let server: ServerProcess;
  let browser: Browser;
  let oliviaContext: BrowserContext;
  let maxContext: BrowserContext;
  let olivia: Page;
  let max: Page;
  const problems: string[] = [];
  const a11y: string[] = [];

  async function check(page: Page, screen: string): Promise<void> {
    await screenshot(page, screen);
    for (const p of await accessibilityProblems(page)) a11y.push(`${screen}: ${p}`);
  }

  beforeAll(async () => {
    if (!fs.existsSync(path.join(ROOT, 'web', 'dist', 'index.html'))) {
      execFileSync(path.join(ROOT, 'node_modules', '.bin', 'vite'), ['build', 'web', '--logLevel', 'warn'], {
        cwd: ROOT,
        stdio: 'inherit',
      });
    }
    port = await freePort();
    server = await startServerProcess({ DATA_DIR: dataDir, PORT: String(port) });
    browser = await chromium.launch({ executablePath: CHROMIUM });
    oliviaContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    maxContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    olivia = await oliviaContext.newPage();
    max = await maxContext.newPage();
    for (const page of [olivia, max]) watchPage(page, server.url, problems, expectedConsole);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends a visitor without a session to the login page, and logs them in to the combined feed', async () => {
    await olivia.goto(`${server.url}/`);
    expect(new URL(olivia.url()).pathname).toBe('/login/');
    await check(olivia, 'login');
    await logIn(olivia, 'olivia@example.com');
    await logIn(max, 'max@example.com');
    await eventually(async () => expect(await text(olivia.locator('h1.narrow-title'))).toBe('Combined feed'));
    // The demo organization's conversations, drawn from the server.
    await olivia.locator('article.message').first().waitFor();
    expect(await olivia.locator('nav.sidebar .channels a', { hasText: 'general' }).count()).toBe(1);
    await check(olivia, 'combined-feed');
  });

  it('shows a message sent by one person to the other at once, unread, and marks it read once seen', async () => {
    await max.goto(`${server.url}/#narrow/channel/${await channelId(max, 'random')}-random`);
    await olivia.goto(`${server.url}/#narrow/channel/${await channelId(olivia, 'general')}-general/topic/lunch`);
    await olivia.locator('textarea#compose-content').fill('Lunch at **noon**?');
    await olivia.getByRole('button', { name: 'Send' }).click();
    await olivia.locator('article.message .content strong', { hasText: 'noon' }).waitFor();
    // Max is elsewhere: the message counts as unread in #general.
    const generalCount = max.locator('nav.sidebar .channels li', { hasText: 'general' }).locator('.count');
    await generalCount.waitFor();
    const before = Number(await generalCount.textContent());
    expect(before).toBeGreaterThanOrEqual(1);
    await max.locator('nav.sidebar .channels a', { hasText: 'general' }).click();
    await max.locator('article.message .content strong', { hasText: 'noon' }).waitFor();
    // Seen while the page has focus: read, for the server too.
    await eventually(async () => expect(await generalCount.count()).toBe(0));
    await check(max, 'channel');
  });

  it('puts a reaction on the other person’s screen, and takes it back', async () => {
    const message = max.locator('article.message', { hasText: 'Lunch at' });
    await message.getByRole('button', { name: 'Message actions' }).click();
    await max.getByRole('button', { name: 'React with +1' }).click();
    const seen = olivia.locator('article.message', { hasText: 'Lunch at' }).locator('button.reaction');
    await eventually(async () => expect(await text(seen)).toMatch(/1/));
    await check(olivia, 'reaction');
    await message.locator('button.reaction').click();
    await eventually(async () => expect(await seen.count()).toBe(0));
  });

  it('edits and deletes a message for everyone', async () => {
    const mine = olivia.locator('article.message', { hasText: 'Lunch at' });
    await mine.getByRole('button', { name: 'Message actions' }).click();
    await olivia.getByRole('button', { name: 'Edit' }).click();
    const editor = olivia.locator('textarea#edit-content');
    await eventually(async () => expect(await editor.inputValue()).toBe('Lunch at **noon**?'));
    await editor.fill('Lunch at **one**?');
    await olivia.getByRole('button', { name: 'Save' }).click();
    await max.locator('article.message .content strong', { hasText: 'one' }).waitFor();
    await max.locator('article.message', { hasText: 'Lunch at' }).locator('.edited').waitFor();
    await mine.getByRole('button', { name: 'Message actions' }).click();
    await olivia.getByRole('button', { name: 'Delete' }).click();
    await eventually(async () => expect(await max.locator('article.message', { hasText: 'Lunch at' }).count()).toBe(0));
  });

  it('carries direct messages between the two', async () => {
    const maxId = await userId(olivia, 'max@example.com');
    await olivia.goto(`${server.url}/#narrow/dm/${maxId}`);
    await eventually(async () => expect(await text(olivia.locator('h1.narrow-title'))).toBe('Max Member'));
    await olivia.locator('textarea#compose-content').fill('A word in private');
    await olivia.locator('textarea#compose-content').press('Control+Enter');
    const dmLink = max.locator('nav.sidebar .dms a', { hasText: 'Olivia Owner' });
    await eventually(async () => expect(await text(dmLink.locator('.count'))).toBe('1'));
    await dmLink.click();
    await max.locator('article.message', { hasText: 'A word in private' }).waitFor();
    await check(max, 'direct-messages');
  });

  it('stars a message and finds it among starred messages and by search', async () => {
    const message = max.locator('article.message', { hasText: 'A word in private' });
    await message.getByRole('button', { name: 'Message actions' }).click();
    await max.getByRole('button', { name: 'Star' }).click();
    await message.locator('.star').waitFor();
    await max.locator('nav.sidebar a', { hasText: 'Starred messages' }).click();
    await eventually(async () => expect(await text(max.locator('h1.narrow-title'))).toBe('Starred messages'));
    await max.locator('article.message', { hasText: 'A word in private' }).waitFor();
    await max.locator('input#search').fill('private is:dm');
    await max.locator('input#search').press('Enter');
    await max.locator('article.message', { hasText: 'A word in private' }).waitFor();
    await check(max, 'search');
  });

  it('picks up again after the server lost its event queue, with what was sent meanwhile', async () => {
    await max.goto(`${server.url}/#narrow/channel/${await channelId(max, 'general')}-general`);
    await max.locator('article.message').first().waitFor();
    // A restart forgets every event queue: the client's next poll gets BAD_EVENT_QUEUE_ID.
    await server.stop();
    server = await startServerProcess({ DATA_DIR: dataDir, PORT: String(port) });
    await apiAs(server, 'POST', '/messages', { type: 'channel', to: 'general', topic: 'restarts', content: 'Sent while you were away' });
    await max.locator('article.message', { hasText: 'Sent while you were away' }).waitFor({ timeout: 60_000 });
    await apiAs(server, 'POST', '/messages', { type: 'channel', to: 'general', topic: 'restarts', content: 'And one after' });
    await max.locator('article.message', { hasText: 'And one after' }).waitFor({ timeout: 30_000 });
  });

  it('draws a dark theme and fits a phone', async () => {
    await olivia.emulateMedia({ colorScheme: 'dark' });
    await olivia.goto(`${server.url}/#narrow/channel/${await channelId(olivia, 'general')}-general`);
    await olivia.locator('article.message').first().waitFor();
    const background = await olivia.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(27, 29, 33)');
    await check(olivia, 'dark');
    await olivia.emulateMedia({ colorScheme: 'light' });
    await olivia.setViewportSize({ width: 390, height: 844 });
    const overflow = await olivia.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBe(0);
    await check(olivia, 'phone');
    await olivia.setViewportSize({ width: 1280, height: 800 });
  });

  it('logs out', async () => {
    await max.getByRole('button', { name: 'Log out' }).click();
    await max.waitForURL(/\/login\/$/);
    await max.goto(`${server.url}/`);
    expect(new URL(max.url()).pathname).toBe('/login/');
  });

  it('has no serious or critical accessibility violation on any screen', () => {
    expect(a11y).toEqual([]);
  });

  it('broke no rule of its Content-Security-Policy, logged no error and asked no other origin', () => {
    expect(problems).toEqual([]);
  });

  async function logIn(page: Page, email: string): Promise<void> {
    await page.goto(`${server.url}/login/`);
    await page.locator('#username').fill(email);
    await page.locator('#password').fill(PASSWORD);
    await page.locator('button[type=submit]').click();
    await page.locator('h1.narrow-title').waitFor();
  }
});

/** Zulip's 4xx answers a test provokes are logged by Chromium; the restart's refused polls too. */
function expectedConsole(text: string, url: string): boolean {
  return /Failed to load resource/.test(text) && /\/json\/(events|register)/.test(url);
}

/** What the page itself knows (from POST /register), read through its own API client. */
async function channelId(page: Page, name: string): Promise<number> {
  const url = new URL(page.url()).origin;
  const res = await page.request.get(`${url}/json/get_stream_id?stream=${encodeURIComponent(name)}`);
  const body = (await res.json()) as { stream_id: number };
  return body.stream_id;
}

async function userId(page: Page, email: string): Promise<number> {
  const url = new URL(page.url()).origin;
  const res = await page.request.get(`${url}/json/users/${encodeURIComponent(email)}`);
  const body = (await res.json()) as { user: { user_id: number } };
  return body.user.user_id;
}

async function apiAs(server: ServerProcess, method: string, apiPath: string, fields: Record<string, string>): Promise<void> {
  const authorization = `Basic ${Buffer.from(`${server.owner.email}:${server.owner.apiKey}`).toString('base64')}`;
  const res = await fetch(`${server.url}/api/v1${apiPath}`, { method, headers: { authorization }, body: new URLSearchParams(fields) });
  if (!res.ok) throw new Error(`${method} ${apiPath}: ${res.status} ${await res.text()}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * playwright-core has no test runner's retrying assertions: this retries a
 * jest assertion until it holds or the time is up (then its last failure).
 */
async function eventually(assertion: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function text(locator: Locator): Promise<string> {
  return ((await locator.textContent({ timeout: 1000 })) ?? '').trim();
}
