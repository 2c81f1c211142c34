import {
  createBranchMessage,
  isBranchNotifiable,
  issueMessage,
  pullRequestMessage,
  pushCommitsMessage,
  releaseMessage,
  topicWithBranch,
  topicWithPrOrIssue,
  topicWithRelease,
} from './git';
import type { Payload } from './payload';
import { ignore, post, unsupportedEvent, type Integration, type WebhookInput, type WebhookOutcome } from './types';

/**
 * Gitea: a repository's (or organization's) webhook of type "Gitea" POSTs
 * JSON and names the event in `X-Gitea-Event`. Zulip's Gitea integration is
 * its Gogs integration (Gitea began as a fork of Gogs) with Gitea's own
 * pull request payload; so is this one.
 *
 * Posted: push (the commit list, topic "<repo> / <branch>"), create (a
 * branch or tag, told as a branch), pull_request (opened, closed, reopened,
 * edited, synchronized, assigned, merged, …), issues, issue_comment and
 * release. Every other event is unsupported, as in Zulip (branch deletion
 * included). Ignored: pushes to branches outside the `branches` option.
 *
 * Options: `branches` (comma-separated names: only pushes to these are
 * posted). When the URL names a `topic`, the messages carry the pull
 * request's or issue's title themselves.
 *
 * Zulip's quirks kept: the pull request topic numbers the request by its
 * database id, not its number; a release links the repository; an issue
 * comment on a pull request is still told as an issue's.
 */

/** The fields both flavours of message read. */
interface Ctx {
  p: Payload;
  repo: string;
  includeTitle: boolean;
}

const str = (p: Payload, ...path: string[]) => p.at(...path).str();

function issueUrl(c: Ctx, number: number): string {
  return `${str(c.p, 'repository', 'html_url')}/issues/${number}`;
}

function push(c: Ctx, branch: string): string {
  const commits = c.p
    .get('commits')
    .list()
    .map((commit) => ({
      // The author's account name, else the first word of the name in the commit.
      name: str(commit, 'author', 'username') || (str(commit, 'author', 'name').trim().split(/\s+/)[0] ?? ''),
      sha: str(commit, 'id'),
      url: str(commit, 'url'),
      message: str(commit, 'message'),
    }));
  return pushCommitsMessage({
    userName: str(c.p, 'sender', 'username'),
    compareUrl: str(c.p, 'compare_url'),
    branchName: branch,
    commits,
  });
}

function pullRequest(c: Ctx): string {
  const pr = c.p.get('pull_request');
  const merged = pr.get('merged').bool();
  const action = merged ? 'merged' : str(c.p, 'action');
  const assignee = pr.opt('assignee')?.get('login').str() ?? null;
  // An edit is told without the branches.
  const branches = action !== 'edited';
  return pullRequestMessage({
    userName: merged ? str(pr, 'merged_by', 'username') : str(c.p, 'sender', 'username'),
    action,
    url: str(pr, 'html_url'),
    number: pr.get('number').int(),
    targetBranch: branches ? (pr.opt('head')?.get('ref').str() ?? null) : null,
    baseBranch: branches ? (pr.opt('base')?.get('ref').str() ?? null) : null,
    title: c.includeTitle ? str(pr, 'title') : null,
    assignee,
    assigneeUpdated: action === 'assigned' ? assignee : null,
  });
}

function issues(c: Ctx): string {
  const issue = c.p.get('issue');
  const number = issue.get('number').int();
  const action = str(c.p, 'action');
  const assignee = issue.opt('assignee')?.get('login').str() ?? null;
  return issueMessage({
    userName: str(c.p, 'sender', 'login'),
    action,
    url: issueUrl(c, number),
    number,
    message: str(issue, 'body'),
    assignee,
    title: c.includeTitle ? str(issue, 'title') : null,
    assigneeUpdated: action === 'assigned' ? assignee : null,
  });
}

function issueComment(c: Ctx): string {
  const action = str(c.p, 'action');
  const verb = action === 'created' ? '[commented]' : `${action} a [comment]`;
  const number = c.p.at('issue', 'number').int();
  return issueMessage({
    userName: str(c.p, 'sender', 'login'),
    action: `${verb}(${str(c.p, 'comment', 'html_url')}) on`,
    url: issueUrl(c, number),
    number,
    message: str(c.p, 'comment', 'body'),
    title: c.includeTitle ? str(c.p, 'issue', 'title') : null,
  });
}

function handle(input: WebhookInput): WebhookOutcome {
  const p = input.payload;
  // Zulip reads the repository first: a payload without one is a 400 whatever the event.
  const c: Ctx = { p, repo: str(p, 'repository', 'name'), includeTitle: input.option('topic') !== undefined };
  const event = input.header('X-Gitea-Event') ?? '';
  switch (event) {
    case 'push': {
      const branch = str(p, 'ref').replaceAll('refs/heads/', '');
      if (!isBranchNotifiable(branch, input.option('branches'))) return ignore(event);
      return post(event, topicWithBranch(c.repo, branch), push(c, branch));
    }
    case 'create': {
      // Tags too are told as branches, linked to their tree, as in Zulip.
      const ref = str(p, 'ref');
      const body = createBranchMessage(str(p, 'sender', 'username'), `${str(p, 'repository', 'html_url')}/src/${ref}`, ref);
      return post(event, topicWithBranch(c.repo, ref), body);
    }
    case 'pull_request':
      return post(
        event,
        topicWithPrOrIssue(c.repo, 'PR', p.at('pull_request', 'id').int(), str(p, 'pull_request', 'title')),
        pullRequest(c),
      );
    case 'issues':
      return post(event, topicWithPrOrIssue(c.repo, 'issue', p.at('issue', 'number').int(), str(p, 'issue', 'title')), issues(c));
    case 'issue_comment':
      return post(event, topicWithPrOrIssue(c.repo, 'issue', p.at('issue', 'number').int(), str(p, 'issue', 'title')), issueComment(c));
    case 'release': {
      const tag = str(p, 'release', 'tag_name');
      const name = str(p, 'release', 'name');
      const body = releaseMessage(str(p, 'release', 'author', 'username'), str(p, 'action'), tag, name, str(p, 'repository', 'html_url'));
      return post(event, topicWithRelease(c.repo, tag, name), body);
    }
    default:
      throw unsupportedEvent(event);
  }
}

export const gitea: Integration = {
  name: 'gitea',
  displayName: 'Gitea',
  eventHeader: 'X-Gitea-Event',
  handle,
  docs: {
    summary: 'Posts Gitea pushes, new branches, pull requests, issues, comments and releases; one topic per branch, pull request or issue.',
    setup: [
      'In your repository on Gitea, open **Settings** → **Webhooks**, click **Add Webhook** and choose **Gitea**.',
      'Set **Target URL** to the URL below, **HTTP Method** to `POST` and **POST Content Type** to `application/json`.',
      'Choose the events to send (push, create, pull request, issues, issue comment, release) and click **Add Webhook**.',
    ],
    options: [
      {
        name: 'branches',
        description: 'Comma-separated branch names: only pushes to these branches are posted (all branches by default).',
      },
    ],
  },
};
