import { ApiError } from '../src/errors';
import { integrationNamed } from '../src/integrations';
import { runIntegration } from '../src/integrations/run';
import { AnomalousPayloadError } from '../src/integrations/types';
import { describeFixtures, fixtureRequest, loadFixtures } from './support/webhook-fixtures';

describeFixtures('jira');

const jira = integrationNamed('jira')!;
const fixture = (name: string) => loadFixtures('jira').find((f) => f.name === name)!;
const body = (name: string) => structuredClone(fixture(name).body) as Record<string, any>;
const run = (payload: unknown) => runIntegration(jira, { rawBody: JSON.stringify(payload), form: null, headers: {}, query: {} });

describe('jira', () => {
  it('names each event by webhookEvent, ignored ones included', () => {
    expect(runIntegration(jira, fixtureRequest(fixture('issue_updated__status'))).event).toBe('jira:issue_updated');
    expect(runIntegration(jira, fixtureRequest(fixture('comment_deleted__plain'))).event).toBe('comment_deleted');
    expect(runIntegration(jira, fixtureRequest(fixture('worklog_created__ignored')))).toEqual({ event: 'worklog_created', messages: [] });
  });

  it("calls a body without webhookEvent anomalous (not Jira's)", () => {
    const payload = body('issue_created__assigned');
    delete payload.webhookEvent;
    expect(() => run(payload)).toThrow(AnomalousPayloadError);
  });

  it("renders a Jira Server [~username] mention as the name in bold, Zulip's fallback for a name it cannot match", () => {
    const payload = body('comment_created__markup');
    payload.comment.body = 'Over to [~dwhitfield] for review.';
    expect(run(payload).messages[0].content).toContain('``` quote\nOver to **dwhitfield** for review.\n```');
  });

  it("posts the bare key and summary when the issue's REST URL does not show where Jira lives", () => {
    const payload = body('issue_deleted__plain');
    payload.issue.self = 'not a url';
    expect(run(payload).messages[0].content).toBe('Priya Raman deleted PAY-216: Chargeback fees booked twice.');
  });

  it("prints a changelog item's missing values as Python's None", () => {
    const payload = body('issue_updated__status');
    payload.changelog.items = [{ field: 'Sprint', fromString: null, toString: null }];
    expect(run(payload).messages[0].content).toMatch(/\n\n\* Changed Sprint to \*\*None\*\*$/);
  });

  it('answers a missing author with an error naming the field', () => {
    const payload = body('issue_created__assigned');
    delete payload.user.displayName;
    expect(() => run(payload)).toThrow(new ApiError('payload["user"]["displayName"] is missing'));
  });
});
