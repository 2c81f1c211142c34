import {
  allCommitters,
  commitCommentMessage,
  commitsContent,
  createBranchMessage,
  forcePushCommitsMessage,
  isBranchNotifiable,
  issueMessage,
  pullRequestMessage,
  pushCommitsMessage,
  pushTagMessage,
  releaseMessageWithoutUser,
  removeBranchMessage,
  setupMessage,
  topicWithPrOrIssue,
  topicWithRelease,
  type CommitData,
} from '../src/integrations/git';

/**
 * The shared git messages, in the cases the GitHub and Gitea fixtures do
 * not reach (GitLab and the other git services use them too).
 */

const commit = (name: string, n: number): CommitData => ({
  name,
  sha: `${n}`.padStart(2, '0').repeat(20),
  url: `https://git.example/c/${n}`,
  message: `Change ${n}\n\nmore`,
});

describe('git: pushes', () => {
  it('says "and more" without a count when the service truncated the list itself', () => {
    expect(commitsContent([commit('ada', 1)], true)).toBe('* Change 1 ([01010101010](https://git.example/c/1))\n[and more commit(s)]');
  });

  it('links the repository when given one, and does without a compare URL', () => {
    expect(
      pushCommitsMessage({
        userName: 'ada',
        compareUrl: 'https://git.example/compare',
        branchName: 'main',
        commits: [commit('ada', 1)],
        repositoryName: 'engine',
        repositoryUrl: 'https://git.example/engine',
      }),
    ).toBe(
      'ada [pushed](https://git.example/compare) 1 commit to branch main of [engine](https://git.example/engine).\n\n' +
        '* Change 1 ([01010101010](https://git.example/c/1))',
    );
    expect(
      pushCommitsMessage({ userName: 'ada', compareUrl: null, branchName: 'main', commits: [commit('ada', 1), commit('ada', 2)] }),
    ).toBe(
      'ada pushed 2 commits to branch main.\n\n* Change 1 ([01010101010](https://git.example/c/1))\n* Change 2 ([02020202020](https://git.example/c/2))',
    );
    expect(pushCommitsMessage({ userName: 'ada', compareUrl: null, branchName: 'main', commits: [] })).toBe('ada pushed the branch main.');
  });

  it('orders committers by commits then name, and sums those beyond three as others', () => {
    const commits = ['eve', 'bob', 'cy', 'cy', 'al', 'dan', 'dan', 'dan'].map((n, i) => commit(n, i));
    expect(allCommitters(commits)).toEqual([
      ['dan', 3],
      ['cy', 2],
      ['al', 1],
      ['others', 2],
    ]);
  });

  it('tells force pushes, created and removed branches and tags', () => {
    expect(forcePushCommitsMessage('ada', 'https://git.example/c', 'main', 'abc1234')).toBe(
      'ada [force pushed](https://git.example/c) to branch main. Head is now abc1234.',
    );
    expect(createBranchMessage('ada', null, 'topic')).toBe('ada created topic branch.');
    expect(removeBranchMessage('ada', 'topic')).toBe('ada deleted branch topic.');
    expect(pushTagMessage('ada', 'v1.0', 'https://git.example/t/v1.0')).toBe('ada pushed tag [v1.0](https://git.example/t/v1.0).');
    // A tag ending in punctuation ends the sentence itself.
    expect(pushTagMessage('ada', 'nightly-', null, 'removed')).toBe('ada removed tag nightly-');
  });

  it('filters branches by whole names', () => {
    expect(isBranchNotifiable('main', undefined)).toBe(true);
    expect(isBranchNotifiable('main', ' dev ,  main ')).toBe(true);
    expect(isBranchNotifiable('main', 'main-2')).toBe(false);
    expect(isBranchNotifiable('main', '')).toBe(false);
  });
});

describe('git: merge requests and issues', () => {
  const url = 'https://git.example/mr/5';

  it('lists several assignees and quotes the description', () => {
    expect(
      pullRequestMessage({
        userName: 'ada',
        action: 'opened',
        url,
        number: 5,
        targetBranch: 'feature',
        baseBranch: 'main',
        message: 'Body',
        assignees: ['bob', 'cy', 'dan'],
        type: 'MR',
      }),
    ).toBe('ada opened [MR #5](https://git.example/mr/5) from `feature` to `main` (assigned to bob, cy and dan):\n\n~~~ quote\nBody\n~~~');
  });

  it('spells out approvals', () => {
    expect(pullRequestMessage({ userName: 'ada', action: 'approval', url, number: 5, type: 'MR' })).toBe(
      'ada added their approval for [MR #5](https://git.example/mr/5).',
    );
    expect(pullRequestMessage({ userName: 'ada', action: 'unapproval', url, number: 5, type: 'MR' })).toBe(
      'ada removed their approval for [MR #5](https://git.example/mr/5).',
    );
  });

  it('names reviewers, and like Zulip leaves out the full stop after a title ending in punctuation even then', () => {
    expect(pullRequestMessage({ userName: 'ada', action: 'updated', url, number: 5, reviewer: 'bob' })).toBe(
      'ada updated [PR #5](https://git.example/mr/5) (assigned reviewers: bob).',
    );
    expect(pullRequestMessage({ userName: 'ada', action: 'updated', url, number: 5, reviewer: 'bob', title: 'Fix it!' })).toBe(
      'ada updated [PR #5 Fix it!](https://git.example/mr/5) (assigned reviewers: bob)',
    );
  });

  it('tells who was assigned, and writes a missing name as Zulip does', () => {
    expect(issueMessage({ userName: 'ada', action: 'unassigned', url, number: 9, assigneeUpdated: 'bob' })).toBe(
      'ada unassigned bob from [issue #9](https://git.example/mr/5).',
    );
    expect(issueMessage({ userName: 'ada', action: 'assigned', url, number: 9 })).toBe(
      'ada assigned None to [issue #9](https://git.example/mr/5).',
    );
  });

  it('leaves the number out when there is none', () => {
    expect(pullRequestMessage({ userName: 'ada', action: 'closed', url })).toBe('ada closed [PR](https://git.example/mr/5).');
  });
});

describe('git: the rest', () => {
  it('builds commit comments, releases, setup messages and topics', () => {
    expect(commitCommentMessage('ada', '[commented](https://git.example/n)', 'https://git.example/c', 'abcdef0123456789')).toBe(
      'ada [commented](https://git.example/n) on [abcdef01234](https://git.example/c).',
    );
    expect(releaseMessageWithoutUser('published', 'v2', 'Two', null)).toBe('Release Two for tag v2 was published.');
    expect(releaseMessageWithoutUser('created', 'v2', 'Two', 'https://git.example/r')).toBe(
      'Release [Two](https://git.example/r) for tag v2 was created.',
    );
    expect(setupMessage('GitLab')).toBe('GitLab webhook has been successfully configured.');
    expect(topicWithPrOrIssue('engine', 'MR', 5, 'Speed up')).toBe('engine / MR #5 Speed up');
    expect(topicWithRelease('engine', 'v2', 'Two')).toBe('engine / v2 Two');
  });
});
