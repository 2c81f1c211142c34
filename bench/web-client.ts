/**
 * The web client (web/) in Chromium against a dataset (bench/README.md, "The web client"):
 * the first screen's JavaScript gzipped, navigation → the first 100 messages drawn (cold),
 * switching channels, and scrolling 10,000 loaded messages. Parley runs as its own process
 * (dist/src/main.js) serving web/dist; the browser is logged in with sessions made in-process
 * by the session action. Writes bench/results/<date>-web-client.md.
 *
 *   BENCH_WEB_LOADS (5) cold loads, BENCH_WEB_SWITCHES (12) switches, BENCH_WEB_SCROLL (10000) messages,
 *   BENCH_CHROMIUM (/usr/bin/chromium), BENCH_WEB_RESULTS=0 prints only.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { doCreateSession, doEndSession } from '../src/actions/sessions';
import { loadConfig } from '../src/config';
import { createContext } from '../src/context';
import { createDb } from '../src/db/connection';
import { readManifest, resolveTarget, ROOT, type Target } from './lib/dataset';
import { startBenchServer, type BenchServer } from './lib/server-process';
import { runMain } from './lib/run-main';

const env = process.env;
const LOADS = Number(env.BENCH_WEB_LOADS ?? 5);
const SWITCHES = Number(env.BENCH_WEB_SWITCHES ?? 12);
const SCROLL_MESSAGES = Number(env.BENCH_WEB_SCROLL ?? 10_000);
const CHROMIUM = env.BENCH_CHROMIUM ?? '/usr/bin/chromium';
const MARK = 'parley:list-drawn';

const TARGETS = { jsKb: 200, firstMs: 1000, switchMs: 200, longFrames: 0 };

const median = (xs: number[]) => pct(xs, 50);
function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}
const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : '–');
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

// ------------------------------------------------------------ 1. the first screen's bytes

interface Asset {
  file: string;
  kind: 'script' | 'modulepreload' | 'stylesheet';
  bytes: number;
  gzip: number;
}

/** Builds web/ and sums what index.html makes the browser fetch before it can draw: its scripts, module preloads, CSS. */
function firstScreenAssets(): Asset[] {
  execFileSync(path.join(ROOT, 'node_modules', '.bin', 'vite'), ['build', 'web', '--logLevel', 'warn'], { cwd: ROOT, stdio: 'inherit' });
  const dist = path.join(ROOT, 'web', 'dist');
  const html = fs.readFileSync(path.join(dist, 'index.html'), 'utf8');
  const assets: Asset[] = [];
  const add = (url: string, kind: Asset['kind']) => {
    const body = fs.readFileSync(path.join(dist, url.replace(/^\/static\//, '')));
    assets.push({ file: url, kind, bytes: body.length, gzip: zlib.gzipSync(body).length });
  };
  for (const m of html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)) add(m[1]!, 'script');
  for (const m of html.matchAll(/<link\b[^>]*>/g)) {
    const rel = /\brel="([^"]+)"/.exec(m[0])?.[1];
    const href = /\bhref="([^"]+)"/.exec(m[0])?.[1];
    if (href && rel === 'modulepreload') add(href, 'modulepreload');
    if (href && rel === 'stylesheet') add(href, 'stylesheet');
  }
  return assets;
}

// ------------------------------------------------------------ the dataset's user and channels

interface Channel {
  id: number;
  name: string;
  messages: number;
}

/** The user's channels by their messages, busiest first. */
async function channelsOf(target: Target, userId: number): Promise<Channel[]> {
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    // Counted in messages (one index range each), not the user's rows: their join reads the user's whole history.
    const rows = (await db('subscriptions as s')
      .join('channels as c', 'c.recipient_id', 's.recipient_id')
      .join('messages as m', 'm.recipient_id', 'c.recipient_id')
      .where({ 's.user_id': userId, 's.active': true })
      .groupBy('c.id', 'c.name')
      .select('c.id', 'c.name')
      .count({ n: '*' })) as { id: number; name: string; n: number | string }[];
    return rows.map((r) => ({ id: Number(r.id), name: String(r.name), messages: Number(r.n) })).sort((a, b) => b.messages - a.messages);
  } finally {
    await db.destroy();
  }
}

/** Sessions for the user, through the session action, as /login/ would make them; ended at the end of the run. */
async function makeSessions(target: Target, userId: number, realmId: number, n: number) {
  const config = loadConfig({ ...env, DATA_DIR: target.dataDir, DATABASE_URL: target.databaseUrl ?? '', LOG_LEVEL: 'silent' });
  const db = createDb({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  const ctx = createContext(db, config);
  const sessions: Awaited<ReturnType<typeof doCreateSession>>[] = [];
  for (let i = 0; i < n; i++) {
    sessions.push(await doCreateSession(ctx, { id: userId, realm_id: realmId }, { ip: '127.0.0.1', userAgent: 'bench/web-client' }));
  }
  const end = async () => {
    for (const s of sessions) await doEndSession(ctx, s.key);
    ctx.queues.close();
    await db.destroy();
  };
  return { sessions, end };
}

// ------------------------------------------------------------ the browser

const hashOf = (c: Channel) => `#narrow/channel/${c.id}-${encodeURIComponent(c.name).replace(/\./g, '%2E').replace(/%/g, '.')}`;
const keyOf = (c: Channel) => JSON.stringify([['channel', c.id]]);

async function newContext(browser: Browser, base: string, session: { key: string; csrfToken: string }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([
    { name: 'sessionid', value: session.key, url: base, httpOnly: true, sameSite: 'Lax' },
    { name: 'csrftoken', value: session.csrfToken, url: base, sameSite: 'Lax' },
  ]);
  // Reading is not what is measured, and the dataset must stay as generated: flag changes are answered here.
  await context.route('**/json/messages/flags', (route) =>
    route.fulfill({ contentType: 'application/json', body: JSON.stringify({ result: 'success', msg: '', messages: [] }) }),
  );
  if (env.BENCH_WEB_DEBUG) {
    context.on('console', (m) => process.stderr.write(`page: ${m.text()}\n`));
    context.on('requestfinished', (r) => process.stderr.write(`${r.method()} ${r.url().slice(0, 120)} ${JSON.stringify(r.timing())}\n`));
    context.on('response', (r) => {
      if (r.status() >= 400)
        void r.text().then((t) => process.stderr.write(`${r.status()} ${r.url().slice(0, 100)}: ${t.slice(0, 300)}\n`));
    });
    context.on('requestfailed', (r) => process.stderr.write(`failed ${r.url()} ${r.failure()?.errorText}\n`));
  }
  return context;
}

/** Resolves with the mark of `key` newer than `after` (page time, ms). */
function markOf(page: Page, key: string, after: number, timeoutMs = 30_000): Promise<{ startTime: number; messages: number }> {
  // A function, not a string: the page's CSP forbids eval, which a string predicate needs.
  return page
    .waitForFunction(
      ([name, k, t]) => {
        const perf = (globalThis as unknown as { performance: { getEntriesByName(n: string): PageMark[] } }).performance;
        const m = perf.getEntriesByName(name).find((e) => e.startTime > t && e.detail?.narrow === k);
        return m ? { startTime: m.startTime, messages: m.detail?.messages ?? 0 } : null;
      },
      [MARK, key, after] as const,
      { timeout: timeoutMs, polling: 16 },
    )
    .then(async (h) => (await h.jsonValue())!);
}

/** A performance mark as the page holds it (bench/ compiles without the DOM's types). */
interface PageMark {
  startTime: number;
  detail?: { narrow?: string; messages?: number };
}

/** Whether the message list has no fetch in flight. */
function listIdle(page: Page): Promise<unknown> {
  return page.waitForFunction(
    () =>
      (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document
        .querySelector('.message-list')
        ?.getAttribute('aria-busy') === 'false',
    undefined,
    { polling: 16 },
  );
}

interface ColdLoad {
  drawnMs: number;
  messages: number;
  domContentLoaded: number;
  register: { server: number; total: number } | null;
  messagesFetch: { server: number; total: number } | null;
  afterRegister: number;
}

/** One cold load in a new context: navigation start → the mark, and the API calls' times from Resource Timing. */
async function coldLoad(
  browser: Browser,
  base: string,
  session: { key: string; csrfToken: string },
  channel: Channel,
  timeoutMs?: number,
  profileTo?: string,
): Promise<ColdLoad> {
  const context = await newContext(browser, base, session);
  try {
    const page = await context.newPage();
    // BENCH_WEB_PROFILE=file: the page's CPU profile of this load (open it in Chromium's DevTools).
    const cdp = profileTo ? await context.newCDPSession(page) : null;
    if (cdp) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
    }
    await page.goto(`${base}/${hashOf(channel)}`);
    const mark = await markOf(page, keyOf(channel), 0, timeoutMs).catch(async (e: unknown) => {
      await page.screenshot({ path: path.join(ROOT, 'bench', '.data', 'web-client-timeout.png') });
      throw e;
    });
    if (cdp) fs.writeFileSync(profileTo!, JSON.stringify((await cdp.send('Profiler.stop')).profile));
    const timings = (await page.evaluate(`(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const res = performance.getEntriesByType('resource');
      const t = (e) => (e ? { server: e.responseStart - e.requestStart, total: e.responseEnd - e.startTime } : null);
      return {
        domContentLoaded: nav.domContentLoadedEventEnd,
        register: t(res.find((e) => e.name.includes('/json/register'))),
        messagesFetch: t(res.find((e) => e.name.includes('/json/messages?'))),
        // The page's own work on the register answer (state, sidebar) before it asks for the messages.
        afterRegister:
          res.find((e) => e.name.includes('/json/messages?')).startTime - res.find((e) => e.name.includes('/json/register')).responseEnd,
      };
    })()`)) as Omit<ColdLoad, 'drawnMs' | 'messages'>;
    return { drawnMs: mark.startTime, messages: mark.messages, ...timings };
  } finally {
    await context.close();
  }
}

interface Switches {
  fresh: number[];
  cached: number[];
  messages: number[];
}

/** From the busy channel's page: `SWITCHES` channels never opened in it, then revisits of some of them (kept windows). */
async function switches(
  browser: Browser,
  base: string,
  session: { key: string; csrfToken: string },
  first: Channel,
  others: Channel[],
): Promise<Switches> {
  const context = await newContext(browser, base, session);
  const out: Switches = { fresh: [], cached: [], messages: [] };
  try {
    const page = await context.newPage();
    await page.goto(`${base}/${hashOf(first)}`);
    await markOf(page, keyOf(first), 0);
    const go = async (c: Channel) => {
      // Let the previous narrow's follow-up work (mark-as-read, measuring rows) settle as a reader would.
      await page.waitForTimeout(300);
      const t0 = (await page.evaluate(
        `(() => { const t = performance.now(); location.hash = ${JSON.stringify(hashOf(c))}; return t; })()`,
      )) as number;
      const m = await markOf(page, keyOf(c), t0).catch(async (e: unknown) => {
        await page.screenshot({ path: path.join(ROOT, 'bench', '.data', 'web-client-timeout.png') });
        throw new Error(`no mark for #${c.name} (${c.id}): ${String(e)}`);
      });
      return { ms: m.startTime - t0, messages: m.messages };
    };
    const fresh = others.slice(0, SWITCHES);
    for (const c of fresh) {
      const r = await go(c);
      out.fresh.push(r.ms);
      out.messages.push(r.messages);
    }
    // The client keeps 12 windows: the ten opened before the current one are revisited.
    for (const c of fresh.slice(-11, -1).reverse()) out.cached.push((await go(c)).ms);
  } finally {
    await context.close();
  }
  return out;
}

/** In the page: top to bottom, one scrollTop step of 400 px a frame (nearly half the 900 px viewport), each frame's time by requestAnimationFrame. */
const SCROLL_THROUGH = `(async () => {
  const el = document.querySelector('.message-list');
  el.scrollTop = 0;
  await new Promise((r) => setTimeout(r, 300));
  const frames = [];
  let maxRows = 0;
  // Chromium's long-animation-frame entries name the scripts of each frame over 50 ms.
  const long = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      long.push({
        ms: Math.round(e.duration),
        blockingMs: Math.round(e.blockingDuration),
        renderMs: e.renderStart ? Math.round(e.startTime + e.duration - e.renderStart) : 0,
        layoutMs: e.styleAndLayoutStart ? Math.round(e.startTime + e.duration - e.styleAndLayoutStart) : 0,
        scripts: e.scripts.map((x) => ({ ms: Math.round(x.duration), what: x.invoker + ' ' + (x.sourceFunctionName || '') + ' ' + (x.sourceURL || '').split('/').pop() + ':' + x.sourceCharPosition })),
      });
    }
  });
  observer.observe({ type: 'long-animation-frame' });
  const step = 400;
  const t0 = performance.now();
  await new Promise((done) => {
    let last = performance.now();
    const tick = (now) => {
      frames.push(now - last);
      last = now;
      maxRows = Math.max(maxRows, el.querySelectorAll('.rows > .row').length);
      if (el.scrollTop + el.clientHeight >= el.scrollHeight - 2 || now - t0 > 60000) return done();
      el.scrollTop += step;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  observer.disconnect();
  return { frames: frames.slice(1), maxRows, seconds: (performance.now() - t0) / 1000, long };
})()`;

interface Scroll {
  loaded: number;
  loadSeconds: number;
  frames: number;
  p50: number;
  p99: number;
  long: number;
  maxRows: number;
  seconds: number;
  /** Chromium's long animation frames during the scroll, with the scripts it names. */
  longFrames: LongFrame[];
}

interface LongFrame {
  ms: number;
  blockingMs: number;
  renderMs: number;
  layoutMs: number;
  scripts: { ms: number; what: string }[];
}

/** Loads `SCROLL_MESSAGES` of the channel by scrolling to either end again and again, then scrolls through them frame by frame. */
async function scroll(browser: Browser, base: string, session: { key: string; csrfToken: string }, channel: Channel): Promise<Scroll> {
  const context = await newContext(browser, base, session);
  const ids = new Set<number>();
  try {
    const page = await context.newPage();
    page.on('response', (r) => {
      if (!r.url().includes('/json/messages?')) return;
      r.json().then(
        (b: { messages?: { id: number }[] }) => b.messages?.forEach((m) => ids.add(m.id)),
        () => undefined,
      );
    });
    await page.goto(`${base}/${hashOf(channel)}`);
    await markOf(page, keyOf(channel), 0);
    const started = Date.now();
    let still = 0;
    // Upwards until the history's start, then downwards: the list opens at the first unread, which
    // may be anywhere in the channel's history.
    let end: 'top' | 'bottom' = 'top';
    while (ids.size < SCROLL_MESSAGES && still < 3) {
      const before = ids.size;
      // At either end the list asks for the next 100; its answer is awaited (and counted by the listener above).
      const answer = page.waitForResponse((r) => r.url().includes('/json/messages?'), { timeout: 5_000 }).catch(() => null);
      await page.evaluate(
        `(el => { el.scrollTop = ${end === 'top' ? '0' : 'el.scrollHeight'}; })(document.querySelector('.message-list'))`,
      );
      await answer;
      await listIdle(page);
      await page.waitForTimeout(20);
      still = ids.size === before ? still + 1 : 0;
      if (still === 3 && end === 'top') [end, still] = ['bottom', 0];
    }
    const loadSeconds = (Date.now() - started) / 1000;
    await page.waitForTimeout(500);
    const r = (await page.evaluate(SCROLL_THROUGH)) as { frames: number[]; maxRows: number; seconds: number; long: LongFrame[] };
    return {
      loaded: ids.size,
      loadSeconds,
      frames: r.frames.length,
      p50: pct(r.frames, 50),
      p99: pct(r.frames, 99),
      long: r.frames.filter((f) => f > 50).length,
      maxRows: r.maxRows,
      seconds: r.seconds,
      longFrames: r.long,
    };
  } finally {
    await context.close();
  }
}

/** GET /api/v1/messages as the page's first fetch asks it, by curl: the server's time with no browser in the way. */
function curlMessages(base: string, email: string, apiKey: string, channel: Channel): number[] {
  const q = new URLSearchParams({
    anchor: 'first_unread',
    num_before: '100',
    num_after: '100',
    narrow: JSON.stringify([{ operator: 'channel', operand: channel.id }]),
    apply_markdown: 'true',
    client_gravatar: 'false',
  });
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const out = execFileSync('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{time_starttransfer}',
      '-u',
      `${email}:${apiKey}`,
      `${base}/api/v1/messages?${q}`,
    ]);
    times.push(Number(out.toString()) * 1000);
  }
  return times.slice(2);
}

// ------------------------------------------------------------ main

async function main(): Promise<void> {
  const target = resolveTarget();
  const manifest = readManifest(target);
  if (!manifest)
    throw new Error(`no dataset in ${target.dir} (make bench BENCH_SCALE=${target.scale.name} BENCH_DB=${target.db} makes it)`);
  const user = manifest.targets.reader;
  const creds = JSON.parse(fs.readFileSync(path.join(target.dir, 'credentials.json'), 'utf8')) as {
    id: number;
    email: string;
    api_key: string;
  }[];
  const apiKey = creds.find((c) => c.id === user.id)!.api_key;

  const loadStart = loadAverage();
  const assets = firstScreenAssets();
  const js = assets.filter((a) => a.kind !== 'stylesheet');
  const css = assets.filter((a) => a.kind === 'stylesheet');
  const jsGzip = js.reduce((s, a) => s + a.gzip, 0);
  const cssGzip = css.reduce((s, a) => s + a.gzip, 0);
  process.stderr.write(`first screen: JS ${kb(jsGzip)} gzipped in ${js.length} file(s), CSS ${kb(cssGzip)}\n`);

  // The server migrates the database at start, as for `make bench`.
  process.stderr.write('starting Parley (migrations applied at start)…\n');
  const server: BenchServer = await startBenchServer({
    dataDir: target.dataDir,
    databaseUrl: target.databaseUrl ?? '',
    env: { LOG_LEVEL: 'warn', NODE_ENV: 'production', WEB_DIST_DIR: env.BENCH_WEB_DIST ?? path.join(ROOT, 'web', 'dist') },
  });
  const base = `http://127.0.0.1:${server.port}`;
  const channels = await channelsOf(target, user.id);
  const [busy, ...others] = channels.filter((c) => c.messages > 0);
  const big = channels.find((c) => c.messages >= SCROLL_MESSAGES) ?? busy!;
  const { sessions, end } = await makeSessions(target, user.id, manifest.realmId, 1);
  const session = sessions[0]!;
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    // One uncounted load warms the server's caches and the database's pages as a running server has them.
    await coldLoad(browser, base, session, busy!, Number(env.BENCH_WEB_WARMUP_TIMEOUT ?? 180_000));
    const loads: ColdLoad[] = [];
    for (let i = 0; i < LOADS; i++) {
      loads.push(await coldLoad(browser, base, session, busy!, undefined, i === LOADS - 1 ? env.BENCH_WEB_PROFILE : undefined));
      process.stderr.write(`cold load ${i + 1}: ${ms(loads.at(-1)!.drawnMs)} (${loads.at(-1)!.messages} messages)\n`);
    }
    const curl = curlMessages(base, user.email, apiKey, busy!);
    const sw = await switches(browser, base, session, busy!, others);
    process.stderr.write(
      `switches: fresh ${sw.fresh.map((x) => x.toFixed(0)).join(' ')}; cached ${sw.cached.map((x) => x.toFixed(0)).join(' ')}\n`,
    );
    const sc = await scroll(browser, base, session, big);
    process.stderr.write(`scroll: ${JSON.stringify(sc)}\n`);

    const first = median(loads.map((l) => l.drawnMs));
    const reg = median(loads.map((l) => l.register?.server ?? NaN));
    const regTotal = median(loads.map((l) => l.register?.total ?? NaN));
    const afterRegister = median(loads.map((l) => l.afterRegister));
    const msgs = median(loads.map((l) => l.messagesFetch?.server ?? NaN));
    const msgsTotal = median(loads.map((l) => l.messagesFetch?.total ?? NaN));
    const dcl = median(loads.map((l) => l.domContentLoaded));
    const curlMs = median(curl);
    const freshMs = median(sw.fresh);
    const cachedMs = median(sw.cached);
    const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
    const date = new Date().toISOString().slice(0, 10);
    const md = [
      `# The web client in Chromium, ${target.scale.name} on ${target.db} (${date})`,
      '',
      `\`node dist/bench/web-client.js\` (\`make bench-web\`; bench/README.md, "The web client"). Code ${codeVersion()}.`,
      `Chromium ${browser.version()} headless (${CHROMIUM}), viewport 1280×900, on this 2-core machine shared by the`,
      'browser, Parley and MariaDB (and whatever else runs on it): absolute times are provisional, compare within a run.',
      `Load average (1 min) at the start ${loadStart}, at the end ${loadAverage()}.`,
      `User ${user.email} (the dataset's reader: ${channels.length} channels), busy channel #${busy!.name} (${busy!.messages.toLocaleString('en')} of its messages).`,
      '',
      '| measure | result | target | verdict |',
      '|---|---|---|---|',
      `| first screen's JavaScript, gzipped (${js.length} file(s)) | ${kb(jsGzip)} (${kb(js.reduce((s, a) => s + a.bytes, 0))} raw) | ≤ ${TARGETS.jsKb} KB | ${verdict(jsGzip <= TARGETS.jsKb * 1024)} |`,
      `| its CSS, gzipped (apart) | ${kb(cssGzip)} | – | – |`,
      `| navigation → first 100 messages drawn, median of ${LOADS} cold loads | ${ms(first)} (each: ${loads.map((l) => l.drawnMs.toFixed(0)).join(', ')}) | ≤ ${TARGETS.firstMs} ms | ${verdict(first <= TARGETS.firstMs)} |`,
      `| switch to a channel not yet opened, median of ${sw.fresh.length} | ${ms(freshMs)} (max ${ms(Math.max(...sw.fresh))}) | ≤ ${TARGETS.switchMs} ms | ${verdict(freshMs <= TARGETS.switchMs)} |`,
      `| switch back to one opened (kept window), median of ${sw.cached.length} | ${ms(cachedMs)} (max ${ms(Math.max(...sw.cached))}) | ≤ ${TARGETS.switchMs} ms | ${verdict(cachedMs <= TARGETS.switchMs)} |`,
      `| scroll through ${sc.loaded.toLocaleString('en')} loaded messages of #${big.name}: frame time p50 / p99 | ${sc.p50.toFixed(1)} / ${sc.p99.toFixed(1)} ms over ${sc.frames} frames (${sc.seconds.toFixed(1)} s) | no frame > 50 ms | ${verdict(sc.long === 0)} (${sc.long} > 50 ms) |`,
      `| rows in the DOM while scrolling (max) | ${sc.maxRows} | small | ${verdict(sc.maxRows < 100)} |`,
      '',
      "## Where the first screen's time goes (medians of the cold loads)",
      '',
      '| part | time |',
      '|---|---|',
      `| DOMContentLoaded | ${ms(dcl)} |`,
      `| POST /json/register: server (request → first byte) / whole | ${ms(reg)} / ${ms(regTotal)} |`,
      `| the page's work on the register answer, until it asks for the messages | ${ms(afterRegister)} |`,
      `| first GET /json/messages (100 on each side of the first unread): server / whole | ${ms(msgs)} / ${ms(msgsTotal)} |`,
      `| the same GET /api/v1/messages by curl (same run, median of 5 after 2) | ${ms(curlMs)} |`,
      `| ratio page's GET / curl's | ${(msgs / curlMs).toFixed(2)} |`,
      '',
      `Loading ${sc.loaded.toLocaleString('en')} messages by scrolling to either end took ${sc.loadSeconds.toFixed(1)} s (100 a fetch).`,
      `Messages on the first screen of each switch: ${sw.messages.join(', ')}.`,
      '',
      `Chromium's long animation frames (over 50 ms) during the scroll: ${sc.longFrames.length}.`,
      ...sc.longFrames.map(
        (f) =>
          `- ${f.ms} ms (blocking ${f.blockingMs}, render ${f.renderMs}, style and layout ${f.layoutMs}): ${f.scripts.map((x) => `${x.what} ${x.ms} ms`).join('; ') || 'no script'}`,
      ),
      '',
      '| first-screen file | kind | bytes | gzipped |',
      '|---|---|---|---|',
      ...assets.map((a) => `| \`${a.file}\` | ${a.kind} | ${a.bytes.toLocaleString('en')} | ${a.gzip.toLocaleString('en')} |`),
      '',
      ...(env.BENCH_NOTE ? [env.BENCH_NOTE, ''] : []),
    ].join('\n');
    process.stdout.write(md + '\n');
    if (env.BENCH_WEB_RESULTS !== '0') {
      const file = path.join(ROOT, 'bench', 'results', `${date}-web-client.md`);
      fs.writeFileSync(file, md);
      process.stderr.write(`wrote ${path.relative(ROOT, file)}\n`);
    }
  } finally {
    await browser.close();
    await end();
    server.child.kill('SIGTERM');
  }
}

/** The machine's 1-minute load average: on 2 shared cores it says how much of a run's time was someone else's. */
function loadAverage(): string {
  try {
    return fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]!;
  } catch {
    return '?';
  }
}

function codeVersion(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }).toString().trim();
  } catch {
    return '(unknown)';
  }
}

runMain(main);
