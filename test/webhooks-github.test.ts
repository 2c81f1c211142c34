import { ApiError } from '../src/errors';
import { integrationNamed } from '../src/integrations';
import { MissingEventHeaderError, runIntegration } from '../src/integrations/run';
import { describeFixtures, fixtureRequest, loadFixtures, runFixture } from './support/webhook-fixtures';

describeFixtures('github');

const github = integrationNamed('github')!;
const fixtures = new Map(loadFixtures('github').map((f) => [f.name, f]));

const run = (name: string, query: Record<string, string> = {}, edit?: (body: Record<string, unknown>) => void) =>
  runFixture(github, fixtures.get(name)!, { query, edit });

const content = (name: string, query: Record<string, string> = {}) => run(name, query).messages[0].content;

describe('github: a topic in the URL puts the title in the message', () => {
  const withTopic = { topic: 'code review' };

  it('names the pull request in its link', () => {
    expect(content('pull_request__closed_merged', withTopic)).toBe(
      'mirela-voss merged [PR #412 Add sonar depth sync to buoy firmware](https://github.com/harbor-labs/tidepool/pull/412).',
    );
    expect(content('pull_request__opened_with_assignee', withTopic)).toBe(
      'jun-takeda opened [PR #415 Retry uploads on flaky satellite links](https://github.com/harbor-labs/tidepool/pull/415)' +
        ' from `jun-takeda:retry-uploads` to `harbor-labs:main` (assigned to mirela-voss).',
    );
    expect(content('pull_request__review_requested', withTopic)).toBe(
      '**okafor-dev** requested [mirela-voss](https://github.com/mirela-voss) for a review on' +
        ' [PR #412 Add sonar depth sync to buoy firmware](https://github.com/harbor-labs/tidepool/pull/412).',
    );
  });

  it('names the issue, the review and the review comment in their links', () => {
    expect(content('issues__opened', withTopic)).toMatch(
      /^jun-takeda opened \[issue #398 Buoy clock drifts after deep sleep\]\(https:\/\/github\.com\/harbor-labs\/tidepool\/issues\/398\):\n\n~~~ quote\n/,
    );
    expect(content('issue_comment__created', withTopic)).toMatch(/ on \[issue #398 Buoy clock drifts after deep sleep\]\(/);
    expect(content('issues__labeled', withTopic)).toBe(
      '[mirela-voss](https://github.com/mirela-voss) added the firmware label to' +
        ' [Issue #398 Buoy clock drifts after deep sleep](https://github.com/harbor-labs/tidepool/issues/398).',
    );
    expect(content('pull_request_review__empty_body', withTopic)).toBe(
      'jun-takeda submitted [PR review for #412 Add sonar depth sync to buoy firmware](https://github.com/harbor-labs/tidepool/pull/412#pullrequestreview-2087350001).',
    );
    expect(content('pull_request_review_comment__edited', withTopic)).toBe(
      'mirela-voss edited [PR review comment on #412 Add sonar depth sync to buoy firmware](https://github.com/harbor-labs/tidepool/pull/412#discussion_r1623456789).',
    );
  });

  it('adds no full stop after a title that ends in punctuation', () => {
    const out = run('issues__closed', withTopic, (b) => {
      (b.issue as Record<string, unknown>).title = 'Why does the clock drift?';
    });
    expect(out.messages[0].content).toBe(
      'mirela-voss closed [issue #398 Why does the clock drift?](https://github.com/harbor-labs/tidepool/issues/398)',
    );
    // Branch information ends the sentence instead, which then takes its full stop.
    const opened = run('pull_request__opened_with_assignee', withTopic, (b) => {
      (b.pull_request as Record<string, unknown>).title = 'Retry uploads!';
    });
    expect(opened.messages[0].content).toMatch(/\(assigned to mirela-voss\)\.$/);
  });

  it('leaves the messages without titles when no topic is given', () => {
    expect(content('pull_request__closed_merged')).toBe('mirela-voss merged [PR #412](https://github.com/harbor-labs/tidepool/pull/412).');
  });
});

describe('github: options', () => {
  it('ignore_private_repositories=false posts events of private repositories', () => {
    expect(run('push__private_repository_ignored', { ignore_private_repositories: 'false' }).messages).toHaveLength(1);
    expect(run('issues__private_repository_ignored', { ignore_private_repositories: 'false' }).messages[0].topic).toBe(
      'tidepool / issue #398 Buoy clock drifts after deep sleep',
    );
  });

  it('ignores private repositories before looking at the event, unsupported ones included', () => {
    const out = run('workflow_run__completed', { ignore_private_repositories: 'true' }, (b) => {
      (b.repository as Record<string, unknown>).private = true;
    });
    expect(out.messages).toEqual([]);
  });

  it('branches does not filter pull requests or issues', () => {
    expect(run('pull_request__opened', { branches: 'develop' }).messages).toHaveLength(1);
  });
});

describe('github: event types (what only_events and exclude_events match)', () => {
  it.each([
    ['push__1_commit', 'push_commits'],
    ['push__tag', 'push_tags'],
    ['pull_request__opened', 'opened_pull_request'],
    ['pull_request__reopened', 'opened_pull_request'],
    ['pull_request__synchronize', 'updated_pull_request'],
    ['pull_request__closed_merged', 'closed_pull_request'],
    ['pull_request__assigned', 'assigned_or_unassigned_pull_request'],
    ['pull_request__review_requested', 'pull_request_review_requested'],
    ['pull_request__locked', 'locked_or_unlocked_pull_request'],
    ['pull_request__auto_merge_enabled', 'pull_request_auto_merge'],
    ['issues__opened', 'issues'],
    ['issues__labeled', 'issue_labeled_or_unlabeled'],
    ['issues__milestoned', 'issue_milestoned_or_demilestoned'],
    ['issues__transferred', 'issues_transferred'],
    ['issues__opened_via_transfer', 'issues_opened_via_transfer'],
    ['issue_comment__pull_request', 'issue_comment'],
    ['star__created', 'star'],
    ['sponsorship__created', 'created'],
    ['tier_changed__action_as_event', 'tier_changed'],
  ])('%s is %s', (name, event) => {
    expect(run(name).event).toBe(event);
  });
});

describe('github: requests it cannot read', () => {
  it('needs the X-GitHub-Event header', () => {
    const headerless = { ...fixtures.get('push__1_commit')!, headers: {} };
    expect(() => runIntegration(github, fixtureRequest(headerless))).toThrow(new MissingEventHeaderError('X-GitHub-Event'));
  });

  it('answers a payload without the fields it needs with a 400 naming the field', () => {
    expect(() =>
      run('issues__opened', {}, (b) => {
        delete (b.issue as Record<string, unknown>).number;
      }),
    ).toThrow(new ApiError('payload["issue"]["number"] is missing'));
    // The repository's privacy is read whenever there is a repository, as Zulip reads it.
    expect(() =>
      run('star__created', {}, (b) => {
        delete (b.repository as Record<string, unknown>).private;
      }),
    ).toThrow(new ApiError('payload["repository"]["private"] is missing'));
  });
});

describe('githubsponsors', () => {
  it('is the GitHub integration at its own URL', () => {
    const sponsors = integrationNamed('githubsponsors')!;
    const out = runIntegration(sponsors, fixtureRequest(fixtures.get('sponsorship__pending_tier_change')!));
    expect(out.messages).toEqual([
      { topic: 'sponsors', content: "lumen-ferry's subscription will change from $25 a month to $10 a month on December 31, 2026." },
    ]);
    expect(sponsors.displayName).toBe('GitHub');
  });
});
