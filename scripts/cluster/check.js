// Checks a running cluster through HAProxy (scripts/cluster/check.sh runs it):
// queues registered through HAProxy land on every Parley node, a message sent
// through HAProxy reaches the long-polls of all of them, GET and DELETE /events
// reach the queue's own node (query and form body), and how long a message
// takes to reach another node's waiting poll. Exits 1 on any failure.
'use strict';
const fs = require('node:fs');
const { performance } = require('node:perf_hooks');

const zuliprc = fs.readFileSync(process.argv[2], 'utf8');
const field = (name) => zuliprc.match(new RegExp(`^${name}=(.*)$`, 'm'))[1].trim();
const site = field('site');
const auth = 'Basic ' + Buffer.from(`${field('email')}:${field('key')}`).toString('base64');
const nodes = Number(process.argv[3] ?? 2);
const SENDS = Number(process.env.CHECK_SENDS ?? 200);

async function api(method, path, fields, query) {
  const url = new URL(`${site}/api/v1${path}`);
  for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, String(v));
  const init = { method, headers: { Authorization: auth } };
  if (fields) init.body = new URLSearchParams(fields);
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
}

function check(ok, what) {
  if (!ok) {
    console.error(`cluster check FAILED: ${what}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main() {
  // Round robin: registering a few times gives every node a queue.
  const queues = new Map();
  for (let i = 0; i < nodes * 4 && queues.size < nodes; i++) {
    const r = await api('POST', '/register', { event_types: '["message"]' });
    check(r.status === 200, `register through HAProxy (${r.body.queue_id})`);
    const node = r.body.queue_id.split(':')[0];
    if (!queues.has(node)) queues.set(node, { id: r.body.queue_id, last: r.body.last_event_id });
  }
  check(queues.size === nodes, `queues on ${nodes} nodes: ${[...queues.keys()].join(', ')}`);

  // Every node's queue gets the message, whichever node took the POST.
  const polls = [...queues.values()].map((q) => api('GET', '/events', null, { queue_id: q.id, last_event_id: q.last }));
  const sent = await api('POST', '/messages', { type: 'stream', to: 'general', topic: 'cluster check', content: 'hello, every node' });
  check(sent.status === 200, `message ${sent.body.id} sent through HAProxy`);
  const got = await Promise.all(polls);
  for (const [i, r] of got.entries()) {
    const q = [...queues.values()][i];
    const ids = r.body.events?.map((e) => e.message?.id) ?? [];
    check(
      r.status === 200 && ids.includes(sent.body.id),
      `${q.id.split(':')[0]}'s long-poll (through HAProxy) got message ${sent.body.id}`,
    );
    q.last = Math.max(q.last, ...r.body.events.map((e) => e.id));
  }

  // Delivery time to each node's waiting poll, from the moment the send is made.
  const times = [];
  for (let i = 0; i < SENDS; i++) {
    const waiting = [...queues.values()].map((q) =>
      api('GET', '/events', null, { queue_id: q.id, last_event_id: q.last }).then((r) => {
        q.last = Math.max(q.last, ...r.body.events.map((e) => e.id));
        return performance.now();
      }),
    );
    // Let the polls reach their nodes and start waiting before the send.
    await new Promise((r) => setTimeout(r, 20));
    const t0 = performance.now();
    const s = await api('POST', '/messages', { type: 'stream', to: 'general', topic: 'cluster latency', content: `#${i}` });
    if (s.status !== 200) check(false, `send ${i}: ${JSON.stringify(s.body)}`);
    for (const t of await Promise.all(waiting)) times.push(t - t0);
  }
  times.sort((a, b) => a - b);
  console.log(
    `delivery to a waiting poll (${times.length} = ${SENDS} sends x ${nodes} nodes, send start to poll answer, through HAProxy): ` +
      `p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms, max ${times.at(-1).toFixed(1)} ms`,
  );

  // DELETE with the queue id in a form body reaches the queue's node (HAProxy reads the body).
  for (const q of queues.values()) {
    const del = await api('DELETE', '/events', { queue_id: q.id });
    check(del.status === 200, `DELETE /events (form body) removed ${q.id}`);
    const again = await api('GET', '/events', null, { queue_id: q.id, last_event_id: q.last, dont_block: true });
    check(again.status === 400 && again.body.code === 'BAD_EVENT_QUEUE_ID', `${q.id.split(':')[0]} no longer has it`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
