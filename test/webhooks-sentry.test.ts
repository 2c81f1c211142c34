import { normalizeTopic } from '../src/domain/topics';
import { integrationNamed } from '../src/integrations';
import { runIntegration } from '../src/integrations/run';
import { describeFixtures, fixtureRequest, loadFixtures } from './support/webhook-fixtures';

describeFixtures('sentry');

const sentry = integrationNamed('sentry')!;
const fixture = (name: string) => loadFixtures('sentry').find((f) => f.name === name)!;
const run = (body: unknown) => runIntegration(sentry, { rawBody: JSON.stringify(body), form: null, headers: {}, query: {} });

describe('sentry', () => {
  it("posts under the title, which the send path cuts to Zulip's 60 characters", () => {
    const { messages } = runIntegration(sentry, fixtureRequest(fixture('event_alert__exception_node')));
    expect(normalizeTopic(messages[0].topic)).toBe("TypeError: Cannot read properties of undefined (reading '...");
  });

  it('passes no event type (only_events and exclude_events do not apply)', () => {
    for (const name of ['issue__created', 'event_alert__message_go', 'plugin__legacy_message']) {
      expect(runIntegration(sentry, fixtureRequest(fixture(name))).event).toBeNull();
    }
  });

  it('reads an empty data object, and a plugin event without an id, as the oldest payload (absent fields print as None)', () => {
    expect(run({ data: {}, level: 'fatal' }).messages).toEqual([
      { topic: 'None', content: 'New [issue](None) (level: FATAL):\n\n``` quote\nNone\n```' },
    ]);
    expect(
      run({ project_name: 'billing', level: 'info', url: 'https://sentry.example/i/1/', message: 'hi', event: { event_id: '' } }).messages,
    ).toEqual([{ topic: 'billing', content: 'New [issue](https://sentry.example/i/1/) (level: INFO):\n\n``` quote\nhi\n```' }]);
  });
});
