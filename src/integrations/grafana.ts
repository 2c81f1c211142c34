import { ApiError } from '../errors';
import type { Payload } from './payload';
import { globalTime, pyIn, pyNumber, pyStr, pyTruthy } from './python-format';
import type { Integration, WebhookMessage, WebhookOutcome } from './types';

/**
 * Grafana's webhook contact point. Grafana labels its JSON body
 * application/x-www-form-urlencoded; the body is read as JSON whatever it is
 * labelled, as Zulip reads it.
 *
 * - Unified alerting (Grafana 8 and later) sends a group of alerts,
 *   `{alerts: [...]}`: one message per alert, under "[alertname]" (the
 *   alert's fingerprint when it has no alertname label), with its state
 *   (firing or resolved), when it fired and was resolved, its labels, its
 *   evaluated values (or Grafana 8's valueString), annotations and the
 *   generator, silence and image links. The event type is the alert's
 *   status.
 * - Legacy alerting (Grafana 7 and older) sends one alert,
 *   `{title, ruleName, ruleUrl, state, message, evalMatches, imageUrl}`:
 *   posted under its title with the rule's link, message, matched metric
 *   values and the panel's image. The event type is its state.
 *
 * Nothing is ignored; a state or status Grafana does not define is a 400.
 * No options of its own.
 */

// Zulip's event types for only_events/exclude_events (the legacy no_data and unknown states are accepted but not listed).
const UNIFIED_STATUSES = ['firing', 'resolved'];
const LEGACY_STATES = ['no_data', 'paused', 'alerting', 'ok', 'pending', 'unknown'];

// Go's zero time: the end of an alert that is still firing.
const NOT_ENDED = '0001-01-01T00:00:00Z';

export const grafana: Integration = {
  name: 'grafana',
  displayName: 'Grafana',
  handle: ({ payload }) => (pyIn(payload, 'alerts') ? unifiedAlerts(payload.get('alerts').list()) : legacyAlert(payload)),
  docs: {
    summary: "Posts Grafana's alerts, firing and resolved, with their labels, values, annotations and links.",
    setup: [
      'In Grafana, go to **Alerting → Contact points** and click **Add contact point**.',
      'Name it (e.g. `Zulip`), choose the **Webhook** integration, set **URL** to the URL below and, under **Optional Webhook settings**, the **HTTP method** to **POST**. Click **Test**, then **Save contact point**.',
      'Under **Notification policies**, route the alerts you want (e.g. a nested policy matching a label such as `zulip=1`) to this contact point, and give your alert rules that label.',
      'Grafana 7 and older: under **Alerting → Notification channels**, add a channel of type **webhook** with the URL below and method **POST**, and pick it in your alert rules under **Send to**.',
    ],
  },
};

function unifiedAlerts(alerts: Payload[]): WebhookOutcome {
  const statuses = alerts.map((alert) => oneOf(alert.get('status'), UNIFIED_STATUSES));
  // Zulip filters each alert's message by its own status: each message carries it.
  const event = statuses.every((s) => s === statuses[0]) ? (statuses[0] ?? null) : null;
  return { event, messages: alerts.map((alert, i) => ({ ...unifiedAlert(alert, statuses[i]), event: statuses[i] ?? null })) };
}

function unifiedAlert(alert: Payload, status: string): WebhookMessage {
  let body = status === 'firing' ? ':alert: **FIRING**\n\n' : ':checkbox: **RESOLVED**\n\n';
  const labels = alert.get('labels');
  const alertname = labels.opt('alertname');
  let topic: string;
  if (alertname !== null && pyTruthy(alertname.raw)) {
    topic = `[${alertname.str()}]`;
    body += `**${alertname.str()}**\n\n`;
  } else {
    topic = `[${alert.get('fingerprint').str()}]`;
  }

  body += `This alert was fired at ${globalTime(alert.get('startsAt'))}.`;
  const endsAt = alert.get('endsAt');
  if (endsAt.str() !== NOT_ENDED) body += `\n\nThis alert was resolved at ${globalTime(endsAt)}.`;

  // Zulip's sections run into each other as its templates do: "Values:"
  // follows the start time directly when there are no labels.
  if (pyTruthy(labels.raw)) body += `\n\nLabels:\n${list(labels, (v) => v.str())}\n`;
  const values = alert.opt('values');
  const valueString = alert.opt('valueString');
  if (values !== null && pyTruthy(values.raw)) body += `Values:\n${list(values, (v) => pyStr(v.raw))}\n`;
  else if (valueString !== null && pyTruthy(valueString.raw)) body += `Values:\n${valueString.str()}\n\n`;
  const annotations = alert.opt('annotations');
  if (annotations !== null && pyTruthy(annotations.raw)) body += `Annotations:\n${list(annotations, (v) => v.str())}`;

  for (const [key, label] of [
    ['generatorURL', 'Generator'],
    ['silenceURL', 'Silence'],
    ['imageURL', 'Image'],
  ]) {
    const url = alert.opt(key);
    if (url !== null && pyTruthy(url.raw)) body += `\n[${label}](${url.str()})`;
  }
  return { topic, content: body.trimEnd() };
}

/** An object's entries as Zulip lists them: "- key: value" lines. */
function list(object: Payload, show: (value: Payload) => string): string {
  return object
    .entries()
    .map(([key, value]) => `- ${key}: ${show(value)}\n`)
    .join('');
}

function legacyAlert(payload: Payload): WebhookOutcome {
  const topic = payload.get('title').str();
  let evalMatches = '';
  if (payload.has('evalMatches')) {
    for (const match of payload.get('evalMatches').list()) {
      const value = match.opt('value');
      evalMatches += `**${match.get('metric').str()}:** ${value === null ? 'None' : pyNumber(value.num())}\n`;
    }
  }
  const message = pyIn(payload, 'message') ? `${payload.get('message').str()}\n\n` : '';
  const state = oneOf(payload.get('state'), LEGACY_STATES);
  const icon = state === 'alerting' ? ':alert:' : state === 'ok' ? ':squared_ok:' : ':info:';

  let body = `${icon} **${state.toUpperCase()}**\n\n[${payload.get('ruleName').str()}](${payload.get('ruleUrl').str()})\n\n${message}${evalMatches}`;
  if (pyIn(payload, 'imageUrl')) body += `\n[Click to view visualization](${payload.get('imageUrl').str()})`;
  return { event: state, messages: [{ topic, content: body.trim() }] };
}

/** A string that must be one of Grafana's values (Zulip's check_string_in: "Invalid <field>"). */
function oneOf(field: Payload, allowed: readonly string[]): string {
  const value = field.str();
  if (!allowed.includes(value)) throw new ApiError(`Invalid ${field.path}`);
  return value;
}
