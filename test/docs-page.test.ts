import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import sharp from 'sharp';
import { startServerProcess, type ServerProcess } from './support/server-process';
import { describeInBrowser, watchPage } from './support/browser';

/**
 * The API reference at /api/docs, rendered by headless Chromium (Debian's
 * `chromium`, driven by playwright-core) from a real Parley process: every
 * operation of the contract is on the page, one shows its parameters,
 * responses and example, and "try it" reaches the running server, with and
 * without the demo owner's credentials, from whatever address the page was
 * opened at. "Try it" of every GET operation and of POST /messages, with
 * the form as the page fills it from the contract's examples, is a request
 * the server accepts. The page must load nothing from outside the server
 * and break no rule of its Content-Security-Policy.
 *
 * Without Chromium this file is skipped, loudly; under CI (CI=true) it fails
 * instead: .ci/run installs Chromium.
 */
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
let operations: ContractOperation[] | undefined; // contractOperations()

/**
 * The operations whose "try it", as the page fills the form, cannot succeed
 * against the demo organization, and the Zulip error each answers instead:
 * their examples name something only a client's earlier request creates,
 * under a name the server draws at random.
 */
const UNREACHABLE_EXAMPLES: Record<string, { status: string; body: object }> = {
  // An event queue's ID comes from POST /register.
  'get-events': { status: '400', body: { result: 'error', code: 'BAD_EVENT_QUEUE_ID' } },
  // An upload's path carries a token drawn when it is uploaded.
  'get-file-temporary-url': { status: '404', body: { result: 'error', msg: 'File not found.', code: 'BAD_REQUEST' } },
  // A bot's storage is a bot's: the demo owner is a person.
  'get-bot-storage': { status: '400', body: { result: 'error', msg: 'Must be a bot user', code: 'BAD_REQUEST' } },
  // The demo organization has no bot: the example's bot ID names none.
  'get-bot-api-key': { status: '400', body: { result: 'error', msg: 'No such bot', code: 'BAD_REQUEST' } },
  // A browser session's ID comes from a login on the login page.
  'delete-session': { status: '400', body: { result: 'error', msg: 'Invalid session ID', code: 'BAD_REQUEST' } },
};

interface ContractOperation {
  method: string;
  path: string;
  operationId: string;
  tag: string;
  parameters: string[];
  responses: string[];
}

describeInBrowser('the /api/docs page in Chromium', 'test/docs-page.test.ts', (CHROMIUM) => {
  // A browser rendering some forty operations on two shared cores.
  jest.setTimeout(90_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-docs-'));
  const contract = contractOperations();
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  /** Console errors, page errors, CSP violations and requests to any other origin. */
  const problems: string[] = [];

  beforeAll(async () => {
    server = await startServerProcess({ DATA_DIR: dataDir });
    browser = await chromium.launch({ executablePath: CHROMIUM });
    page = await openDocs(browser, server.url, problems);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists every operation of the contract, by method, path and operationId', async () => {
    // Tag by tag: the whole list is rendered virtualised (only the rows in view) once it is long.
    const rendered = new Set<string>();
    for (const tag of new Set(contract.map((op) => op.tag))) {
      await showTag(page, tag);
      const blocks = await page.locator('.opblock').evaluateAll((all) =>
        all.map((b) =>
          [
            b.querySelector('.opblock-summary-method')?.textContent?.toLowerCase(),
            // a deprecated operation's path has its own class
            b.querySelector('[data-path]')?.getAttribute('data-path'),
            b.querySelector('.opblock-summary-operation-id')?.textContent,
          ].join(' '),
        ),
      );
      for (const b of blocks) rendered.add(b);
    }
    const expected = contract.map((op) => `${op.method} ${op.path} ${op.operationId}`);
    expect(expected.length).toBeGreaterThan(0);
    expect([...rendered].sort()).toEqual(expected.sort());
  });

  it('the filter finds an operation by its operationId, not only by its tag or path', async () => {
    // "/messages" is part of many paths; the operationId names one operation.
    expect(filtered('/messages').length).toBeGreaterThan(5);
    await showOperations(page, 'send-message');
    const blocks = await page
      .locator('.opblock')
      .evaluateAll((all) => all.map((b) => b.querySelector('.opblock-summary-operation-id')?.textContent));
    expect(blocks).toEqual(['send-message']);
  });

  it('offers /api/v1 of the address the page was opened at as the target of "try it"', async () => {
    const servers = await page.locator('.servers select option').allTextContents();
    expect(servers.map((s) => s.trim())).toEqual(['/api/v1 - This Parley server']);
  });

  it("shows an operation's parameters, responses and example", async () => {
    const op = contract.find((o) => o.operationId === 'get-messages')!;
    const block = await expand(page, op);
    const params = await block.locator('.parameters .parameter__name').allTextContents();
    // A required parameter's name is followed by "*" in the table.
    expect(params.map((p) => p.replace(/\s*\*$/, '').trim()).sort()).toEqual([...op.parameters].sort());
    const statuses = await block.locator('.responses-table .response .response-col_status').allTextContents();
    expect(statuses.map((s) => s.trim())).toEqual(op.responses);
    // The 200 response's example body, as the contract gives it.
    const example = await block.locator('.responses-table .response').first().locator('pre.microlight').first().textContent();
    expect(JSON.parse(example ?? '')).toMatchObject({ result: 'success', messages: expect.any(Array) });
  });

  it('"try it" without credentials reaches the server: GET /server_settings answers 200', async () => {
    const res = await tryIt(page, operation('get-server-settings'));
    expect(res.url).toBe(`${server.url}/api/v1/server_settings`);
    expect(res.status).toBe('200');
    expect(JSON.parse(res.body)).toMatchObject({ result: 'success', realm_url: expect.any(String) });
  });

  it('"try it" with the demo owner\'s API key: GET /users/me is 401 before authorizing, 200 after', async () => {
    const before = await tryIt(page, operation('get-own-user'));
    expect(before.status).toBe('401');

    await page.locator('.auth-wrapper .authorize').click();
    const dialog = page.locator('.dialog-ux .modal-ux');
    await dialog.locator('input[type=text]').fill(server.owner.email);
    await dialog.locator('input[type=password]').fill(server.owner.apiKey);
    await dialog.locator('button.authorize').click();
    await dialog.locator('button.btn-done').click();

    const after = await tryIt(page, operation('get-own-user'));
    expect(after.status).toBe('200');
    expect(JSON.parse(after.body)).toMatchObject({ result: 'success', email: server.owner.email });
  });

  describe('"try it" of each GET operation and of POST /messages, the form as the page fills it, as the demo owner', () => {
    beforeAll(async () => {
      // What the demo organization lacks and a user's first steps make: presence data
      // (GET /users/{user_id_or_email}/presence), and an uploaded avatar, organization icon
      // and logos. The Gravatar images every demo user and organization start with are on
      // another site, where the page may not connect (connect-src 'self', and a server may
      // have no way out): GET /avatar/{id}, GET /realm/icon and GET /realm/logo redirect there,
      // and only an image this server holds can be followed.
      await api(server, 'POST', '/users/me/presence', new URLSearchParams({ status: 'active' }));
      const png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#3a7' } })
        .png()
        .toBuffer();
      const avatar = new FormData();
      avatar.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'avatar.png');
      await api(server, 'POST', '/users/me/avatar', avatar);
      const icon = new FormData();
      icon.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'icon.png');
      await api(server, 'POST', '/realm/icon', icon);
      for (const night of ['false', 'true']) {
        const logo = new FormData();
        logo.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'logo.png');
        logo.append('night', night);
        await api(server, 'POST', '/realm/logo', logo);
      }
    });

    // By tag, so that the page's filter shows few operations at a time (it re-renders every shown one on each change).
    const tried = contract
      .filter((op) => op.method === 'get' || op.operationId === 'send-message')
      .sort((a, b) => a.tag.localeCompare(b.tag) || a.path.localeCompare(b.path));

    it.each(tried.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op] as const))('%s', async (_name, op) => {
      const sent = op.method === 'get' ? null : page.waitForRequest((r) => r.url().endsWith(`/api/v1${op.path}`) && r.method() !== 'GET');
      const res = await tryIt(page, op);
      const unreachable = UNREACHABLE_EXAMPLES[op.operationId];
      if (unreachable) {
        expect([res.status, JSON.parse(res.body)]).toEqual([unreachable.status, expect.objectContaining(unreachable.body)]);
        return;
      }
      // The body is in the failure message: the Zulip error says what the page sent wrong.
      expect(`${res.status} ${res.body}`).toMatch(/^2\d\d /);
      if (res.body.startsWith('{')) expect(JSON.parse(res.body)).toMatchObject({ result: 'success' });
      if (sent) {
        // POST /messages: the fields of the contract's example and no other (no deprecated `subject`, no empty `queue_id`).
        const fields = new URLSearchParams((await sent).postData() ?? '');
        expect([...fields.keys()].sort()).toEqual(['content', 'to', 'topic', 'type']);
      }
    });
  });

  it('"try it" from the page opened at http://localhost:PORT reaches the server there', async () => {
    const elsewhere: string[] = [];
    const url = server.url.replace('//127.0.0.1:', '//localhost:');
    const other = await openDocs(browser, url, elsewhere);
    try {
      const res = await tryIt(other, operation('get-server-settings'));
      expect([res.url, res.status]).toEqual([`${url}/api/v1/server_settings`, '200']);
      expect(JSON.parse(res.body)).toMatchObject({ result: 'success' });
      expect(elsewhere).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('loaded nothing from elsewhere, broke no CSP rule and logged no error', () => {
    expect(problems).toEqual([]);
  });

  function operation(operationId: string): ContractOperation {
    return contract.find((op) => op.operationId === operationId)!;
  }
});

/**
 * A new page showing the reference at `origin`, its operations listed.
 * Console errors, page errors, CSP violations and requests to any other
 * origin go to `problems`.
 */
async function openDocs(browser: Browser, origin: string, problems: string[]): Promise<Page> {
  const page = await browser.newPage();
  watchPage(page, origin, problems, isTryItStatus);
  await page.goto(`${origin}/api/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
  return page;
}

/** Chromium logs every error status a page's request gets: those of "try it" are what the tests provoke and check. */
function isTryItStatus(text: string, url: string): boolean {
  return /the server responded with a status of 4\d\d/.test(text) && /\/api\/v1\/(?!openapi\.)/.test(url);
}

/** A request of the demo owner's, outside the page. */
async function api(server: ServerProcess, method: string, apiPath: string, body: URLSearchParams | FormData): Promise<void> {
  const authorization = `Basic ${Buffer.from(`${server.owner.email}:${server.owner.apiKey}`).toString('base64')}`;
  const res = await fetch(`${server.url}/api/v1${apiPath}`, { method, headers: { authorization }, body });
  if (!res.ok) throw new Error(`${method} ${apiPath}: ${res.status} ${await res.text()}`);
}

/** Every operation of dist/openapi.bundled.json, the document the server serves (read once). */
function contractOperations(): ContractOperation[] {
  operations ??= readContractOperations();
  return operations;
}

function readContractOperations(): ContractOperation[] {
  type Op = {
    operationId: string;
    tags: string[];
    parameters?: Array<{ name?: string; $ref?: string }>;
    responses: Record<string, unknown>;
  };
  type Doc = { paths: Record<string, Record<string, Op | undefined>> };
  const doc = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'dist', 'openapi.bundled.json'), 'utf8')) as Doc;
  const resolve = (ref: string): { name: string } => {
    let node: unknown = doc;
    for (const part of ref.replace(/^#\//, '').split('/')) {
      node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return node as { name: string };
  };
  const out: ContractOperation[] = [];
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const parameters = (op.parameters ?? []).map((x) => (x.$ref ? resolve(x.$ref).name : x.name!));
      out.push({ method, path: p, operationId: op.operationId, tag: op.tags[0]!, parameters, responses: Object.keys(op.responses) });
    }
  }
  return out;
}

/**
 * The operation's block, opened, the page's filter set to the operation's
 * operationId (Swagger UI re-renders every shown operation on each change,
 * so the fewer shown the faster each step).
 */
async function expand(page: Page, op: ContractOperation): Promise<Locator> {
  await showOperations(page, op.operationId);
  const block = page
    .locator('.opblock')
    .filter({ has: page.locator('.opblock-summary-operation-id', { hasText: new RegExp(`^${op.operationId}$`) }) });
  if (!(await block.locator('.opblock-body').isVisible())) await block.locator('.opblock-summary-control').click();
  await block.locator('.opblock-body').waitFor();
  return block;
}

/** The operations the page's filter shows for a phrase: a tag's whole list when its name has it, else those whose path or operationId has it. */
function filtered(phrase: string): ContractOperation[] {
  const has = (text: string): boolean => text.toLowerCase().includes(phrase.toLowerCase());
  return contractOperations().filter((o) => has(o.tag) || has(o.path) || has(o.operationId));
}

/**
 * The page's filter set to a tag's name, once the page shows the tags it
 * selects (those whose name or one of whose operations has it). The page
 * applies the filter on a later render: a click before it lands on a block
 * about to be replaced. It is first set to a phrase nothing matches, so
 * that the filtered page cannot be mistaken for the page before: with 150
 * rows or more (tags and operations) Swagger UI renders the unfiltered list
 * virtualised, only the rows in view, which may be the very rows the filter
 * selects.
 */
async function showTag(page: Page, tag: string): Promise<void> {
  const filter = page.locator('.operation-filter-input');
  if ((await filter.inputValue()) === tag) return;
  await filter.fill('no operation has this name');
  await page.locator('.opblock-tag').first().waitFor({ state: 'detached' });
  await filter.fill(tag);
  const tags = new Set(filtered(tag).map((o) => o.tag)).size;
  // A function, not a string: the page's Content-Security-Policy allows no eval.
  type PageGlobals = { document: { querySelectorAll(selector: string): { length: number } } };
  await page.waitForFunction((n) => (globalThis as unknown as PageGlobals).document.querySelectorAll('.opblock-tag').length === n, tags);
}

/**
 * The page's filter set to a phrase, once the page shows exactly the
 * operations `filtered` names: a list of a few operations is never
 * virtualised, and no two phrases used here select the same ones, so the
 * page before the change cannot pass for the page after it.
 */
async function showOperations(page: Page, phrase: string): Promise<void> {
  const filter = page.locator('.operation-filter-input');
  if ((await filter.inputValue()) === phrase) return;
  await filter.fill(phrase);
  const expected = filtered(phrase)
    .map((o) => o.operationId)
    .sort()
    .join(' ');
  type PageGlobals = { document: { querySelectorAll(selector: string): ArrayLike<{ textContent: string | null }> } };
  await page.waitForFunction(
    (want) =>
      Array.from(
        (globalThis as unknown as PageGlobals).document.querySelectorAll('.opblock-summary-operation-id'),
        (e) => e.textContent ?? '',
      )
        .sort()
        .join(' ') === want,
    expected,
  );
}

/**
 * Opens the operation, presses "Try it out" (once) and "Execute", reads
 * what the page shows of the live response.
 */
async function tryIt(page: Page, op: ContractOperation): Promise<{ url: string; status: string; body: string }> {
  const block = await expand(page, op);
  const tryOut = block.locator('button.try-out__btn');
  if ((await tryOut.textContent())?.trim() === 'Try it out') await tryOut.click();
  const live = block.locator('.live-responses-table');
  // The answer of an earlier execution is cleared first, so the one read below is new.
  const clear = block.locator('button.btn-clear');
  if (await clear.isVisible()) {
    await clear.click();
    await live.waitFor({ state: 'detached' });
  }
  await block.locator('button.execute').click();
  await live.locator('.response .response-col_status').first().waitFor({ timeout: 30_000 });
  // An image (an avatar) is shown as one, not as text.
  const text = live.locator('.response .response-col_description pre.microlight').first();
  const res = {
    url: ((await block.locator('.request-url pre').textContent()) ?? '').trim(),
    // The status, without the "Undocumented" beside one the contract does not list (200 after a followed 302).
    status: /^\d*/.exec(((await live.locator('.response .response-col_status').first().textContent()) ?? '').trim())![0],
    body: (await text.count()) ? ((await text.textContent()) ?? '').trim() : '',
  };
  // Left open: the next operation's filter hides it, and an open block reopened later is read as it is.
  return res;
}

/** An executable Chromium: CHROMIUM_PATH, else chromium or chromium-browser on PATH. */
