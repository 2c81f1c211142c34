import { integrationNamed } from '../src/integrations';
import { MissingEventHeaderError, runIntegration } from '../src/integrations/run';
import { UnsupportedEventError } from '../src/integrations/types';
import { describeFixtures, fixtureRequest, loadFixtures } from './support/webhook-fixtures';

describeFixtures('gitlab');

const gitlab = integrationNamed('gitlab')!;
const fixtures = new Map(loadFixtures('gitlab').map((f) => [f.name, f]));

/** Runs a fixture with its query replaced or extended. */
function run(name: string, query: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const f = fixtures.get(name)!;
  const req = fixtureRequest({ ...f, query: { ...f.query, ...query } });
  return runIntegration(gitlab, {
    ...req,
    headers: { ...req.headers, ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) },
  });
}

describe('gitlab event types', () => {
  // Zulip's complete_event_type, which only_events/exclude_events match.
  const cases: Array<[string, string]> = [
    ['push_hook__two_commits', 'Push Hook'],
    ['tag_push_hook__tag_pushed', 'Tag Push Hook'],
    ['issue_hook__opened_with_two_assignees', 'Issue Hook open'],
    ['issue_hook__closed', 'Issue Hook close'],
    ['confidential_issue_hook__opened', 'Confidential Issue Hook open'],
    ['note_hook__commit', 'Note Hook Commit'],
    ['note_hook__merge_request', 'Note Hook MergeRequest'],
    ['confidential_note_hook__issue', 'Confidential Note Hook Issue'],
    ['note_hook__design', 'Note Hook DesignManagement::Design'],
    ['merge_request_hook__opened', 'Merge Request Hook open'],
    ['merge_request_hook__approval', 'Merge Request Hook approval'],
    ['merge_request_hook__commits_added', 'Merge Request Hook update'],
    ['wiki_page_hook__updated', 'Wiki Page Hook update'],
    ['pipeline_hook__running', 'Pipeline Hook'],
    ['job_hook__failed', 'Job Hook'],
    ['build_hook__success', 'Build Hook'],
    ['release_hook__created', 'Release Hook'],
    ['feature_flag_hook__activated', 'Feature Flag Hook'],
    ['resource_access_token_hook__group', 'Resource Access Token Hook'],
    ['deployment_hook__running', 'Deployment Hook'],
    ['test_hook', 'Test Hook'],
    ['system_hook__push', 'Push Hook'],
    ['system_hook__merge_request', 'Merge Request Hook reopen'],
  ];
  it.each(cases)('%s is %s', (name, event) => {
    expect(run(name).event).toBe(event);
  });

  it('an issue or merge request event without an action is an open', () => {
    const f = fixtures.get('merge_request_hook__opened')!;
    const body = structuredClone(f.body) as { object_attributes: Record<string, unknown> };
    delete body.object_attributes.action;
    const outcome = runIntegration(gitlab, fixtureRequest({ ...f, body }));
    expect(outcome.event).toBe('Merge Request Hook open');
    expect(outcome.messages[0].content).toMatch(/^Maren Solberg created \[MR #42\]/);
  });

  it('a request without the event header is refused', () => {
    const f = fixtures.get('push_hook__two_commits')!;
    expect(() => runIntegration(gitlab, { ...fixtureRequest(f), headers: {} })).toThrow(MissingEventHeaderError);
  });

  it('an unknown header is an unsupported event named by the header', () => {
    let thrown: unknown;
    try {
      run('push_hook__two_commits', {}, { 'X-Gitlab-Event': 'Member Hook' });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(UnsupportedEventError);
    expect((thrown as UnsupportedEventError).eventType).toBe('Member Hook');
  });

  it('a deployment status Zulip has no message for is unsupported', () => {
    const f = fixtures.get('deployment_hook__success')!;
    const body = { ...(f.body as object), status: 'blocked' };
    expect(() => runIntegration(gitlab, fixtureRequest({ ...f, body }))).toThrow(
      expect.objectContaining({ eventType: 'Deployment Hook blocked' }) as unknown as Error,
    );
  });
});

describe('gitlab options', () => {
  it('branches: a push to a listed branch is posted, to another is not', () => {
    expect(run('push_hook__two_commits', { branches: 'main' }).messages).toHaveLength(1);
    expect(run('push_hook__two_commits', { branches: 'release/2.4,develop' }).messages).toEqual([]);
    // Whole names only: "mai" does not match "main".
    expect(run('push_hook__two_commits', { branches: 'mai' }).messages).toEqual([]);
    // A deleted branch is a push too.
    expect(run('push_hook__branch_deleted', { branches: 'main' }).messages).toEqual([]);
  });

  it('branches does not filter other events', () => {
    expect(run('merge_request_hook__merged', { branches: 'develop' }).messages).toHaveLength(1);
    expect(run('tag_push_hook__tag_pushed', { branches: 'develop' }).messages).toHaveLength(1);
  });

  it('use_merge_request_title=false names merge requests by number only; other topics keep their titles', () => {
    expect(run('merge_request_hook__merged', { use_merge_request_title: 'false' }).messages[0].topic).toBe('telemetry-agent / MR #42');
    expect(run('merge_request_hook__merged', { use_merge_request_title: 'true' }).messages[0].topic).toBe(
      'telemetry-agent / MR #42 Add a disk I/O collector',
    );
    expect(run('issue_hook__closed', { use_merge_request_title: 'false' }).messages[0].topic).toBe(
      'telemetry-agent / issue #87 Crash on read-only /proc',
    );
  });

  it('a topic in the URL: the message links the project and names the object by title', () => {
    const web = 'https://gitlab.com/orbit-labs/telemetry-agent';
    expect(run('issue_hook__closed', { topic: 'agent alerts' }).messages[0].content).toBe(
      `[[telemetry-agent](${web})] Priya Raman closed [issue #87 Crash on read-only /proc](${web}/-/issues/87).`,
    );
    // A title ending in punctuation gets no extra full stop.
    expect(run('merge_request_hook__closed', { topic: 'agent alerts' }).messages[0].content).toBe(
      `[[telemetry-agent](${web})] Tobias Achterberg closed [MR #43 Switch the config parser to TOML?](${web}/-/merge_requests/43)`,
    );
    expect(run('note_hook__snippet', { topic: 'agent alerts' }).messages[0].content).toMatch(
      new RegExp(
        `^\\[\\[telemetry-agent\\]\\(${web}\\)\\] Priya Raman \\[commented\\]\\(.*\\) on \\[snippet #3788112 Sample agent\\.toml\\]`,
      ),
    );
    // Pushes have no title to add; only the project link.
    expect(run('push_hook__branch_deleted', { topic: 'agent alerts' }).messages[0].content).toBe(
      `[[telemetry-agent](${web})] Maren Solberg deleted branch feature/disk-io.`,
    );
  });

  it('an empty topic in the URL adds titles but no project link, as in Zulip', () => {
    expect(run('issue_hook__reopened', { topic: '' }).messages[0].content).toBe(
      'Tobias Achterberg reopened [issue #87 Crash on read-only /proc](https://gitlab.com/orbit-labs/telemetry-agent/-/issues/87).',
    );
  });
});
