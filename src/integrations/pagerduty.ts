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
 *   triggered, acknowledged, unacknowledged, resolved, reassigned, escalated,
 *   delegated, reopened, priority_updated, status_update_published,
 *   annotated, responder.added, responder.replied, conference_bridge.updated,
 *   service_updated and workflow.started/completed; any other (service.*, …)
 *   is an unsupported event.
 * A body with neither (an empty `messages`, no `event`) posts nothing.
 *
 * The topic is "Incident <number>" (V1/V2) or "Incident <title> (#<number>)"
 * (V3); the event is Zulip's action word ("triggered", "escalated",
 * "priority updated", …; V1's delegate is Zulip's "delineated"). No options.
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
    summary: 'Posts PagerDuty incident activity (triggered, acknowledged, resolved, reassigned, escalated, …), one topic per incident.',
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
 * with its own event; the outcome carries one, the first's (a V1 request
 * mixing types is filtered by its first message's event as a whole).
 */
function outcomeOf(incidents: Incident[]): WebhookOutcome {
  return {
    event: incidents[0]?.event ?? null,
    messages: incidents.map(({ topic, content }) => ({ topic, content })),
  };
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
  escalationPolicy: string;
  details: string;
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
    escalationPolicy: '',
    details: '',
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
interface V3Event {
  action: string;
  template: V3Template;
  /** The event's own detail (new priority, note, responder's message, …). */
  details?: (data: Payload) => string;
}

const V3_EVENTS = new Map<string, V3Event>([
  ['incident.triggered', { action: 'triggered', template: withService }],
  ['incident.acknowledged', { action: 'acknowledged', template: (f) => `${incidentLink(f)} acknowledged by ${f.assignee}.` }],
  ['incident.unacknowledged', { action: 'unacknowledged', template: withService }],
  ['incident.resolved', { action: 'resolved', template: resolved }],
  ['incident.reassigned', { action: 'reassigned', template: (f) => `${incidentLink(f)} reassigned to ${f.assignee}.` }],
  ['incident.escalated', { action: 'escalated', template: (f) => `${incidentLink(f)} escalated to ${f.assignee}.` }],
  [
    'incident.delegated',
    { action: 'delegated', template: (f) => `${incidentLink(f)} delegated; ${f.escalationPolicy}current assignee is ${f.assignee}.` },
  ],
  ['incident.reopened', { action: 'reopened', template: (f) => `${incidentLink(f)} reopened.` }],
  [
    'incident.priority_updated',
    {
      action: 'priority updated',
      template: (f) => `${incidentLink(f)} priority updated to ${f.details}`,
      details: (d) => truthy(d.opt('priority'))?.get('summary').str() ?? '',
    },
  ],
  [
    'incident.status_update_published',
    {
      action: 'status updated',
      template: (f) => `${incidentLink(f)} status update published: ${f.details}`,
      details: (d) => d.get('message').str(),
    },
  ],
  [
    'incident.annotated',
    { action: 'annotated', template: (f) => `${incidentLink(f)} annotated with: ${f.details}`, details: (d) => d.get('content').str() },
  ],
  [
    'incident.responder.added',
    {
      action: 'responder added',
      template: (f) => `Responder ${f.assignee} added to incident ${link(f.title, f.url)}.\n\n${quote(f.details)}`,
      details: (d) => d.get('message').str(),
    },
  ],
  [
    'incident.responder.replied',
    {
      action: 'responder replied',
      template: (f) => `Responder ${f.assignee} replied to incident ${link(f.title, f.url)}.\n\n${quote(f.details)}`,
      details: (d) => d.get('message').str(),
    },
  ],
  [
    'incident.conference_bridge.updated',
    {
      action: 'conference bridge updated',
      template: (f) => `${incidentLink(f)} conference bridge updated: ${f.details}`,
      details: (d) => truthy(d.opt('conference_url'))?.str() ?? '',
    },
  ],
  [
    'incident.service_updated',
    {
      action: 'service updated',
      template: (f) => `${incidentLink(f)} service updated to ${f.details}`,
      details: (d) => truthy(d.opt('service'))?.get('summary').str() ?? '',
    },
  ],
  [
    'incident.workflow.started',
    { action: 'workflow started', template: (f) => `${incidentLink(f)} workflow started: ${f.details}`, details: workflow },
  ],
  [
    'incident.workflow.completed',
    { action: 'workflow completed', template: (f) => `${incidentLink(f)} workflow completed: ${f.details}`, details: workflow },
  ],
]);

function workflow(data: Payload): string {
  const name = data.at('incident_workflow', 'summary').str();
  const summary = data.opt('summary')?.str() ?? '';
  return summary ? `${name} (${summary})` : name;
}

function v3Message(v3: V3Event, event: Payload): Incident {
  const data = event.get('data');
  // Events about an incident (annotations, responders, workflows, …) carry it as a reference under `incident`.
  const ref = truthy(data.opt('incident'));
  const title = ref ? ref.get('summary').str() : `${data.get('title').str()} (#${data.get('number').int()})`;
  const service = truthy(data.opt('service'));
  const firstAssignee = truthy(data.opt('assignees'))?.list()[0];
  const user = truthy(data.opt('user'));
  const assignee = firstAssignee ?? user;
  const policy = truthy(data.opt('escalation_policy'));
  const agent = event.opt('agent');
  const f: Facts = {
    action: v3.action,
    title,
    url: (ref ?? data).get('html_url').str(),
    serviceName: service ? service.get('summary').str() : '',
    serviceUrl: service ? service.get('html_url').str() : '',
    assignee: assignee ? summaryLink(assignee) : 'nobody',
    agent: agent ? summaryLink(agent) : null,
    trigger: '',
    escalationPolicy: policy ? `current escalation policy is ${summaryLink(policy)} and ` : '',
    details: v3.details ? v3.details(data) : '',
  };
  return { event: v3.action, topic: `Incident ${title}`, content: v3.template(f) };
}
