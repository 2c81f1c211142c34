import fs from 'node:fs';
import path from 'node:path';
import { integrationNamed } from '../../src/integrations';
import { runIntegration, type WebhookRequest } from '../../src/integrations/run';
import { UnsupportedEventError, type Integration, type WebhookOutcome } from '../../src/integrations/types';

/**
 * The fixtures of an integration: test/fixtures/webhooks/<integration>/*.json,
 * one request of the service each and what Parley posts for it. The same
 * files run through the integration directly (`describeFixtures`, in each
 * integration's test) and through the endpoint as a bot made with POST /bots
 * (test/webhooks-api.test.ts).
 *
 * {
 *   "description": "a push of two commits to main",
 *   "headers": { "X-GitHub-Event": "push" },       // optional
 *   "query": { "branches": "main" },               // optional: the integration's options
 *   "body": { ... }                                // JSON sent as application/json, or
 *   "form": { "payload": "..." }                   // fields sent urlencoded, or
 *   "rawBody": "...", "contentType": "..."         // exactly these bytes
 *   "expect": { "topic": "…", "content": "…" }     // one message, or
 *           | { "messages": [{ "topic", "content" }] }
 *           | { "ignored": true }                   // success, nothing posted
 *           | { "unsupported": "event type" }       // Zulip's 200 UNSUPPORTED_WEBHOOK_EVENT_TYPE
 * }
 */
export interface WebhookFixture {
  name: string;
  description: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  form?: Record<string, string>;
  rawBody?: string;
  contentType?: string;
  expect:
    | { topic: string; content: string }
    | { messages: Array<{ topic: string; content: string }> }
    | { ignored: true }
    | { unsupported: string };
}

const ROOT = path.join(__dirname, '..', 'fixtures', 'webhooks');

export function loadFixtures(integration: string): WebhookFixture[] {
  const dir = path.join(ROOT, integration);
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map(
      (f) => ({ name: f.replace(/\.json$/, ''), ...(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as object) }) as WebhookFixture,
    );
}

/** Every integration with fixtures. */
export function integrationsWithFixtures(): string[] {
  return fs.existsSync(ROOT)
    ? fs
        .readdirSync(ROOT)
        .filter((d) => fs.statSync(path.join(ROOT, d)).isDirectory())
        .sort()
    : [];
}

/** The request's body as sent: its bytes and Content-Type. */
export function fixtureBody(f: WebhookFixture): { body: string; contentType: string } {
  if (f.rawBody !== undefined) return { body: f.rawBody, contentType: f.contentType ?? 'application/json' };
  if (f.form !== undefined)
    return { body: new URLSearchParams(f.form).toString(), contentType: f.contentType ?? 'application/x-www-form-urlencoded' };
  return { body: JSON.stringify(f.body ?? {}), contentType: f.contentType ?? 'application/json' };
}

/** The messages a fixture expects ([] for an ignored event, null for an unsupported one). */
export function expectedMessages(f: WebhookFixture): Array<{ topic: string; content: string }> | null {
  const e = f.expect;
  if ('unsupported' in e) return null;
  if ('ignored' in e) return [];
  if ('messages' in e) return e.messages;
  return [{ topic: e.topic, content: e.content }];
}

export function fixtureRequest(f: WebhookFixture): WebhookRequest {
  const { body, contentType } = fixtureBody(f);
  const form = contentType.startsWith('application/x-www-form-urlencoded') ? Object.fromEntries(new URLSearchParams(body)) : null;
  return {
    rawBody: body,
    form,
    headers: { 'content-type': contentType, ...Object.fromEntries(Object.entries(f.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])) },
    query: f.query ?? {},
  };
}

/** Runs each fixture of the integration through it, without a server. */
export function describeFixtures(integrationName: string): void {
  const integration = integrationNamed(integrationName);
  const fixtures = loadFixtures(integrationName);
  describe(`${integrationName} fixtures`, () => {
    it('is registered and has fixtures', () => {
      expect(integration).toBeDefined();
      expect(fixtures.length).toBeGreaterThan(0);
    });
    for (const f of fixtures) {
      it(`${f.name}: ${f.description}`, () => {
        const want = expectedMessages(f);
        if (want === null) {
          let thrown: unknown;
          try {
            runIntegration(integration!, fixtureRequest(f));
          } catch (e) {
            thrown = e;
          }
          expect(thrown).toBeInstanceOf(UnsupportedEventError);
          expect((thrown as UnsupportedEventError).eventType).toBe((f.expect as { unsupported: string }).unsupported);
          return;
        }
        expect(runIntegration(integration!, fixtureRequest(f)).messages.map(({ topic, content }) => ({ topic, content }))).toEqual(want);
      });
    }
  });
}

/** Runs a fixture with more query parameters (the integration's options) or its JSON body changed. */
export function runFixture(
  integration: Integration,
  f: WebhookFixture,
  more: { query?: Record<string, string>; edit?: (body: Record<string, unknown>) => void } = {},
): WebhookOutcome {
  const body = structuredClone(f.body) as Record<string, unknown>;
  more.edit?.(body);
  return runIntegration(integration, fixtureRequest({ ...f, body, query: { ...f.query, ...more.query } }));
}
