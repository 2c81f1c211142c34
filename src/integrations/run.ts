import { ApiError } from '../errors';
import { eventPasses } from './events';
import { Payload } from './payload';
import { InvalidJsonError, type Integration, type WebhookInput, type WebhookOutcome } from './types';

/** A service's request as the endpoint received it, before any integration read it. */
export interface WebhookRequest {
  rawBody: string;
  /** The form's fields, when the body was urlencoded or multipart. */
  form: Readonly<Record<string, string>> | null;
  /** Header names lower-cased. */
  headers: Readonly<Record<string, string | undefined>>;
  query: Readonly<Record<string, string | undefined>>;
}

/** The header an integration names its event in was not sent. */
export class MissingEventHeaderError extends Error {
  constructor(readonly header: string) {
    super(`Missing the HTTP event header '${header}'`);
  }
}

/**
 * Runs an integration on a request: pure (no database, no clock), so the
 * fixtures of test/fixtures/webhooks run through it directly as well as
 * through the endpoint.
 */
export function runIntegration(integration: Integration, req: WebhookRequest): WebhookOutcome {
  // The filters are read first: a malformed one is the caller's error whatever the payload.
  const only = eventList(req.query, 'only_events');
  const exclude = eventList(req.query, 'exclude_events');
  if (integration.eventHeader && req.headers[integration.eventHeader.toLowerCase()] === undefined) {
    throw new MissingEventHeaderError(integration.eventHeader);
  }
  const handled = integration.handle(webhookInput(integration, req));
  // Zulip's generic filters, message by message (a request may carry several events).
  const outcome = {
    event: handled.event,
    messages: handled.messages.filter((m) => eventPasses(m.event === undefined ? handled.event : m.event, only, exclude)),
  };
  // The URL's topic replaces the integration's (Zulip's check_send_webhook_message); some
  // services (Jira) percent-encode the URL's parameters twice, and Zulip decodes them once more.
  let topic = req.query.topic;
  if (topic === undefined) return outcome;
  if (integration.unquoteUrlParameters) topic = unquote(topic);
  return { event: outcome.event, messages: outcome.messages.map((m) => ({ topic: topic, content: m.content })) };
}

/** The channel a request names (`stream`), decoded once more for the integrations that need it. */
export function requestedChannel(integration: Integration, req: WebhookRequest): string | null {
  const stream = req.query.stream;
  if (stream === undefined || stream === '') return null;
  return integration.unquoteUrlParameters ? unquote(stream) : stream;
}

function unquote(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function webhookInput(integration: Integration, req: WebhookRequest): WebhookInput {
  let parsed: Payload | undefined;
  return {
    get payload(): Payload {
      if (parsed) return parsed;
      if (integration.body === 'form') return (parsed = new Payload({ ...(req.form ?? {}) }));
      try {
        return (parsed = new Payload(JSON.parse(req.rawBody)));
      } catch {
        throw new InvalidJsonError();
      }
    },
    form: req.form,
    rawBody: req.rawBody,
    header: (name) => req.headers[name.toLowerCase()],
    option: (name) => req.query[name],
    flag: (name, fallback) => {
      const value = req.query[name];
      if (value === undefined) return fallback;
      // Zulip's json_validator=check_bool: JSON true/false; its forms also send "True"/"False".
      return /^(true|1)$/i.test(value.trim()) ? true : /^(false|0)$/i.test(value.trim()) ? false : fallback;
    },
  };
}

/** `only_events` / `exclude_events`: a JSON list of strings (Zulip's check_list(check_string)). */
function eventList(query: WebhookRequest['query'], name: string): string[] | null {
  const text = query[name];
  if (text === undefined) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(`Argument "${name}" is not valid JSON.`);
  }
  if (!Array.isArray(value)) throw new ApiError(`${name} is not a list`);
  value.forEach((v, i) => {
    if (typeof v !== 'string') throw new ApiError(`${name}[${i}] is not a string`);
  });
  return value as string[];
}
