import { ApiError } from '../errors';
import type { Payload } from './payload';
import { pyIn } from './python-format';
import type { Integration, WebhookMessage } from './types';

/**
 * Prometheus Alertmanager's webhook receiver. Alertmanager sends a group of
 * alerts; Zulip groups them again by topic and state: for each topic (in
 * the order the alerts name them), one message for the firing alerts and
 * then one for the resolved, each alert as "description ([source](url))" —
 * inline when it is alone, a bulleted list otherwise.
 *
 * Options: `name`, the label (or, failing that, annotation) whose value is
 * the topic (default `instance`; "(unknown)" when the alert has neither),
 * and `desc`, the one whose value describes the alert (default `alertname`;
 * "<missing field: …>" when absent). The source link is the alert's
 * generatorURL, switched from Prometheus's table tab to its graph tab.
 * Nothing is ignored; Zulip passes no event type.
 */

const STATES = {
  firing: ':alert: **FIRING**',
  resolved: ':squared_ok: **Resolved**',
} as const;
type State = keyof typeof STATES;

export const alertmanager: Integration = {
  name: 'alertmanager',
  displayName: 'Alertmanager',
  handle(input) {
    const nameField = input.option('name') ?? 'instance';
    const descField = input.option('desc') ?? 'alertname';
    const topics = new Map<string, Record<State, string[]>>();
    for (const alert of input.payload.get('alerts').list()) {
      const labels = alert.opt('labels');
      const annotations = alert.opt('annotations');
      const name = lookup(labels, annotations, nameField) ?? '(unknown)';
      const desc = lookup(labels, annotations, descField) ?? `<missing field: ${descField}>`;
      const url = alert.get('generatorURL').str().replaceAll('tab=1', 'tab=0');
      const status = alert.get('status');
      if (status.raw !== 'firing' && status.raw !== 'resolved') throw new ApiError(`Invalid ${status.path}`);
      let byState = topics.get(name);
      if (!byState) topics.set(name, (byState = { firing: [], resolved: [] }));
      byState[status.raw].push(`${desc} ([source](${url}))`);
    }

    const messages: WebhookMessage[] = [];
    for (const [topic, byState] of topics) {
      for (const state of ['firing', 'resolved'] as const) {
        const lines = byState[state];
        if (lines.length === 0) continue;
        const content = lines.length === 1 ? `${STATES[state]} ${lines[0]}` : `${STATES[state]}\n${lines.map((l) => `* ${l}`).join('\n')}`;
        messages.push({ topic, content });
      }
    }
    return { event: null, messages };
  },
  docs: {
    summary: "Posts Prometheus Alertmanager's firing and resolved alerts, grouped by a label such as the instance.",
    setup: [
      "In Alertmanager's configuration (`alertmanager.yml`), add a receiver with a `webhook_configs` entry whose `url` is the URL below, and route the alerts you want to it (e.g. as the route's default `receiver`). Set `send_resolved: true` to be told when alerts resolve.",
      'Reload Alertmanager (`SIGHUP` or `POST /-/reload`).',
    ],
    options: [
      {
        name: 'name',
        description: 'The label (or annotation) whose value is the topic of each alert; `instance` by default.',
      },
      {
        name: 'desc',
        description: 'The label (or annotation) whose value describes each alert; `alertname` by default.',
      },
    ],
  },
};

/** A label's value, else the annotation's of the same name (null when neither is there). */
function lookup(labels: Payload | null, annotations: Payload | null, key: string): string | null {
  const found = (labels && pyIn(labels, key) ? labels : annotations && pyIn(annotations, key) ? annotations : null)?.get(key);
  return found ? found.str() : null;
}
