import { ApiError } from '../errors';
import type { Payload } from './payload';
import { globalTime, globalTimeFromSeconds, pyIn, pyRepr, pyStr, pyTruthy } from './python-format';
import { post, unsupportedEvent, type Integration, type WebhookOutcome } from './types';

/**
 * Sentry. Three shapes of request reach this URL, told apart by their body
 * as Zulip tells them (Zulip never reads the Sentry-Hook-Resource header):
 *
 * - An internal integration's webhooks, `{action, data, actor}`:
 *   `data.event` (an alert rule's "send a notification via an integration",
 *   resource `event_alert`) posts the exception, with the frame that raised
 *   it, or the captured message; `data.issue` (resource `issue`) posts
 *   created, resolved, assigned and ignored. Other issue actions (archived,
 *   unresolved) are unsupported as "<action> action"; other resources
 *   (installation, error, metric_alert, comment) are unsupported under the
 *   Python list of their data's keys, e.g. "['installation']".
 * - The WebHooks plugin's payload, `{url, level, project_name, event}`: with
 *   an event_id, its event is posted like an alert rule's, the link built
 *   from the issue's URL and the time from the event's Unix timestamp.
 * - The oldest plugin payload (no event_id): "New issue (level: …)" with
 *   its message, under the project's name.
 *
 * The topic is the event's or issue's title (the send path truncates it to
 * 60 characters, as Zulip's does). Events from Python's Raven SDK (event
 * version below 7) are unsupported, except Sentry's own sample event. No
 * options; Zulip passes no event type, so only_events/exclude_events do not
 * apply.
 */

// Sentry's platform names and the fence language Zulip highlights their code as.
const CODE_LANGUAGE: Readonly<Record<string, string>> = {
  go: 'go',
  java: 'java',
  javascript: 'javascript',
  node: 'javascript',
  python: 'python3',
  ruby: 'ruby',
};

// Sentry's "send test notification" event is an old-format Python event; Zulip recognises it by its title.
const SAMPLE_EVENT_TITLE = 'This is an example Python exception';

export const sentry: Integration = {
  name: 'sentry',
  displayName: 'Sentry',
  handle(input) {
    const payload = input.payload;
    const data = payload.opt('data');
    if (data !== null) {
      if (pyTruthy(data.raw)) return fromData(payload, data);
    } else {
      const plugin = pluginEvent(payload);
      if (plugin) return plugin;
    }
    return deprecatedPayload(payload);
  },
  docs: {
    summary: "Posts Sentry's alerts for new exceptions and messages, and its issues being created, assigned, resolved or ignored.",
    setup: [
      "In your Sentry organization's **Settings**, go to **Developer Settings**, click **Create New Integration** and choose **Internal Integration**.",
      'Set its **Webhook URL** to the URL below and enable **Alert Rule Action**. To be told about issues too, tick **issue** under **Webhooks**. Save.',
      'Go to **Alerts** and create an alert rule for your project; under its actions choose **Send a notification via an integration** and pick the integration created above.',
      "Sentry's WebHooks plugin (**Settings → Integrations → WebHooks**, the URL below as a callback URL) works too, but sends only new events, not issue changes.",
    ],
  },
};

/** An internal integration's request: an alert rule's event, or an issue's change. */
function fromData(payload: Payload, data: Payload): WebhookOutcome {
  if (pyIn(data, 'event')) {
    const event = data.get('event');
    return eventMessage(
      event,
      () => event.get('web_url').text(),
      () => globalTime(event.get('datetime')),
    );
  }
  if (pyIn(data, 'issue')) return issueMessage(payload.get('action').str(), data.get('issue'), payload.get('actor'));
  // Zulip names the unknown resource by its data's keys, printed as a Python list.
  throw unsupportedEvent(pyRepr(Object.keys(data.raw as object)));
}

/**
 * The WebHooks plugin's payload carries the event, without the link and the
 * ISO time an alert rule's has: the link is the event's page under the
 * issue's URL (resolved as a relative URL, so the issue URL's query goes),
 * the time its Unix timestamp (the received one when it has none).
 */
function pluginEvent(payload: Payload): WebhookOutcome | null {
  const event = payload.raw !== null && typeof payload.raw === 'object' ? (payload.raw as Record<string, unknown>).event : undefined;
  if (event === null || typeof event !== 'object' || !pyTruthy((event as Record<string, unknown>).event_id)) return null;
  const e = payload.get('event');
  return eventMessage(
    e,
    () => new URL(`events/${pyStr(e.get('event_id').raw)}/`, payload.get('url').str()).href,
    () => {
      // Zulip reads "received" even when the event has its own timestamp.
      const received = e.get('received');
      return globalTimeFromSeconds((pyIn(e, 'timestamp') ? e.get('timestamp') : received).num());
    },
  );
}

/** An exception (a captured exception) or a message (a captured message). */
function eventMessage(event: Payload, link: () => string, time: () => string): WebhookOutcome {
  const title = event.get('title').str();
  const platform = event.get('platform').str();
  if (platform === 'python' && pyInt(event.get('version')) < 7 && title !== SAMPLE_EVENT_TITLE) {
    throw unsupportedEvent('Raven SDK');
  }
  const head = (kind: string) =>
    `**New ${kind}:** [${title}](${link()})\n\`\`\`quote\n**level:** ${field(event, 'level')}\n**timestamp:** ${time()}\n`;

  if (pyIn(event, 'exception')) {
    const filenameRaw = (event.get('metadata').raw as Record<string, unknown> | null)?.filename ?? null;
    const details = `${head('exception')}**filename:** ${pyStr(filenameRaw)}\n\`\`\``;
    const frame = raisingFrame(event, filenameRaw);
    if (!frame) return post(null, title, details);
    const language = CODE_LANGUAGE[platform] ?? '';
    const traceback = `${contextLines(frame, 'pre_context')}---> ${frame.get('context_line').str()}\n${contextLines(frame, 'post_context')}`;
    return post(null, title, `${details}\n\nTraceback:\n\`\`\`${language}\n${traceback}\`\`\``);
  }
  if (pyIn(event, 'logentry')) return post(null, title, `${head('message event')}\`\`\``);
  throw unsupportedEvent('unknown-event type');
}

/**
 * The frame whose source Zulip quotes: in the last exception of the chain
 * that has a stack trace, the innermost frame in the file Sentry names as
 * the exception's, if that frame has its line of source.
 */
function raisingFrame(event: Payload, filename: unknown): Payload | null {
  const values = event.at('exception', 'values').list();
  const withTrace = [...values].reverse().find((v) => pyIn(v, 'stacktrace'));
  if (!withTrace || !pyTruthy((withTrace.raw as Record<string, unknown>).stacktrace) || !pyTruthy(filename)) return null;
  const frames = withTrace.at('stacktrace', 'frames').list();
  const frame = [...frames].reverse().find((f) => f.isObject() && (f.raw as Record<string, unknown>).filename === filename);
  return frame?.has('context_line') ? frame : null;
}

/** A frame's lines before or after the raising one, indented; an empty line stays empty. */
function contextLines(frame: Payload, key: 'pre_context' | 'post_context'): string {
  const lines = frame.opt(key);
  if (lines === null) return '';
  return lines
    .list()
    .map((line) => (line.raw === '' ? '\n' : `     ${pyStr(line.raw)}\n`))
    .join('');
}

function issueMessage(action: string, issue: Payload, actor: Payload): WebhookOutcome {
  const title = issue.get('title').str();
  const lastSeen = globalTime(issue.get('lastSeen'));
  const assignedTo = issue.opt('assignedTo');
  const assignee =
    assignedTo === null || !pyTruthy(assignedTo.raw)
      ? 'No one'
      : assignedTo.get('type').raw === 'team'
        ? `team ${field(assignedTo, 'name')}`
        : field(assignedTo, 'name');
  switch (action) {
    case 'created':
      return post(
        null,
        title,
        `**New issue created:** ${title}\n\`\`\`quote\n**level:** ${field(issue, 'level')}\n**timestamp:** ${lastSeen}\n**assignee:** ${assignee}\n\`\`\``,
      );
    case 'resolved':
      return post(null, title, `Issue **${title}** was marked as resolved by **${field(actor, 'name')}**.`);
    case 'assigned':
      return post(null, title, `Issue **${title}** has now been assigned to **${assignee}** by **${field(actor, 'name')}**.`);
    case 'ignored':
      return post(null, title, `Issue **${title}** was ignored by **${field(actor, 'name')}**.`);
    default:
      // Sentry's newer "archived" (ignoring, renamed) and "unresolved" included.
      throw unsupportedEvent(`${action} action`);
  }
}

/** The oldest plugin payload: no event to read, only the issue's message. */
function deprecatedPayload(payload: Payload): WebhookOutcome {
  const raw = (payload.isObject() ? payload.raw : {}) as Record<string, unknown>;
  const level = payload.get('level').str().toUpperCase();
  return post(
    null,
    pyStr(raw.project_name ?? null),
    `New [issue](${pyStr(raw.url ?? null)}) (level: ${level}):\n\n\`\`\` quote\n${pyStr(raw.message ?? null)}\n\`\`\``,
  );
}

/** A field Zulip interpolates as it is: required, printed as Python prints it. */
function field(p: Payload, key: string): string {
  return pyIn(p, key) ? pyStr((p.raw as Record<string, unknown>)[key]) : p.get(key).text();
}

/** Python's int() of the event's version ("7" or 7). */
function pyInt(p: Payload): number {
  const text = p.text().trim();
  if (!/^[+-]?\d+$/.test(text)) throw new ApiError(`${p.path} is not an integer`);
  return Number(text);
}
