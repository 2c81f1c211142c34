import type { Payload } from './payload';

/**
 * The incoming-webhook framework (docs/architecture/integrations.md). An
 * integration is one file of src/integrations/ exporting an `Integration`:
 * it reads the service's request and says what to post, nothing else. The
 * endpoint (`POST /api/v1/external/{integration}`, src/handlers/webhooks.ts)
 * authenticates the bot, parses the body as the integration declares, runs
 * `handle`, applies Zulip's generic options (`stream`, `topic`,
 * `only_events`, `exclude_events`) and sends what it returns as the bot.
 */

/** What an integration sees of the service's request. */
export interface WebhookInput {
  /**
   * The body as JSON (`body: 'json'`, parsed on first use: a body that is
   * not JSON is Zulip's "Malformed JSON"), or the form's fields as an object
   * (`body: 'form'`).
   */
  readonly payload: Payload;
  /** The form's fields, when the body was urlencoded or multipart (null otherwise). */
  form: Readonly<Record<string, string>> | null;
  /** The body as sent, decoded as UTF-8. */
  rawBody: string;
  /** A request header, by case-insensitive name. */
  header(name: string): string | undefined;
  /** A query parameter: the integration's options (`branches`, `ignore_private_repositories`, …). */
  option(name: string): string | undefined;
  /** A boolean option as Zulip reads them ("true"/"false", JSON-encoded or not); `fallback` when absent. */
  flag(name: string, fallback: boolean): boolean;
}

/** One message to post: the topic (used when the URL names a channel) and its Markdown. */
export interface WebhookMessage {
  topic: string;
  content: string;
  /**
   * The message's own event type, when one request carries several events
   * (PagerDuty's V1 and V2 lists, Grafana's alert groups): Zulip filters
   * each message by its own. Otherwise the outcome's `event` applies.
   */
  event?: string | null;
}

/**
 * What a request produced: its event type (Zulip's complete_event_type,
 * which `only_events` and `exclude_events` match with shell wildcards) and
 * the messages to post. No messages is an event Zulip's integration knows
 * and deliberately posts nothing for (answered with success).
 */
export interface WebhookOutcome {
  event: string | null;
  messages: WebhookMessage[];
}

export interface Integration {
  /** The URL segment: /api/v1/external/{name}. */
  name: string;
  /** The service's name, as Zulip's error bodies and notices give it (`webhook_name`). */
  displayName: string;
  /**
   * How the body is read: `json` (default) parses it as JSON whatever its
   * Content-Type says (Grafana labels its JSON as a form; Zulip reads the
   * raw body); `form` takes urlencoded or multipart fields.
   */
  body?: 'json' | 'form';
  /**
   * The header naming the event, when the service sends one. A request
   * without it is answered with Zulip's MISSING_HTTP_EVENT_HEADER and the
   * bot's owner is told (rate limited), as Zulip does.
   */
  eventHeader?: string;
  /**
   * Whether `stream` and `topic` are percent-decoded once more: some
   * services (Jira) encode the URL's parameters twice (Zulip's
   * unquote_url_parameters).
   */
  unquoteUrlParameters?: boolean;
  /**
   * Every event type `handle` can return, for register's
   * `realm_incoming_webhook_bots` (the web app offers them as `only_events`
   * choices); absent when the integration names no events.
   */
  eventTypes?: readonly string[];
  /** Reads the request. Throws `unsupportedEvent(type)` for events it does not handle. */
  handle(input: WebhookInput): WebhookOutcome;
  /** The docs page's entry (served at /api/docs/integrations). */
  docs: IntegrationDocs;
}

export interface IntegrationDocs {
  /** The service's name as people write it, when displayName is Zulip's internal one ("Slack-compatible webhook"). */
  title?: string;
  /** One sentence: what the integration posts. */
  summary: string;
  /** Where in the service the URL goes, as Markdown steps. */
  setup: string[];
  /** The integration's own query parameters (register's `url_options`: a text or a boolean). */
  options?: Array<{ name: string; description: string; boolean?: boolean }>;
}

/** An event the service sends that the integration does not handle: Zulip answers 200 with an error body. */
export class UnsupportedEventError extends Error {
  constructor(readonly eventType: string) {
    super(`unsupported event ${eventType}`);
  }
}

/** A body that is not the JSON the integration expects (Zulip's InvalidJSONError; the owner is told). */
export class InvalidJsonError extends Error {
  constructor() {
    super('Malformed JSON');
  }
}

/**
 * A payload lacking what a user-configured service must send (UptimeRobot's
 * body is written by hand): Zulip answers 400 with `message` and tells the
 * bot's owner how to fix the configuration (`notice`, given the bot's name).
 */
export class MisconfiguredPayloadError extends Error {
  constructor(
    message: string,
    readonly notice: (botName: string) => string,
  ) {
    super(message);
  }
}

/** A payload the integration cannot recognise as its service's (Zulip's AnomalousWebhookPayloadError). */
export class AnomalousPayloadError extends Error {
  constructor() {
    super('anomalous payload');
  }
}

export const unsupportedEvent = (eventType: string) => new UnsupportedEventError(eventType);
export const anomalousPayload = () => new AnomalousPayloadError();

/** A message for one event, the common case. */
export const post = (event: string | null, topic: string, content: string): WebhookOutcome => ({
  event,
  messages: [{ topic, content }],
});

/** A known event Zulip's integration posts nothing for. */
export const ignore = (event: string | null): WebhookOutcome => ({ event, messages: [] });
