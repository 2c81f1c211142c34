import { ApiError } from '../src/errors';
import { integrationNamed } from '../src/integrations';
import { runIntegration } from '../src/integrations/run';
import { MisconfiguredPayloadError } from '../src/integrations/types';
import { describeFixtures, fixtureRequest, loadFixtures } from './support/webhook-fixtures';

describeFixtures('uptimerobot');

const uptimerobot = integrationNamed('uptimerobot')!;
const fixture = (name: string) => loadFixtures('uptimerobot').find((f) => f.name === name)!;
const run = (body: unknown) => runIntegration(uptimerobot, { rawBody: JSON.stringify(body), form: null, headers: {}, query: {} });

describe('uptimerobot', () => {
  it('names its events up and down, as only_events sees them', () => {
    expect(runIntegration(uptimerobot, fixtureRequest(fixture('down__http'))).event).toBe('down');
    expect(runIntegration(uptimerobot, fixtureRequest(fixture('up__http'))).event).toBe('up');
  });

  it('answers a body missing a field of the message with "Invalid payload" (and a notice to the owner)', () => {
    const { monitor_url: _dropped, ...body } = fixture('down__http').body as Record<string, string>;
    expect(() => run(body)).toThrow(MisconfiguredPayloadError);
    expect(() => run(body)).toThrow('Invalid payload');
    // An Up alert needs its duration too; a Down one does not.
    const up = { ...(fixture('up__http').body as Record<string, unknown>), alert_friendly_duration: null };
    expect(() => run(up)).toThrow(MisconfiguredPayloadError);
  });

  it('answers a body without the alert type with the usual error naming it', () => {
    const { alert_type_friendly_name: _dropped, ...body } = fixture('down__http').body as Record<string, string>;
    expect(() => run(body)).toThrow(new ApiError('payload["alert_type_friendly_name"] is missing'));
  });
});
