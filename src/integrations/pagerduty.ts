import type { Payload } from './payload';
import { hasKey, truthy } from './python';
import { ignore, unsupportedEvent, type Integration, type WebhookMessage, type WebhookOutcome } from './types';

/**
 * PagerDuty, in its three webhook generations:
 * - V1 (`{"messages": [{"type": "incident.trigger", "data": {"incident": …}}]}`) and
 *   V2 (`{"messages": [{"event": "incident.trigger", "incident": …}]}`): one
 *   message posted per entry; a type the generation does not have is an
 *   unsupported event.
 * - V3 (`{"event": {"event_type": "incident.triggered", "data": …}}`):
 *   incident triggered, acknowledged, unacknowledged, resolved and
 *   reassigned; any other (escalated, annotated, service.*, the test
 *   pagey.ping, …) is an unsupported event.
 * A body with neither (an empty `messages`, no `event`) posts nothing.
 *
 * The topic is "Incident <number>" (V1/V2) or "Incident <title> (#<number>)"
 * (V3); the event is Zulip's action word ("triggered", "reassigned", …;
 * V1's delegate is Zulip's "delineated"). No options.
 */
export const pagerduty: Integration = {
  name: 'pagerduty',
  displayName: 'PagerDuty',
  handle(input) {
    const p = input.payload;
    const messages = p.opt('messages')?.list() ?? [];
    if (messages.length > 0) return outcomeOf([...legacyMessages(messages, 'type'), ...legacyMessages(messages, 'event')]);
    if (!hasKey(p, 'event')) return ignore(null);
    const event = p.get('event');
    const eventType = event.opt('event_type')?.str() ?? null;
    const v3 = eventType === null ? undefined : V3_EVENTS.get(eventType);
    if (eventType === null || v3 === undefined) throw unsupportedEvent(eventType ?? 'None');
    return outcomeOf([v3Message(v3, event)]);
  },
  docs: {
    summary: 'Posts PagerDuty incidents being triggered, acknowledged, resolved and reassigned, one topic per incident.',
    setup: [
      'In PagerDuty, open **Integrations** → **Generic Webhooks (v3)** and click **New Webhook**.',
      'Set **Webhook URL** to the URL below, choose the account or the service whose incidents to report, and pick the event subscriptions to send.',
      'Click **Add Webhook**.',
    ],
  },
};

/** One posted message with the event it counts as. */
interface Incident extends WebhookMessage {
  event: string;
}

/**
 * Each message of a request is Zulip's own check_send_webhook_message call
 * with its own event, so each message carries its event (only_events and
 * exclude_events filter them one by one); the outcome's is the first's.
 */
function outcomeOf(incidents: Incident[]): WebhookOutcome {
  return { event: incidents[0]?.event ?? null, messages: incidents };
}

const V1_ACTIONS = new Map([
  ['incident.trigger', 'triggered'],
  ['incident.acknowledge', 'acknowledged'],
  ['incident.unacknowledge', 'unacknowledged'],
  ['incident.resolve', 'resolved'],
  ['incident.assign', 'assigned'],
  ['incident.escalate', 'escalated'],
  // Zulip's word for it, kept so only_events filters match Zulip's.
  ['incident.delegate', 'delineated'],
]);

const V2_ACTIONS = new Map([
  ['incident.trigger', 'triggered'],
  ['incident.acknowledge', 'acknowledged'],
  ['incident.resolve', 'resolved'],
  ['incident.assign', 'assigned'],
]);

/** What one incident's message is built from. */
interface Facts {
  action: string;
  /** The incident's link text: its number (V1/V2) or "title (#number)" (V3). */
  title: string;
  url: string;
  serviceName: string;
  serviceUrl: string;
  assignee: string;
  /** Who acted, when the payload says: resolvers in V1, the last status changer in V2, the agent in V3. */
  agent: string | null;
  /** A quoted block of what triggered it (empty for V3). */
  trigger: string;
}

/**
 * V1 entries carry `type`, V2 ones `event`; Zulip walks the list once for
 * each key and stops at the first entry without it, so a V1 list posts
 * nothing in the V2 pass and the other way round.
 */
function legacyMessages(messages: Payload[], key: 'type' | 'event'): Incident[] {
  const out: Incident[] = [];
  for (const m of messages) {
    const type = m.opt(key)?.str() ?? null;
    if (type === null) break;
    const action = (key === 'type' ? V1_ACTIONS : V2_ACTIONS).get(type);
    if (action === undefined) throw unsupportedEvent(type);
    const facts = key === 'type' ? v1Facts(action, m) : v2Facts(action, m);
    out.push({ event: action, topic: `Incident ${facts.title}`, content: legacyContent(type, facts) });
  }
  return out;
}

const link = (text: string, url: string) => `[${text}](${url})`;
const quote = (text: string) => `\`\`\` quote\n${text}\n\`\`\``;

/** The local part of an address, as Python's Address(addr_spec=…).username gives it. */
const username = (email: string) => (email.includes('@') ? email.slice(0, email.lastIndexOf('@')) : email);

/** A person or service as a link: its summary (V2/V3) or the local part of its email (V1). */
const summaryLink = (p: Payload) => link(p.get('summary').str(), p.get('html_url').str());
const emailLink = (p: Payload) => link(username(p.get('email').str()), p.get('html_url').str());

function v1Facts(action: string, m: Payload): Facts {
  const incident = m.at('data', 'incident');
  const assigned = truthy(incident.opt('assigned_to_user'));
  const resolver = truthy(incident.opt('resolved_by_user'));
  const summary = truthy(incident.opt('trigger_summary_data'));
  const lines = summary ? [summary.opt('subject')?.str() ?? '', summary.opt('description')?.str() ?? ''].filter((s) => s !== '') : [];
  return legacyFacts(action, incident, {
    assignee: assigned ? emailLink(assigned) : 'nobody',
    agent: resolver ? emailLink(resolver) : null,
    trigger: quote(lines.join('\n')),
  });
}

function v2Facts(action: string, m: Payload): Facts {
  const incident = m.get('incident');
  const first = incident.get('assignments').list()[0];
  const changer = incident.opt('last_status_change_by');
  const description = incident.opt('description')?.str() ?? null;
  return legacyFacts(action, incident, {
    assignee: first ? summaryLink(first.get('assignee')) : 'nobody',
    agent: changer ? summaryLink(changer) : null,
    // Zulip fails on an incident without a description; posting no quote is the nearest sane reading.
    trigger: description === null ? '' : quote(description),
  });
}

/** What V1 and V2 incidents share: a number for a title, and a named service. */
function legacyFacts(action: string, incident: Payload, people: Pick<Facts, 'assignee' | 'agent' | 'trigger'>): Facts {
  return {
    action,
    title: String(incident.get('incident_number').int()),
    url: incident.get('html_url').str(),
    serviceName: incident.at('service', 'name').str(),
    serviceUrl: incident.at('service', 'html_url').str(),
    ...people,
  };
}

/** V1 and V2 messages, by the entry's own type. */
function legacyContent(type: string, f: Facts): string {
  switch (type) {
    case 'incident.trigger':
    case 'incident.unacknowledge':
      return withService(f);
    case 'incident.resolve':
      return resolved(f);
    case 'incident.assign':
      return `${incidentLink(f)} ${f.action} to ${f.assignee}.\n\n${f.trigger}`.trimEnd();
    default:
      return `${incidentLink(f)} ${f.action} by ${f.assignee}.\n\n${f.trigger}`.trimEnd();
  }
}

const incidentLink = (f: Facts) => `Incident ${link(f.title, f.url)}`;

// Each posted content is trimmed as Zulip's send path trims it: V3 has no trigger block after the blank line.
const withService = (f: Facts) =>
  `${incidentLink(f)} ${f.action} by ${link(f.serviceName, f.serviceUrl)} (assigned to ${f.assignee}).\n\n${f.trigger}`.trimEnd();
const resolved = (f: Facts) =>
  (f.agent === null
    ? `${incidentLink(f)} resolved.\n\n${f.trigger}`
    : `${incidentLink(f)} resolved by ${f.agent}.\n\n${f.trigger}`
  ).trimEnd();

type V3Template = (f: Facts) => string;

/** V3 event types: Zulip's action word, and the message. */
const V3_EVENTS = new Map<string, { action: string; template: V3Template }>([
  ['incident.triggered', { action: 'triggered', template: withService }],
  ['incident.acknowledged', { action: 'acknowledged', template: (f) => `${incidentLink(f)} acknowledged by ${f.assignee}.` }],
  ['incident.unacknowledged', { action: 'unacknowledged', template: withService }],
  ['incident.resolved', { action: 'resolved', template: resolved }],
  ['incident.reassigned', { action: 'reassigned', template: (f) => `${incidentLink(f)} reassigned to ${f.assignee}.` }],
]);

function v3Message(v3: { action: string; template: V3Template }, event: Payload): Incident {
  const data = event.get('data');
  const title = `${data.get('title').str()} (#${data.get('number').int()})`;
  const first = data.get('assignees').list()[0];
  const agent = event.opt('agent');
  const f: Facts = {
    action: v3.action,
    title,
    url: data.get('html_url').str(),
    serviceName: data.at('service', 'summary').str(),
    serviceUrl: data.at('service', 'html_url').str(),
    assignee: first ? summaryLink(first) : 'nobody',
    agent: agent ? summaryLink(agent) : null,
    trigger: '',
  };
  return { event: v3.action, topic: `Incident ${title}`, content: v3.template(f) };
}
