import type { Credential, Manifest } from './dataset';
import type { Reply } from './http';
import { qs } from './http';
import type { Goal } from './goals';
import { fmtInt } from './progress';
import { parseScale } from './scales';

/** One load scenario: a request as some user, checked once before the load. */
export interface Scenario {
  key: string;
  title: string;
  method: 'GET' | 'POST';
  path: string;
  user: Credential | null;
  /** When set, each connection authenticates as the next of these users (many clients rather than one). */
  users?: Credential[];
  form?: Record<string, string>;
  /** Request headers besides the user's key and the form's type (the load sends them; the preflight does not). */
  headers?: Record<string, string>;
  /** Checks a preflight reply and describes it (e.g. "100 msgs"); throws when the scenario would measure an error. */
  check(r: Reply): string;
  /** The performance target the results table checks (bench/lib/goals.ts). */
  goal?: Goal;
  /** A GET whose p99 the report compares with the 10k run's (the "flat" column). */
  flat?: boolean;
  /**
   * Requests per second offered over all connections, paced (lib/paced.ts:
   * latencies count from when each request was due); unset: each connection
   * sends its next request when the last one is answered (the server's saturation).
   */
  rate?: number;
}

const messagesCheck = (expectAtLeast: number) => (r: Reply) => {
  if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
  const n = r.body.messages.length as number;
  if (n < expectAtLeast) throw new Error(`only ${n} messages (expected ${expectAtLeast})`);
  return `${n} msgs`;
};

/** `channel100Members`: subscribers of the 100-subscriber channel (the runner reads them from the database). */
export function scenarios(m: Manifest, creds: Map<number, Credential>, channel100Members: number[] = []): Scenario[] {
  const t = m.targets;
  const cred = (id: number) => creds.get(id)!;
  const reader = cred(t.reader.id);
  const newest = { anchor: 'newest', num_before: 100, num_after: 0 };
  const sendForm = {
    type: 'stream',
    to: String(t.channel100.id),
    topic: 'load test',
    content: 'A benchmark message with **some** markdown and a link https://example.com.',
  };
  const sent = (r: Reply) => {
    if (r.status !== 200 || typeof r.body.id !== 'number') throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    return 'message sent';
  };
  const atLeast = (n: number) => Math.min(100, n);
  const topicsCheck = (r: Reply) => {
    if (r.status !== 200 || !Array.isArray(r.body.topics) || r.body.topics.length === 0)
      throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    return `${r.body.topics.length} topics`;
  };
  const busyTopics = {
    method: 'GET' as const,
    path: `/api/v1/users/me/${t.busyChannel.id}/topics`,
    user: reader,
    check: topicsCheck,
    // As every Zulip app and library asks for it (src/http/kept-gzip.ts): gzipped, by the
    // load and by bench/alloc.ts. The preflight, the five "alone" requests and bench/trace.ts
    // ask for the plain reply (they parse it).
    headers: { 'accept-encoding': 'gzip' },
  };
  const send = { method: 'POST' as const, path: '/api/v1/messages', user: cred(t.poster.id), form: sendForm, check: sent };
  // One sender per connection: the poster, then other members of the channel.
  const sixteenSenders = [t.poster.id, ...channel100Members.filter((id) => id !== t.poster.id)].slice(0, 16).map(cred).filter(Boolean);
  // Each register leaves an event queue for ten minutes: made by a user outside the send
  // scenarios' channel and the event users, so no later scenario delivers to them. Not a lurker
  // either (the manifest lists them; older manifests name the first, and the rest follow it
  // with consecutive ids): 50,000 unread messages or more would make it a measure of unread_msgs alone.
  const lurkers = t.lurkers?.map((u) => u.id) ?? parseScale(m.scale).lurkerUnreadShares.map((_, i) => t.lurker.id + i);
  const busy = new Set([t.reader.id, t.poster.id, t.eventSender.id, t.eventReceiver.id, ...lurkers, ...channel100Members]);
  const registrant = channel100Members.length ? (cred([...creds.keys()].find((id) => !busy.has(id)) ?? t.reader.id) ?? reader) : reader;
  return [
    {
      key: 'users-me',
      title: 'GET /users/me',
      method: 'GET',
      path: '/api/v1/users/me',
      user: reader,
      check: (r) => {
        if (r.status !== 200 || r.body.user_id !== reader.id) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
        return 'own profile';
      },
      goal: { ofExpress: 0.5 },
      flat: true,
    },
    {
      // What every app does when it opens (and the web client on each load): the organization's
      // whole state and a new event queue. Measured for the capacity estimate (capacity.md).
      // The note names the registrant's subscriptions: the state grows with them.
      key: 'register',
      title: 'POST /register, every event type',
      method: 'POST',
      path: '/api/v1/register',
      user: registrant,
      form: { apply_markdown: 'true', client_gravatar: 'true' },
      check: (r) => {
        if (r.status !== 200 || typeof r.body.queue_id !== 'string')
          throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
        return `${r.body.subscriptions.length} subscriptions, ${r.body.realm_users.length} users`;
      },
    },
    {
      key: 'newest',
      title: 'GET /messages newest (100)',
      method: 'GET',
      path: '/api/v1/messages' + qs(newest),
      user: reader,
      check: messagesCheck(100),
      // The page spliced from each cached message's encoded text (ADR 0056).
      goal: { ofExpress: 0.25 },
      flat: true,
    },
    {
      key: 'anchor-mid',
      title: 'GET /messages by id, mid-history (50+50)',
      method: 'GET',
      path: '/api/v1/messages' + qs({ anchor: String(t.midAnchor), num_before: 50, num_after: 50 }),
      user: reader,
      check: messagesCheck(100),
      goal: { rps: 1000 },
      flat: true,
    },
    {
      key: 'first-unread',
      title: `GET /messages first_unread (50+50), ${fmtInt(t.lurkerUnread)} unread`,
      method: 'GET',
      path: '/api/v1/messages' + qs({ anchor: 'first_unread', num_before: 50, num_after: 50 }),
      user: cred(t.lurker.id),
      check: (r) => {
        const d = messagesCheck(50)(r);
        if (!r.body.found_anchor) throw new Error('first_unread found no anchor');
        return `${d}, anchor ${r.body.anchor}`;
      },
      goal: { rps: 1000 },
      flat: true,
    },
    {
      key: 'channel-topic',
      title: `GET /messages channel+topic (100), topic of ${fmtInt(t.busyTopic.messages)}`,
      method: 'GET',
      path:
        '/api/v1/messages' +
        qs({
          ...newest,
          narrow: [
            { operator: 'channel', operand: t.busyChannel.id },
            { operator: 'topic', operand: t.busyTopic.name },
          ],
        }),
      user: reader,
      check: messagesCheck(atLeast(t.busyTopic.messages)),
      goal: { rps: 1000, p99: 40 },
      flat: true,
    },
    {
      key: 'topics',
      title: `GET /users/me/{id}/topics, the busiest channel (${fmtInt(t.busyChannel.messages)} msgs)`,
      ...busyTopics,
      // Read from the channel's topic rows (ADR 0055), not grouped from its messages. Its
      // flat column is shown, not judged: in a closed loop it is the throughput's quotient,
      // and at 1m the throughput is the load generator's, which decodes each of the 2,966
      // topics' replies into a string on the one core it has (99 % of it; Parley 53 %).
      goal: { ofExpress: 0.15 },
      flat: true,
    },
    {
      key: 'topics-paced',
      // A title of its own up to its first ", " (bench/capacity.ts tells rows apart by it).
      title: `GET /users/me/{id}/topics paced at 1,000/s, the busiest channel`,
      ...busyTopics,
      // The same request offered at 1,000/s at both scales (lib/paced.ts reads only the
      // answers' length): the p99 at equal load, which is what grows when a list costs
      // more at 1m, whatever a generator can decode.
      rate: 1000,
      goal: { atRate: 1000, flat: 1.3 },
      flat: true,
    },
    {
      key: 'rare-channel',
      title: `GET /messages rarely used channel (${fmtInt(t.rareChannel.messages)} msgs)`,
      method: 'GET',
      path: '/api/v1/messages' + qs({ ...newest, narrow: [{ operator: 'channel', operand: t.rareChannel.id }] }),
      user: reader,
      check: messagesCheck(atLeast(t.rareChannel.messages)),
      goal: { rps: 1000 },
      flat: true,
    },
    {
      key: 'starred',
      title: `GET /messages is:starred (100 of ${fmtInt(t.readerStarred)})`,
      method: 'GET',
      path: '/api/v1/messages' + qs({ ...newest, narrow: [{ operator: 'is', operand: 'starred' }] }),
      user: reader,
      check: messagesCheck(atLeast(t.readerStarred)),
      goal: { rps: 1000 },
      flat: true,
    },
    {
      key: 'search',
      title: `GET /messages search "${t.searchWord}" (100)`,
      method: 'GET',
      path: '/api/v1/messages' + qs({ ...newest, narrow: [{ operator: 'search', operand: t.searchWord }] }),
      user: reader,
      check: messagesCheck(1),
      goal: { p99: 100, flat: 1.3 },
      flat: true,
    },
    {
      key: 'send',
      title: `POST /messages to a ${t.channel100.subscribers}-subscriber channel, 16 senders`,
      ...send,
      users: sixteenSenders,
      goal: { rps: 500, p99: 30 },
    },
    {
      // The same message through an incoming webhook (Slack's format, whose *bold* becomes
      // the send's **bold**): the bound is a webhook costing no more than a send.
      key: 'webhook',
      title: `POST /external/slack_incoming: the same message through an incoming webhook, 16 senders`,
      method: 'POST' as const,
      path: `/api/v1/external/slack_incoming?stream=${t.channel100.id}&topic=load%20test`,
      user: cred(t.poster.id),
      users: sixteenSenders,
      form: { payload: JSON.stringify({ text: 'A benchmark message with *some* markdown and a link https://example.com.' }) },
      check: (r: Reply) => {
        if (r.status !== 200 || r.body.result !== 'success') throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
        return 'message posted';
      },
      // A send's target: the webhook is held to it, and measured as often (the median of its runs).
      goal: { rps: 500, p99: 30 },
    },
    {
      // The same senders held at the target rate: the latency a client sees
      // at 500 msg/s, where the row above measures it at saturation (its
      // 16 senders wait on one another, so its p99 is mostly queueing).
      key: 'send-at-rate',
      title: `POST /messages to the same channel, 16 senders, 500 msg/s offered`,
      ...send,
      users: sixteenSenders,
      rate: 500,
      goal: { atRate: 500, p99: 30 },
    },
    {
      key: 'send-one-user',
      title: `POST /messages to the same channel, one sender on all connections`,
      ...send,
    },
  ];
}
