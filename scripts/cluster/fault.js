// The cluster fault test (scripts/cluster/fault.sh runs it on a fresh cluster): load through
// HAProxy while, one after another, a Parley node, the Galera writer and Redis are killed
// (SIGKILL) and started again. Then checks that nothing acknowledged was lost or delivered
// twice, and that the service answered again within 5 s of each kill. Exits 1 on any failure.
//
// The clients behave like Zulip's:
// - a long-polling client that gets BAD_EVENT_QUEUE_ID registers again (with backoff while the
//   service is away) and then fetches what it missed with GET /messages, from the last message
//   id it saw; it merges what it fetched by message id, like a Zulip client's message store.
//   It also re-reads the 100 messages before that id: ids are allocated when a message is
//   inserted, not when it commits, so a message with a smaller id can commit after a larger one;
// - a send that certainly did not apply (Parley's 503 "database unavailable": the transaction
//   was rolled back; a 429) is retried; a send whose outcome is unknown (the connection died
//   after the request went out: HAProxy's 502/504, a network error, or Parley's 503 "may or
//   may not have been saved") is checked first — the client looks for its
//   message (each carries a unique token) among its own recent messages and sends again only
//   if it is not there. Zulip clients dedupe through the local_id echoed to their own queue;
//   a client without a queue has to look. How many unknown outcomes had in fact been saved
//   (the duplicates a blind retry would have made) is printed.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const mysql = require('mysql2/promise');

const CLUSTER_DIR = process.env.CLUSTER_DIR;
const CLUSTER_PORT = Number(process.env.CLUSTER_PORT);
const SITE = `http://127.0.0.1:${CLUSTER_PORT}`;
const DEMO_PASSWORD = 'parley-demo-password';
const RUN = Date.now().toString(36);
// How long the load runs before the first fault, after each kill before the restart, and after
// each restart before the next fault; each sender's cap on messages (the load is bounded).
const WARMUP_MS = Number(process.env.FAULT_WARMUP_MS ?? 5000);
const DOWN_MS = Number(process.env.FAULT_DOWN_MS ?? 6000);
const SETTLE_MS = Number(process.env.FAULT_SETTLE_MS ?? 6000);
const SEND_EVERY_MS = Number(process.env.FAULT_SEND_EVERY_MS ?? 100);
const MAX_SENDS = Number(process.env.FAULT_MAX_SENDS ?? 1500);
const RECOVERY_LIMIT_S = 5;
const FAULTS = ['parley-2', 'galera-1', 'redis'];

const t0 = Date.now();
const now = () => Date.now();
const secs = (ms) => (ms / 1000).toFixed(1);
const log = (msg) => console.log(`[fault ${secs(now() - t0).padStart(5)}s] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const backoff = (n) => Math.min(2000, 100 * 2 ** n) * (0.5 + Math.random() / 2);

// --- errors, counted per fault window ---------------------------------------------------------
let window = 'warm-up';
const windows = new Map([['warm-up', newWindow()]]);
function newWindow() {
  return { errors: new Map(), requests: 0, reRegistrations: 0, status500: 0 };
}
function countRequest() {
  windows.get(window).requests++;
}
function countError(what) {
  const w = windows.get(window);
  w.errors.set(what, (w.errors.get(what) ?? 0) + 1);
  if (/^\w+ 500/.test(what)) w.status500++;
}

// --- HTTP -------------------------------------------------------------------------------------
/** One request through HAProxy; never throws: a network failure is `{status: 0}`. */
async function api(user, method, route, { fields, query, timeoutMs = 20000 } = {}) {
  const url = new URL(`${SITE}/api/v1${route}`);
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, String(v));
  const init = { method, headers: {}, signal: globalThis.AbortSignal.timeout(timeoutMs) };
  if (user) init.headers.Authorization = 'Basic ' + Buffer.from(`${user.email}:${user.key}`).toString('base64');
  if (fields) init.body = new URLSearchParams(fields);
  countRequest();
  try {
    const res = await fetch(url, init);
    const text = await res.text();
    let body = {};
    try {
      body = JSON.parse(text);
    } catch {
      body = { raw: text.slice(0, 200) };
    }
    if (res.status !== 200) {
      const outcome = /may or may not/.test(body.msg ?? '') ? ' (commit outcome unknown)' : '';
      countError(`${method} ${res.status}${body.code ? ' ' + body.code : ''}${outcome}`);
    }
    return { status: res.status, body };
  } catch (err) {
    countError(`${method} network ${err.cause?.code ?? err.name}`);
    return { status: 0, body: { error: String(err.cause?.code ?? err.name) } };
  }
}
const unknownOutcome = (r) =>
  r.status === 0 || r.status === 502 || r.status === 504 || (r.status === 503 && /may or may not/.test(r.body.msg ?? ''));
const retryable = (r) => r.status === 503 || r.status === 429;

// --- users ------------------------------------------------------------------------------------
async function login(email) {
  const r = await api(null, 'POST', '/fetch_api_key', { fields: { username: email, password: DEMO_PASSWORD } });
  if (r.status !== 200) throw new Error(`fetch_api_key ${email}: ${JSON.stringify(r.body)}`);
  const user = { email, key: r.body.api_key, id: r.body.user_id };
  return user;
}

// --- senders ----------------------------------------------------------------------------------
const acked = new Map(); // message id -> {token, sender, dmTo}
const ackTimes = []; // when each send was acknowledged (all senders together)
const unknown = { total: 0, foundSaved: 0, resent: 0 };
// Saved sends whose request was cut with no answer from Parley (a network error, HAProxy's
// 502/504): the node may have died after COMMIT and before appending the send's events to Redis,
// the one window docs/deployment.md leaves open (Zulip has it too). Such a message is stored (the
// Galera checks cover it) but may never reach another client's queue, so those clients are not
// held to it; how many still got it by event is printed. A 503 "may or may not" comes from a live
// node, which publishes a committed send's events: those stay under every check.
const cutAndSaved = new Set();
let stopping = false;

async function findOwn(user, token) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const r = await api(user, 'GET', '/messages', {
      query: {
        anchor: 'newest',
        num_before: 100,
        num_after: 0,
        narrow: JSON.stringify([{ operator: 'sender', operand: user.id }]),
        apply_markdown: 'false',
      },
    });
    if (r.status === 200) return r.body.messages.find((m) => m.content.includes(token));
    await sleep(backoff(attempt));
  }
  throw new Error(`${user.email} could not look up its own messages`);
}

async function sender(user, dmTo) {
  for (let n = 0; n < MAX_SENDS && !stopping; n++) {
    const dm = n % 5 === 4;
    const token = `fault-${RUN}-${user.id}-${n}`;
    const fields = dm
      ? { type: 'direct', to: JSON.stringify([dmTo.id]), content: token }
      : { type: 'stream', to: 'general', topic: `fault ${user.id}`, content: token };
    for (let attempt = 0; ; attempt++) {
      const r = await api(user, 'POST', '/messages', { fields });
      if (r.status === 200) {
        acked.set(r.body.id, { token, sender: user.id, dmTo: dm ? dmTo.id : null });
        ackTimes.push(now());
        break;
      }
      if (unknownOutcome(r)) {
        unknown.total++;
        await sleep(1000);
        const found = await findOwn(user, token);
        if (found) {
          unknown.foundSaved++;
          acked.set(found.id, { token, sender: user.id, dmTo: dm ? dmTo.id : null });
          if (r.status !== 503) cutAndSaved.add(found.id);
          ackTimes.push(now());
          break;
        }
        unknown.resent++;
        continue;
      }
      if (retryable(r)) {
        await sleep(backoff(attempt));
        continue;
      }
      throw new Error(`send by ${user.email} failed: ${r.status} ${JSON.stringify(r.body)}`);
    }
    await sleep(SEND_EVERY_MS);
  }
}

// --- fetchers ---------------------------------------------------------------------------------
const fetched = { ok: 0, failed: 0 };
async function fetcher(user) {
  while (!stopping) {
    const r = await api(user, 'GET', '/messages', {
      query: { anchor: 'newest', num_before: 100, num_after: 0, narrow: JSON.stringify([{ operator: 'channel', operand: 'general' }]) },
    });
    if (r.status === 200) fetched.ok++;
    else fetched.failed++;
    await sleep(200);
  }
}

// --- long-polling recipients ------------------------------------------------------------------
class Poller {
  constructor(user) {
    this.user = user;
    this.byEvent = new Set();
    this.byFetch = new Set();
    this.eventDuplicates = [];
    this.registrations = 0;
    this.lastSeen = -1;
    this.done = false;
  }

  see(id) {
    if (id > this.lastSeen) this.lastSeen = id;
  }

  async register() {
    for (let attempt = 0; ; attempt++) {
      const r = await api(this.user, 'POST', '/register', { fields: { event_types: '["message"]' } });
      if (r.status === 200) {
        this.registrations++;
        this.queue = { id: r.body.queue_id, last: r.body.last_event_id };
        if (this.lastSeen < 0) this.lastSeen = r.body.max_message_id;
        return;
      }
      await sleep(backoff(attempt));
    }
  }

  /** After registering again: what was sent while the client had no queue. */
  async catchUp() {
    // The first page includes the anchor (the last message seen) and the 100 before it; the
    // next pages start after the newest message fetched.
    let query = { anchor: this.lastSeen, num_before: 100, num_after: 1000, apply_markdown: 'false' };
    for (let attempt = 0; ;) {
      const r = await api(this.user, 'GET', '/messages', { query });
      if (r.status >= 400 && r.status < 500) throw new Error(`GET /messages: ${r.status} ${JSON.stringify(r.body)}`);
      if (r.status !== 200) {
        await sleep(backoff(attempt++));
        continue;
      }
      for (const m of r.body.messages) {
        if (!this.byEvent.has(m.id)) this.byFetch.add(m.id);
        this.see(m.id);
      }
      if (r.body.found_newest) return;
      query = { anchor: this.lastSeen, include_anchor: 'false', num_before: 0, num_after: 1000, apply_markdown: 'false' };
    }
  }

  async run() {
    if (!this.queue) await this.register();
    let failures = 0;
    while (!this.done) {
      const r = await api(this.user, 'GET', '/events', {
        query: { queue_id: this.queue.id, last_event_id: this.queue.last },
        timeoutMs: 75000,
      });
      if (r.status === 200) {
        failures = 0;
        for (const e of r.body.events) {
          this.queue.last = Math.max(this.queue.last, e.id);
          if (e.type !== 'message') continue;
          const id = e.message.id;
          if (this.byEvent.has(id)) this.eventDuplicates.push(id);
          this.byEvent.add(id);
          this.byFetch.delete(id);
          this.see(id);
        }
        continue;
      }
      if (r.status === 400 && r.body.code === 'BAD_EVENT_QUEUE_ID') {
        windows.get(window).reRegistrations++;
        await this.register();
        await this.catchUp();
        continue;
      }
      // The node is away (HAProxy's 502/503, a cut connection): the same queue, after a pause.
      await sleep(backoff(failures++));
    }
  }

  received() {
    return new Set([...this.byEvent, ...this.byFetch]);
  }
}

// --- processes --------------------------------------------------------------------------------
const PROGRAM = { parley: 'dist/src/main.js', galera: 'mariadbd', redis: 'redis-server' };
/** SIGKILL to the PID recorded in this cluster's own pids/ directory, if it is still that program. */
function kill9(name) {
  const pid = Number(fs.readFileSync(path.join(CLUSTER_DIR, 'pids', `${name}.pid`), 'utf8').trim());
  const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  if (!cmdline.includes(PROGRAM[name.split('-')[0]])) throw new Error(`${name}: PID ${pid} is not ours (${cmdline})`);
  process.kill(pid, 'SIGKILL');
  return pid;
}

function restart(name) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['scripts/cluster/restart.sh', name], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`restart ${name} exited ${code}`))));
  });
}

/** Probes through HAProxy (a read that reaches the database) until one succeeds. */
async function probeUntilOk(user, since) {
  for (;;) {
    const started = now();
    const r = await api(user, 'GET', '/messages', { query: { anchor: 'newest', num_before: 1, num_after: 0 }, timeoutMs: 10000 });
    if (r.status === 200) return (now() - since) / 1000;
    await sleep(Math.max(0, 100 - (now() - started)));
  }
}

async function fault(name, probeUser) {
  window = name;
  windows.set(name, newWindow());
  const sentBefore = acked.size;
  const at = now();
  const pid = kill9(name);
  log(`kill -9 ${name} (${pid})`);
  const recovery = await probeUntilOk(probeUser, at);
  log(`${name}: a request through HAProxy succeeded ${recovery.toFixed(2)} s after the kill`);
  await sleep(Math.max(0, DOWN_MS - (now() - at)));
  const restarted = now();
  const said = await restart(name);
  log(said);
  await sleep(SETTLE_MS);
  const w = windows.get(name);
  w.recovery = recovery;
  w.restartSeconds = (now() - SETTLE_MS - restarted) / 1000;
  w.sends = acked.size - sentBefore;
  w.seconds = (now() - at) / 1000;
  // The longest stretch without an acknowledged send, from the kill to the end of the settle period.
  const times = [at, ...ackTimes.filter((t) => t > at), now()];
  w.longestGap = Math.max(...times.slice(1).map((t, i) => t - times[i])) / 1000;
}

// --- checks -----------------------------------------------------------------------------------
const results = [];
function check(ok, what) {
  results.push(ok);
  console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
}

async function galeraIds(node, ids) {
  const conn = await mysql.createConnection({
    host: '127.0.0.1',
    port: CLUSTER_PORT + 20 + node,
    user: 'parley',
    password: 'parley',
    database: 'parley',
  });
  try {
    // Causal reads: the node applies every write set the cluster committed before it answers.
    await conn.query('SET SESSION wsrep_sync_wait = 1');
    const [rows] = await conn.query('SELECT id FROM messages WHERE id IN (?)', [ids]);
    const [dups] = await conn.query(
      'SELECT content, COUNT(*) AS n FROM messages WHERE content LIKE ? GROUP BY content HAVING COUNT(*) > 1',
      [`fault-${RUN}-%`],
    );
    const [[{ n: stored }]] = await conn.query('SELECT COUNT(*) AS n FROM messages WHERE content LIKE ?', [`fault-${RUN}-%`]);
    return { present: new Set(rows.map((r) => r.id)), duplicates: dups.length, stored: Number(stored) };
  } finally {
    await conn.end();
  }
}

async function main() {
  const [owner, admin, moderator, member, member2, guest] = await Promise.all(
    ['olivia', 'adam', 'mona', 'max', 'mia', 'gus'].map((n) => login(`${n}@example.com`)),
  );
  // Recipients long-poll first, so every message of the run is addressed to a live client.
  const pollers = [member, member2, guest, owner].map((u) => new Poller(u));
  // Half of the queues on each node, so that killing a node takes some of them with it.
  for (const [i, p] of pollers.entries()) {
    const node = `p${(i % 2) + 1}`;
    for (let tries = 0; ; tries++) {
      await p.register();
      if (p.queue.id.startsWith(`${node}:`)) break;
      if (tries === 10) throw new Error(`no queue of ${p.user.email} lands on ${node}`);
      await api(p.user, 'DELETE', '/events', { fields: { queue_id: p.queue.id } });
    }
  }
  const polling = pollers.map((p) => {
    p.registrations = 0;
    return p.run();
  });
  log(`${pollers.length} long-polling clients registered; 3 senders and 2 fetchers start`);
  const senders = [owner, admin, moderator].map((u) => sender(u, member));
  const fetchers = [member2, guest].map((u) => fetcher(u));
  await sleep(WARMUP_MS);

  for (const name of FAULTS) await fault(name, admin);
  window = 'drain';
  windows.set('drain', newWindow());
  stopping = true;
  await Promise.all([...senders, ...fetchers]);
  log(`load stopped: ${acked.size} sends acknowledged`);

  // Every acknowledged message reaches each recipient's client, by event or by the fetch after
  // registering again: wait for the last events (up to 15 s).
  const addressedTo = (p) =>
    [...acked.entries()].filter(([, m]) => m.dmTo === null || m.dmTo === p.user.id || m.sender === p.user.id).map(([id]) => id);
  const expectedFor = (p) => addressedTo(p).filter((id) => !cutAndSaved.has(id));
  const deadline = now() + 15000;
  while (now() < deadline && pollers.some((p) => expectedFor(p).some((id) => !p.received().has(id)))) await sleep(200);
  for (const p of pollers) p.done = true;

  console.log('');
  console.log(`figures (${FAULTS.length} faults; the whole run ${secs(now() - t0)} s):`);
  console.log(`  sends acknowledged: ${acked.size} (${[...acked.values()].filter((m) => m.dmTo).length} direct messages)`);
  console.log(
    `  unknown send outcomes: ${unknown.total}; of these already saved (a blind retry would have duplicated them): ` +
      `${unknown.foundSaved}; not saved, sent again: ${unknown.resent}`,
  );
  if (cutAndSaved.size) {
    const reached = [...cutAndSaved].filter((id) => pollers.every((p) => !addressedTo(p).includes(id) || p.received().has(id))).length;
    console.log(
      `  saved although their request was cut (the node may have died between COMMIT and the events): ${cutAndSaved.size}; ` +
        `reached every addressee's client anyway: ${reached}`,
    );
  }
  console.log(`  GET /messages fetchers: ${fetched.ok} ok, ${fetched.failed} failed`);
  for (const [name, w] of windows) {
    const errs = [...w.errors.entries()].map(([k, v]) => `${k} x${v}`).join(', ') || 'none';
    const extra =
      w.recovery === undefined
        ? ''
        : ` answered again after ${w.recovery.toFixed(2)} s, restart ready in ${w.restartSeconds.toFixed(1)} s, longest time without an acked send ${w.longestGap.toFixed(2)} s, ${w.sends} sends acked in the ${w.seconds.toFixed(0)} s window,`;
    console.log(`  ${name}:${extra} ${w.requests} requests, failed: ${errs}; queues registered again: ${w.reRegistrations}`);
  }
  for (const p of pollers) {
    console.log(
      `  ${p.user.email}: ${p.byEvent.size} by event, ${p.byFetch.size} by GET /messages after registering again (${p.registrations} re-registrations)`,
    );
  }
  console.log('');

  const ids = [...acked.keys()];
  check(ids.length > 0, `${ids.length} sends acknowledged`);
  for (const node of [1, 2, 3]) {
    const g = await galeraIds(node, ids);
    const missing = ids.filter((id) => !g.present.has(id));
    check(
      missing.length === 0,
      `galera-${node} (port ${CLUSTER_PORT + 20 + node}) holds all ${ids.length} acknowledged messages${missing.length ? `; missing ${missing.slice(0, 10)}` : ''}`,
    );
    check(g.duplicates === 0, `galera-${node}: no message stored twice (${g.stored} stored for ${ids.length} acknowledged)`);
  }
  for (const p of pollers) {
    const got = p.received();
    const missing = expectedFor(p).filter((id) => !got.has(id));
    check(
      missing.length === 0,
      `${p.user.email} got all ${expectedFor(p).length} messages addressed to it${missing.length ? `; missing ${missing.slice(0, 10)}` : ''}`,
    );
    check(
      p.eventDuplicates.length === 0,
      `${p.user.email} saw no message id twice${p.eventDuplicates.length ? `: ${p.eventDuplicates.slice(0, 10)}` : ''}`,
    );
  }
  for (const name of FAULTS) {
    const w = windows.get(name);
    check(
      w.recovery <= RECOVERY_LIMIT_S,
      `after kill -9 ${name} the service answered within ${RECOVERY_LIMIT_S} s (${w.recovery.toFixed(2)} s)`,
    );
  }
  const killed = windows.get('parley-2');
  check(killed.reRegistrations > 0, `the clients whose queues were on parley-2 registered again (${killed.reRegistrations})`);
  const fiveHundreds = [...windows.values()].reduce((s, w) => s + w.status500, 0);
  check(fiveHundreds === 0, `no 500 answer (${fiveHundreds})`);
  await Promise.race([Promise.all(polling), sleep(1000)]);
  process.exit(results.every(Boolean) ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
