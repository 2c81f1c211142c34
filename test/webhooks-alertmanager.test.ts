import { ApiError } from '../src/errors';
import { integrationNamed } from '../src/integrations';
import { runIntegration } from '../src/integrations/run';
import { describeFixtures, fixtureRequest, loadFixtures } from './support/webhook-fixtures';

describeFixtures('alertmanager');

const alertmanager = integrationNamed('alertmanager')!;
const grouped = loadFixtures('alertmanager').find((f) => f.name === 'firing__grouped_by_instance')!;
const run = (query: Record<string, string>, body: unknown = grouped.body) =>
  runIntegration(alertmanager, { ...fixtureRequest(grouped), rawBody: JSON.stringify(body), query });

describe('alertmanager options', () => {
  it('groups by another label when `name` names it, and describes with another when `desc` does', () => {
    const { messages } = run({ name: 'alertname', desc: 'instance' });
    expect(messages.map((m) => m.topic)).toEqual(['NodeFilesystemAlmostFull', 'NodeHighLoad']);
    expect(messages[0].content).toMatch(/^:alert: \*\*FIRING\*\*\n\* storage-4:9100 \(\[source\]\(.*\)\)\n\* storage-5:9100 \(\[source\]/);
    expect(messages[1].content).toMatch(/^:alert: \*\*FIRING\*\* storage-4:9100 \(\[source\]/);
  });

  it('reads a description from the annotations when no label has the name', () => {
    const { messages } = run({ desc: 'summary' });
    expect(messages[1]).toEqual({
      topic: 'storage-5:9100',
      content: expect.stringMatching(/^:alert: \*\*FIRING\*\* Filesystem \/srv on storage-5 has 9% space left \(\[source\]/),
    });
  });

  it('passes no event type (only_events and exclude_events do not apply)', () => {
    expect(run({}).event).toBeNull();
  });

  it('refuses an alert state Alertmanager does not send', () => {
    const body = grouped.body as { alerts: Array<Record<string, unknown>> };
    const alerts = [body.alerts[0], { ...body.alerts[1], status: 'pending' }];
    expect(() => run({}, { ...body, alerts })).toThrow(new ApiError('Invalid payload["alerts"][1]["status"]'));
  });
});
