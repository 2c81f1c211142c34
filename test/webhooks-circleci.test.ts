import { ApiError } from '../src/errors';
import { integrationNamed } from '../src/integrations';
import { runIntegration } from '../src/integrations/run';
import { describeFixtures, fixtureRequest, loadFixtures } from './support/webhook-fixtures';

describeFixtures('circleci');

const circleci = integrationNamed('circleci')!;
const fixture = (name: string) => loadFixtures('circleci').find((f) => f.name === name)!;
const run = (body: unknown) => runIntegration(circleci, { rawBody: JSON.stringify(body), form: null, headers: {}, query: {} });

describe('circleci', () => {
  it("names each event by the payload's type", () => {
    expect(runIntegration(circleci, fixtureRequest(fixture('workflow_completed__github_success'))).event).toBe('workflow-completed');
    expect(runIntegration(circleci, fixtureRequest(fixture('job_completed__gitlab_success'))).event).toBe('job-completed');
    expect(runIntegration(circleci, fixtureRequest(fixture('ping__test'))).event).toBe('ping');
  });

  it('refuses a type other than ping, workflow-completed and job-completed with a 400 (not an unsupported event)', () => {
    const body = { ...(fixture('workflow_completed__github_success').body as object), type: 'job-started' };
    expect(() => run(body)).toThrow(new ApiError('Invalid payload["type"]'));
  });

  it("no longer reads CircleCI's legacy build payloads", () => {
    const legacy = {
      payload: {
        reponame: 'ledger-service',
        build_url: 'https://circleci.com/gh/orbitworks/ledger-service/77',
        username: 'meilin',
        branch: 'main',
        status: 'success',
        previous: null,
      },
    };
    expect(() => run(legacy)).toThrow(new ApiError('payload["type"] is missing'));
  });

  it('refuses a pipeline triggered through a provider other than GitHub, Bitbucket and GitLab', () => {
    const body = structuredClone(fixture('job_completed__gitlab_success').body) as { pipeline: { trigger: { type: string } } };
    body.pipeline.trigger.type = 'azure';
    expect(() => run(body)).toThrow(new ApiError("Projects using this version control system provider aren't supported"));
  });

  it("prints an outcome Zulip does not know as Python's None", () => {
    const body = structuredClone(fixture('job_completed__github_failed').body) as { job: { status: string } };
    body.job.status = 'infrastructure_fail';
    expect(run(body).messages[0].content).toMatch(/^Job `integration-tests` within Pipeline #483 None\.\n\n/);
  });
});
