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
  if (integration.eventHeader && req.headers[integration.eventHeader.toLowerCase()] === undefined) {
    throw new MissingEventHeaderError(integration.eventHeader);
  }
  return integration.handle(webhookInput(integration, req));
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
