import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { accessibilityProblems, screenshot, watchPage } from './browser';
import { startServerProcess, type ServerProcess } from './server-process';

/**
 * The web client's browser suites (test/web-client*.test.ts) share this:
 * a real Parley process serving the built client (web/dist, built here when
 * missing), Debian's Chromium, two demo people in browser contexts of their
 * own, and the checks every screen gets (axe-core, a screenshot) and every
 * page (no console error, no breach of the policy, no other origin).
 */
const ROOT = path.join(__dirname, '..', '..');
export const DEMO_PASSWORD = 'parley-demo-password';

export interface WebClientFixture {
  server: ServerProcess;
  /** The server's port, kept across restarts so the pages' origin stays. */
  port: number;
  browser: Browser;
  olivia: Page;
  max: Page;
  contexts: BrowserContext[];
  /** Console errors, page errors, refused policy rules and outside requests. */
  problems: string[];
  /** Serious and critical axe-core violations, by screen. */
  a11y: string[];
  /** axe-core and a screenshot of the page as it is, under this screen's name. */
  check(page: Page, screen: string): Promise<void>;
  /** The login page's form, then the client drawn. */
  logIn(page: Page, email: string): Promise<void>;
  /** Stops the server and starts it again on the same port and data (every event queue is lost). */
  restart(): Promise<void>;
}

/** Registers beforeAll/afterAll in the calling describe; the fixture's fields are set once beforeAll ran. */
export function useWebClient(chromiumPath: string, opts: { name: string; viewport?: { width: number; height: number } }): WebClientFixture {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-${opts.name}-`));
  const viewport = opts.viewport ?? { width: 1280, height: 800 };
  const f = {
    problems: [] as string[],
    a11y: [] as string[],
    contexts: [] as BrowserContext[],
    async check(page: Page, screen: string) {
      await screenshot(page, screen);
      for (const p of await accessibilityProblems(page)) f.a11y.push(`${screen}: ${p}`);
    },
    async logIn(page: Page, email: string) {
      await page.goto(`${f.server.url}/login/`);
      await page.locator('#username').fill(email);
      await page.locator('#password').fill(DEMO_PASSWORD);
      await page.locator('button[type=submit]').click();
      await page.locator('h1.narrow-title').waitFor();
    },
    async restart() {
      await f.server.stop();
      f.server = await startServerProcess({ DATA_DIR: dataDir, PORT: String(f.port), WEB_DIST_DIR: path.join(ROOT, 'web', 'dist') });
    },
  } as WebClientFixture;

  beforeAll(async () => {
    if (!fs.existsSync(path.join(ROOT, 'web', 'dist', 'index.html'))) {
      execFileSync(path.join(ROOT, 'node_modules', '.bin', 'vite'), ['build', 'web', '--logLevel', 'warn'], {
        cwd: ROOT,
        stdio: 'inherit',
      });
    }
    f.port = await freePort();
    f.server = await startServerProcess({ DATA_DIR: dataDir, PORT: String(f.port), WEB_DIST_DIR: path.join(ROOT, 'web', 'dist') });
    f.browser = await chromium.launch({ executablePath: chromiumPath });
    const pages: Page[] = [];
    for (let i = 0; i < 2; i++) {
      const context = await f.browser.newContext({ viewport });
      f.contexts.push(context);
      const page = await context.newPage();
      watchPage(page, f.server.url, f.problems, expectedConsole);
      pages.push(page);
    }
    [f.olivia, f.max] = pages;
  }, 120_000);

  afterAll(async () => {
    await f.browser?.close();
    await f.server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return f;
}

/**
 * Chromium logs the failed requests of a server restart or a network loss,
 * which the tests provoke: refused connections, and the polls refused while
 * the server has forgotten the event queue.
 */
function expectedConsole(text: string, url: string): boolean {
  if (!/Failed to load resource/.test(text) || !/\/json\//.test(url)) return false;
  return (
    /net::ERR_(CONNECTION_REFUSED|INTERNET_DISCONNECTED|CONNECTION_RESET|EMPTY_RESPONSE)/.test(text) ||
    /\/json\/(events|register)/.test(url)
  );
}

/** A channel's ID, asked with the page's own session. */
export async function channelId(page: Page, name: string): Promise<number> {
  const res = await page.request.get(`${new URL(page.url()).origin}/json/get_stream_id?stream=${encodeURIComponent(name)}`);
  return ((await res.json()) as { stream_id: number }).stream_id;
}

/** A user's ID, asked with the page's own session. */
export async function userId(page: Page, email: string): Promise<number> {
  const res = await page.request.get(`${new URL(page.url()).origin}/json/users/${encodeURIComponent(email)}`);
  return ((await res.json()) as { user: { user_id: number } }).user.user_id;
}

/** An API request of the demo owner's, outside the pages (HTTP Basic with the owner's key). */
export async function apiAsOwner(server: ServerProcess, method: string, apiPath: string, fields: Record<string, string>): Promise<unknown> {
  const authorization = `Basic ${Buffer.from(`${server.owner.email}:${server.owner.apiKey}`).toString('base64')}`;
  const res = await fetch(`${server.url}/api/v1${apiPath}`, { method, headers: { authorization }, body: new URLSearchParams(fields) });
  if (!res.ok) throw new Error(`${method} ${apiPath}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A /json request with a page's session and its CSRF token, as the client makes it. */
export async function jsonAs(
  page: Page,
  method: 'POST' | 'PATCH' | 'DELETE',
  apiPath: string,
  fields: Record<string, string>,
): Promise<unknown> {
  const origin = new URL(page.url()).origin;
  const csrf = (await page.context().cookies(origin)).find((c) => c.name === 'csrftoken')?.value ?? '';
  const res = await page.request.fetch(`${origin}/json${apiPath}`, {
    method,
    headers: { 'X-CSRFToken': csrf, 'Content-Type': 'application/x-www-form-urlencoded' },
    data: new URLSearchParams(fields).toString(),
  });
  if (!res.ok()) throw new Error(`${method} ${apiPath}: ${res.status()} ${await res.text()}`);
  return res.json();
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
export async function eventually(assertion: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
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

/** A locator's text, trimmed. */
export async function text(locator: Locator): Promise<string> {
  return ((await locator.textContent({ timeout: 1000 })) ?? '').trim();
}
