import { integrationNamed } from '../src/integrations';
import { runIntegration } from '../src/integrations/run';
import { describeFixtures, fixtureRequest, loadFixtures } from './support/webhook-fixtures';

describeFixtures('pagerduty');

const pagerduty = integrationNamed('pagerduty')!;
const fixture = (name: string) => loadFixtures('pagerduty').find((f) => f.name === name)!;
const eventOf = (name: string) => runIntegration(pagerduty, fixtureRequest(fixture(name))).event;

describe('pagerduty', () => {
  it("names each event by Zulip's action word, as only_events sees them", () => {
    expect(eventOf('triggered__v3')).toBe('triggered');
    expect(eventOf('reassigned__v3')).toBe('reassigned');
    expect(eventOf('resolve__v2')).toBe('resolved');
    expect(eventOf('delegate__v1')).toBe('delineated');
    expect(eventOf('empty__ignored')).toBeNull();
  });

  it("gives a V1 request of several entries its first entry's event", () => {
    const outcome = runIntegration(pagerduty, fixtureRequest(fixture('assign_and_acknowledge__v1')));
    expect(outcome.event).toBe('assigned');
    expect(outcome.messages).toHaveLength(2);
  });

  it('posts nothing for a V2 entry after a V1 one: each generation stops at the first entry of the other', () => {
    const v1 = (fixture('resolve__v1_auto').body as { messages: unknown[] }).messages;
    const v2 = (fixture('resolve__v2').body as { messages: unknown[] }).messages;
    const outcome = runIntegration(pagerduty, {
      rawBody: JSON.stringify({ messages: [...v1, ...v2] }),
      form: null,
      headers: {},
      query: {},
    });
    expect(outcome.messages.map((m) => m.topic)).toEqual(['Incident 59']);
  });
});
