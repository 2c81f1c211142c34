import { ApiError } from '../src/errors';
import { integrationNamed } from '../src/integrations';
import { MissingEventHeaderError, runIntegration } from '../src/integrations/run';
import { describeFixtures, fixtureRequest, loadFixtures, runFixture } from './support/webhook-fixtures';

describeFixtures('gitea');

const gitea = integrationNamed('gitea')!;
const fixtures = new Map(loadFixtures('gitea').map((f) => [f.name, f]));

const run = (name: string, query: Record<string, string> = {}, edit?: (body: Record<string, unknown>) => void) =>
  runFixture(gitea, fixtures.get(name)!, { query, edit });

describe('gitea: a topic in the URL puts the title in the message', () => {
  it('names the pull request, the issue and the commented issue in their links', () => {
    const withTopic = { topic: 'firmware' };
    expect(run('pull_request__merged', withTopic).messages[0].content).toBe(
      'anneke merged [PR #12 OTA updates over the satellite modem](https://git.harbor-labs.dev/harbor-labs/buoy-firmware/pulls/12)' +
        ' from `feature/ota-updates` to `main`.',
    );
    expect(run('issues__closed', withTopic).messages[0].content).toBe(
      'anneke closed [issue #31 Watchdog resets during OTA write](https://git.harbor-labs.dev/harbor-labs/buoy-firmware/issues/31) (assigned to wen-li).',
    );
    expect(run('issue_comment__created', withTopic).messages[0].content).toMatch(
      / on \[issue #31 Watchdog resets during OTA write\]\(https:\/\/git\.harbor-labs\.dev\/harbor-labs\/buoy-firmware\/issues\/31\):\n/,
    );
  });

  it('adds no full stop after an edited pull request whose title ends in punctuation', () => {
    const out = run('pull_request__edited', { topic: 'firmware' }, (b) => {
      (b.pull_request as Record<string, unknown>).title = 'OTA updates (part 2)';
    });
    expect(out.messages[0].content).toBe(
      'wen-li edited [PR #12 OTA updates (part 2)](https://git.harbor-labs.dev/harbor-labs/buoy-firmware/pulls/12)',
    );
  });
});

describe('gitea: options, the event header and event types', () => {
  it('branches only filters pushes', () => {
    expect(run('create__branch', { branches: 'main' }).messages).toHaveLength(1);
    expect(run('pull_request__opened', { branches: 'main' }).messages).toHaveLength(1);
    expect(run('push__22_commits', { branches: 'calibration' }).messages).toHaveLength(1);
    expect(run('push__22_commits', { branches: 'calib' }).messages).toEqual([]);
  });

  it('needs the X-Gitea-Event header', () => {
    const headerless = { ...fixtures.get('push__3_commits')!, headers: {} };
    expect(() => runIntegration(gitea, fixtureRequest(headerless))).toThrow(new MissingEventHeaderError('X-Gitea-Event'));
  });

  it('names each posted event by the X-Gitea-Event header', () => {
    const posted = [...fixtures.values()].filter((f) => 'topic' in f.expect);
    expect(posted.length).toBeGreaterThan(10);
    for (const f of posted) expect(run(f.name).event).toBe(f.headers!['X-Gitea-Event']);
  });
});

describe('gitea: requests it cannot read', () => {
  it('reads the repository first, as Zulip does: without one even an unsupported event is a 400', () => {
    expect(() =>
      run('delete__branch', {}, (b) => {
        delete b.repository;
      }),
    ).toThrow(new ApiError('payload["repository"] is missing'));
  });
});
