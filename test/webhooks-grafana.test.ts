import { ApiError } from '../src/errors';
import { integrationNamed } from '../src/integrations';
import { runIntegration } from '../src/integrations/run';
import { describeFixtures, fixtureRequest, loadFixtures } from './support/webhook-fixtures';

describeFixtures('grafana');

const grafana = integrationNamed('grafana')!;
const fixture = (name: string) => loadFixtures('grafana').find((f) => f.name === name)!;
const run = (body: unknown) => runIntegration(grafana, { rawBody: JSON.stringify(body), form: null, headers: {}, query: {} });

describe('grafana event types (what only_events and exclude_events match)', () => {
  it("is a legacy alert's state", () => {
    expect(runIntegration(grafana, fixtureRequest(fixture('legacy__alerting'))).event).toBe('alerting');
    expect(runIntegration(grafana, fixtureRequest(fixture('legacy__no_data'))).event).toBe('no_data');
  });

  it("is the alerts' status when a group's alerts share it, and none when they differ", () => {
    expect(runIntegration(grafana, fixtureRequest(fixture('unified__firing'))).event).toBe('firing');
    expect(runIntegration(grafana, fixtureRequest(fixture('unified__resolved_grafana8'))).event).toBe('resolved');
    expect(runIntegration(grafana, fixtureRequest(fixture('unified__group_mixed'))).event).toBeNull();
  });
});

describe('grafana states Grafana does not define', () => {
  const legacy = JSON.parse(fixture('legacy__alerting').rawBody!) as Record<string, unknown>;
  const unified = JSON.parse(fixture('unified__firing').rawBody!) as { alerts: Array<Record<string, unknown>> };

  it('refuses an unknown legacy state as Zulip does', () => {
    expect(() => run({ ...legacy, state: 'exploded' })).toThrow(new ApiError('Invalid payload["state"]'));
  });

  it("refuses an unknown alert status, naming the alert's field", () => {
    const alerts = [unified.alerts[0], { ...unified.alerts[0], status: 'pending' }];
    expect(() => run({ ...unified, alerts })).toThrow(new ApiError('Invalid payload["alerts"][1]["status"]'));
  });

  it('posts nothing for a group without alerts', () => {
    expect(run({ ...unified, alerts: [] })).toEqual({ event: null, messages: [] });
  });
});
