import { ApiError } from '../errors';
import {
  commitCommentMessage,
  issueLabeledMessage,
  issueMessage,
  issueMilestonedMessage,
  pullRequestMessage,
  pushCommitsMessage,
  pushTagMessage,
  quoteContent,
  releaseMessage,
  setupMessage,
  shortSha,
  isBranchNotifiable,
  topicWithBranch,
  topicWithPrOrIssue,
} from './git';
import type { Payload } from './payload';
import { ignore, post, unsupportedEvent, type Integration, type WebhookInput, type WebhookOutcome } from './types';

/**
 * GitHub: a repository's, an organization's or a GitHub App's webhook POSTs
 * JSON, naming the event in `X-GitHub-Event` (push, pull_request, issues,
 * issue_comment, …) and refining it with the payload's `action`.
 *
 * Posted, as Zulip's GitHub integration posts them: pushes of commits (by
 * branch, with the commit list), tag pushes, branch and tag creation and
 * deletion, pull requests (opened, reopened, edited, synchronize, closed or
 * merged, assigned, unassigned, review_requested, ready_for_review,
 * locked, unlocked, auto merge), pull request reviews and review comments,
 * issues (opened, closed, edited, assigned, labeled, milestoned,
 * transferred, …), issue and pull request comments, commit comments,
 * releases, forks, stars (watch and star), ping, member, membership,
 * public, repository, team, team_add, deployments, status, check runs,
 * page builds, wiki pages (gollum), discussions and their comments, and
 * GitHub Sponsors' sponsorship events.
 *
 * Ignored (answered with success, nothing posted), as Zulip ignores them:
 * check_suite, label, meta, milestone, organization, project_card and
 * repository_vulnerability_alert; the pull_request actions approved,
 * converted_to_draft, labeled, unlabeled and review_request_removed; team
 * created/deleted/added_to_repository/removed_from_repository; check runs
 * not yet completed; the merge queue's pushes (gh-readonly-queue/…); the
 * empty "edited" review GitHub sends after each submitted review; comment
 * edits that leave the body unchanged; pushes to branches outside the
 * `branches` option; everything from a private repository with
 * `ignore_private_repositories=true`. Other events are unsupported.
 *
 * Options: `branches` (comma-separated names: only pushes to these are
 * posted), `ignore_private_repositories`. When the URL names a `topic`,
 * the messages name the pull request or issue's title themselves (the
 * topic no longer does), as Zulip's do.
 */

/** GitHub Sponsors' sponsorship actions, which Zulip takes as event names of their own. */
const SPONSORS_EVENTS = ['cancelled', 'created', 'edited', 'pending_cancellation', 'pending_tier_change', 'tier_changed'];

/** Events GitHub sends that Zulip's integration deliberately posts nothing for. */
const IGNORED_EVENTS = [
  'check_suite',
  'label',
  'meta',
  'milestone',
  'organization',
  'project_card',
  'push__merge_queue',
  'repository_vulnerability_alert',
];

const IGNORED_PULL_REQUEST_ACTIONS = ['approved', 'converted_to_draft', 'labeled', 'review_request_removed', 'unlabeled'];

const IGNORED_TEAM_ACTIONS = ['added_to_repository', 'created', 'deleted', 'removed_from_repository'];

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** One request: the payload and whether the messages carry titles (the URL named a topic). */
class Ctx {
  constructor(
    readonly p: Payload,
    readonly includeTitle: boolean,
  ) {}

  str(...path: string[]): string {
    return this.p.at(...path).str();
  }

  int(...path: string[]): number {
    return this.p.at(...path).int();
  }

  get action(): string {
    return this.str('action');
  }

  get sender(): string {
    return this.str('sender', 'login');
  }

  get senderUrl(): string {
    return this.str('sender', 'html_url');
  }

  get repoName(): string {
    return this.str('repository', 'name');
  }

  get repoFullName(): string {
    return this.str('repository', 'full_name');
  }

  get repoUrl(): string {
    return this.str('repository', 'html_url');
  }

  /** The title, or null when the topic carries it. */
  title(...path: string[]): string | null {
    return this.includeTitle ? this.str(...path) : null;
  }
}

/** A field that may be null (a body, a description): null then, as Zulip's check_none_or. */
function nullableStr(p: Payload, key: string): string | null {
  return p.opt(key)?.str() ?? null;
}

const branchOfRef = (ref: string) => ref.replace(/^refs\/heads\//, '');
const tagOfRef = (ref: string) => ref.replace(/^refs\/tags\//, '');

/** "[commented](url) on" for a new comment, "<action> a [comment](url) on" otherwise. */
function commentAction(c: Ctx): string {
  const action = c.action;
  const verb = action === 'created' ? '[commented]' : `${action} a [comment]`;
  return `${verb}(${c.str('comment', 'html_url')}) on`;
}

/** The issue is a pull request's conversation (GitHub sends its comments as issue_comment). */
function isPullRequestComment(c: Ctx): boolean {
  return c.p.get('issue').has('pull_request');
}

/** The sender and the event's pull request or issue, as the message builders take them. */
function about(c: Ctx, key: 'pull_request' | 'issue') {
  return { userName: c.sender, url: c.str(key, 'html_url'), number: c.int(key, 'number'), title: c.title(key, 'title') };
}

// Pull requests.

function prOpenedOrUpdated(c: Ctx): string {
  const pr = c.p.get('pull_request');
  const action = c.action === 'synchronize' ? 'updated' : c.action;
  // The description is shown when the PR is opened or its body was edited.
  const showBody = c.p.opt('changes')?.has('body') === true || action === 'opened';
  const withBranches = action === 'opened' || action === 'merged';
  return pullRequestMessage({
    userName: c.sender,
    action,
    url: pr.get('html_url').str(),
    number: pr.get('number').int(),
    targetBranch: withBranches ? pr.at('head', 'label').str() : null,
    baseBranch: withBranches ? pr.at('base', 'label').str() : null,
    message: showBody ? nullableStr(pr, 'body') : null,
    assignee: pr.opt('assignee')?.get('login').str() ?? null,
    title: c.title('pull_request', 'title'),
  });
}

function prAssignedOrUnassigned(c: Ctx): string {
  return pullRequestMessage({ ...about(c, 'pull_request'), action: c.action, assigneeUpdated: c.str('assignee', 'login') });
}

function prClosed(c: Ctx): string {
  const action = c.p.at('pull_request', 'merged').bool() ? 'merged' : 'closed without merge';
  return pullRequestMessage({ ...about(c, 'pull_request'), action });
}

/** "[PR #n](url)" of the event's pull request. */
function prLink(c: Ctx): string {
  return `[PR #${c.int('pull_request', 'number')}](${c.str('pull_request', 'html_url')})`;
}

function prLockedOrUnlocked(c: Ctx): string {
  if (c.action === 'unlocked') return `${c.sender} has unlocked ${prLink(c)}.`;
  // A lock without a reason reads "as None", as Zulip's does.
  const reason = nullableStr(c.p.get('pull_request'), 'active_lock_reason') || 'None';
  return `${c.sender} has locked ${prLink(c)} as ${reason} and limited conversation to collaborators.`;
}

function prAutoMerge(c: Ctx): string {
  const verb = c.action === 'auto_merge_disabled' ? 'disabled' : 'enabled';
  return `${c.sender} has ${verb} auto merge for ${prLink(c)}.`;
}

function prReadyForReview(c: Ctx): string {
  return `**${c.sender}** has marked ${prLink(c)} as ready for review.`;
}

function prReviewRequested(c: Ctx): string {
  const reviewer = c.p.opt('requested_reviewer');
  const reviewers = reviewer
    ? `[${reviewer.get('login').str()}](${reviewer.get('html_url').str()})`
    : `[${c.str('requested_team', 'name')}](${c.str('requested_team', 'html_url')})`;
  const title = c.title('pull_request', 'title');
  const pr = `[PR #${c.int('pull_request', 'number')}${title !== null ? ` ${title}` : ''}](${c.str('pull_request', 'html_url')})`;
  return `**${c.sender}** requested ${reviewers} for a review on ${pr}.`;
}

function prReview(c: Ctx): string {
  return pullRequestMessage({
    userName: c.sender,
    action: 'submitted',
    url: c.str('review', 'html_url'),
    type: 'PR review',
    title: c.includeTitle ? `for #${c.int('pull_request', 'number')} ${c.str('pull_request', 'title')}` : null,
    message: nullableStr(c.p.get('review'), 'body'),
  });
}

function prReviewComment(c: Ctx): string {
  const action = c.action;
  return pullRequestMessage({
    userName: c.sender,
    action,
    url: c.str('comment', 'html_url'),
    message: action === 'created' ? c.str('comment', 'body') : null,
    type: 'PR review comment',
    title: c.includeTitle ? `on #${c.int('pull_request', 'number')} ${c.str('pull_request', 'title')}` : null,
  });
}

// Issues and comments.

function issueEvent(c: Ctx): string {
  const action = c.action;
  const issue = c.p.get('issue');
  return issueMessage({
    userName: c.sender,
    action,
    url: issue.get('html_url').str(),
    number: issue.get('number').int(),
    message: action === 'assigned' || action === 'unassigned' ? null : nullableStr(issue, 'body'),
    title: c.title('issue', 'title'),
    assigneeUpdated: c.p.has('assignee') ? c.str('assignee', 'login') : null,
  });
}

function issueComment(c: Ctx): string {
  return pullRequestMessage({
    ...about(c, 'issue'),
    action: commentAction(c),
    message: c.str('comment', 'body'),
    type: isPullRequestComment(c) ? 'PR' : 'issue',
  });
}

/** A label or milestone added to the issue (the action `adding`) or removed from it. */
function issueChange(c: Ctx, adding: string) {
  return { ...about(c, 'issue'), userUrl: c.senderUrl, action: c.action === adding ? 'added' : 'removed' };
}

const issueLabeled = (c: Ctx) => issueLabeledMessage({ ...issueChange(c, 'labeled'), labelName: c.str('label', 'name') });

const issueMilestoned = (c: Ctx) =>
  issueMilestonedMessage({
    ...issueChange(c, 'milestoned'),
    milestoneName: c.str('milestone', 'title'),
    milestoneUrl: c.str('milestone', 'html_url'),
  });

function issueTransferred(c: Ctx): string {
  const issue = `[issue #${c.int('issue', 'number')} ${c.str('issue', 'title')}](${c.str('issue', 'html_url')})`;
  const repo = c.str('changes', 'new_repository', 'full_name');
  return `${c.sender} transferred ${issue} to [${repo}/#${c.int('changes', 'new_issue', 'number')}](${c.str('changes', 'new_issue', 'html_url')}).`;
}

function issueOpenedViaTransfer(c: Ctx): string {
  const issue = `[Issue #${c.int('issue', 'number')} ${c.str('issue', 'title')}](${c.str('issue', 'html_url')})`;
  const repo = c.str('changes', 'old_repository', 'full_name');
  return `${issue} was transferred from [${repo}#${c.int('changes', 'old_issue', 'number')}](${c.str('changes', 'old_issue', 'html_url')}).`;
}

function commitComment(c: Ctx): string {
  const commentUrl = c.str('comment', 'html_url');
  return commitCommentMessage(
    c.sender,
    `[commented](${commentUrl})`,
    commentUrl.split('#')[0],
    c.str('comment', 'commit_id'),
    c.str('comment', 'body'),
  );
}

// Pushes, branches, tags, releases.

function pushCommits(c: Ctx): string {
  const commits = c.p
    .get('commits')
    .list()
    .map((commit) => {
      const author = commit.get('author');
      return {
        // The GitHub login when the author has one, else the name in the commit.
        name: author.opt('username')?.str() || author.get('name').str(),
        sha: commit.get('id').str(),
        url: commit.get('url').str(),
        message: commit.get('message').str(),
      };
    });
  return pushCommitsMessage({
    userName: c.sender,
    compareUrl: c.str('compare'),
    branchName: branchOfRef(c.str('ref')),
    commits,
    deleted: c.p.get('deleted').bool(),
    forcePush: c.p.get('forced').bool(),
  });
}

function pushTags(c: Ctx): string {
  return pushTagMessage(c.sender, tagOfRef(c.str('ref')), null, c.p.get('created').bool() ? 'pushed' : 'removed');
}

const createOrDelete = (verb: string) => (c: Ctx) => `${c.sender} ${verb} ${c.str('ref_type')} ${c.str('ref')}.`.trimEnd();

function release(c: Ctx): string {
  // A release without a name is shown by its tag.
  const name = nullableStr(c.p.get('release'), 'name') || c.str('release', 'tag_name');
  return releaseMessage(c.sender, c.action, c.str('release', 'tag_name'), name, c.str('release', 'html_url'));
}

// Repository, organization and the rest.

const fork = (c: Ctx) => `${c.sender} forked [${c.str('forkee', 'name')}](${c.str('forkee', 'html_url')}).`;
const watch = (c: Ctx) => `${c.sender} starred the repository [${c.repoFullName}](${c.repoUrl}).`;
const publicized = (c: Ctx) => `${c.sender} made the repository [${c.repoFullName}](${c.repoUrl}) public.`;
const repository = (c: Ctx) => `${c.sender} ${c.action} the repository [${c.repoFullName}](${c.repoUrl}).`;
const teamAdd = (c: Ctx) => `The repository [${c.repoFullName}](${c.repoUrl}) was added to team ${c.str('team', 'name')}.`;
const ping = (c: Ctx) => setupMessage('GitHub', c.sender);
const deployment = (c: Ctx) => `${c.sender} created new deployment.`;
const deploymentStatus = (c: Ctx) => `Deployment changed status to ${c.str('deployment_status', 'state')}.`;

function star(c: Ctx): string {
  const verb = c.action === 'created' ? 'starred' : 'unstarred';
  return `[${c.sender}](${c.senderUrl}) ${verb} the repository [${c.repoFullName}](${c.repoUrl}).`;
}

function member(c: Ctx): string {
  return `${c.sender} ${c.action} [${c.str('member', 'login')}](${c.str('member', 'html_url')}) to [${c.repoName}](${c.repoUrl}).`;
}

function membership(c: Ctx): string {
  const action = c.action;
  const preposition = action === 'removed' ? 'from' : 'to';
  return `${c.sender} ${action} [${c.str('member', 'login')}](${c.str('member', 'html_url')}) ${preposition} the ${c.str('team', 'name')} team.`;
}

function team(c: Ctx): string {
  const changes = c.p.get('changes');
  if (changes.has('description')) {
    return `**${c.sender}** changed the team description to:\n${quoteContent(c.str('team', 'description'))}`;
  }
  if (changes.has('name')) return `Team \`${c.str('changes', 'name', 'from')}\` was renamed to \`${c.str('team', 'name')}\`.`;
  if (changes.has('privacy')) return `Team visibility changed to \`${c.str('team', 'privacy')}\``;
  // Zulip posts that something changed rather than nothing.
  const keys = changes
    .entries()
    .map(([k]) => k)
    .sort();
  return `Team has changes to \`${keys.join('/')}\` data.`;
}

function status(c: Ctx): string {
  const state = c.str('state');
  const target = nullableStr(c.p, 'target_url');
  const shown = target ? `[${state}](${target})` : state;
  return `[${shortSha(c.str('sha'))}](${c.str('commit', 'html_url')}) changed its status to ${shown}.`;
}

function checkRun(c: Ctx): string {
  const run = c.p.get('check_run');
  const sha = run.get('head_sha').str();
  return (
    `Check [${run.get('name').str()}](${run.get('html_url').str()}) ${run.get('status').str()} (${run.get('conclusion').str()}).` +
    ` ([${shortSha(sha)}](${c.repoUrl}/commit/${sha}))`
  );
}

function pageBuild(c: Ctx): string {
  const build = c.p.get('build');
  const state = build.get('status').str();
  const phrases: Record<string, string> = {
    null: 'has yet to be built',
    building: 'is being built',
    errored: 'has failed: {}',
    built: 'has finished building',
  };
  let action = phrases[state] ?? `is ${state}`;
  const error = nullableStr(build.get('error'), 'message');
  // Only the errored phrase has a slot for the error; without a message it stays as written, as in Zulip.
  if (error) action = action.replace('{}', quoteContent(error));
  return `GitHub Pages build, triggered by ${build.at('pusher', 'login').str()}, ${action}.`;
}

function gollum(c: Ctx): string {
  const rows = c.p
    .get('pages')
    .list()
    .map((page) => `* ${page.get('action').str()} [${page.get('title').str()}](${page.get('html_url').str()})\n`)
    .join('');
  return `${c.sender}:\n${rows.trimEnd()}`;
}

function discussion(c: Ctx): string {
  const d = c.p.get('discussion');
  return (
    `${c.sender} created [discussion #${d.get('number').int()}](${d.get('html_url').str()}) in ${d.at('category', 'name').str()}:\n\n` +
    `~~~ quote\n### ${d.get('title').str()}\n${d.get('body').str()}\n~~~`
  );
}

function discussionComment(c: Ctx): string {
  return pullRequestMessage({
    userName: c.sender,
    action: commentAction(c),
    url: c.str('discussion', 'html_url'),
    number: c.int('discussion', 'number'),
    message: c.str('comment', 'body'),
    title: c.title('discussion', 'title'),
    type: 'discussion',
  });
}

// GitHub Sponsors.

const tier = (c: Ctx) => c.str('sponsorship', 'tier', 'name');
const priorTier = (c: Ctx) => c.str('changes', 'tier', 'from', 'name');

/** The change's date, "January 05, 2020" (Python's "%B %d, %Y"). */
function effectiveDate(c: Ctx): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(c.str('effective_date'));
  const month = m ? MONTHS[Number(m[2]) - 1] : undefined;
  if (!m || !month) throw new ApiError('payload["effective_date"] is not a date');
  return `${month} ${m[3]}, ${m[1]}`;
}

const sponsorshipBodies: Record<string, (c: Ctx) => string> = {
  cancelled: (c) => `${c.sender} cancelled their ${tier(c)} subscription.`,
  created: (c) => `${c.sender} subscribed for ${tier(c)}.`,
  edited: (c) =>
    `${c.sender} changed who can see their sponsorship from ${c.str('changes', 'privacy_level', 'from')} to ${c.str('sponsorship', 'privacy_level')}.`,
  pending_cancellation: (c) => `${c.sender}'s ${tier(c)} subscription will be cancelled on ${effectiveDate(c)}.`,
  pending_tier_change: (c) => `${c.sender}'s subscription will change from ${priorTier(c)} to ${tier(c)} on ${effectiveDate(c)}.`,
  tier_changed: (c) => `${c.sender} changed their subscription from ${priorTier(c)} to ${tier(c)}.`,
};

/** Zulip's event names (its complete_event_type) and how each is told. */
const BODIES: Record<string, (c: Ctx) => string> = {
  commit_comment: commitComment,
  closed_pull_request: prClosed,
  create: createOrDelete('created'),
  check_run: checkRun,
  delete: createOrDelete('deleted'),
  deployment,
  deployment_status: deploymentStatus,
  discussion,
  discussion_comment: discussionComment,
  fork,
  gollum,
  issue_comment: issueComment,
  issue_labeled_or_unlabeled: issueLabeled,
  issue_milestoned_or_demilestoned: issueMilestoned,
  issues_opened_via_transfer: issueOpenedViaTransfer,
  issues_transferred: issueTransferred,
  issues: issueEvent,
  member,
  membership,
  opened_pull_request: prOpenedOrUpdated,
  updated_pull_request: prOpenedOrUpdated,
  assigned_or_unassigned_pull_request: prAssignedOrUnassigned,
  page_build: pageBuild,
  ping,
  public: publicized,
  pull_request_ready_for_review: prReadyForReview,
  pull_request_review: prReview,
  pull_request_review_comment: prReviewComment,
  pull_request_review_requested: prReviewRequested,
  pull_request_auto_merge: prAutoMerge,
  locked_or_unlocked_pull_request: prLockedOrUnlocked,
  push_commits: pushCommits,
  push_tags: pushTags,
  release,
  repository,
  star,
  status,
  team,
  team_add: teamAdd,
  watch,
  ...sponsorshipBodies,
};

const PULL_REQUEST_EVENTS: Record<string, string> = {
  opened: 'opened_pull_request',
  reopened: 'opened_pull_request',
  synchronize: 'updated_pull_request',
  edited: 'updated_pull_request',
  assigned: 'assigned_or_unassigned_pull_request',
  unassigned: 'assigned_or_unassigned_pull_request',
  closed: 'closed_pull_request',
  review_requested: 'pull_request_review_requested',
  ready_for_review: 'pull_request_ready_for_review',
  locked: 'locked_or_unlocked_pull_request',
  unlocked: 'locked_or_unlocked_pull_request',
  auto_merge_enabled: 'pull_request_auto_merge',
  auto_merge_disabled: 'pull_request_auto_merge',
};

const ISSUE_EVENTS: Record<string, string> = {
  labeled: 'issue_labeled_or_unlabeled',
  unlabeled: 'issue_labeled_or_unlabeled',
  milestoned: 'issue_milestoned_or_demilestoned',
  demilestoned: 'issue_milestoned_or_demilestoned',
  transferred: 'issues_transferred',
};

/** An event that is known but posts nothing. */
const IGNORED = Symbol('ignored');

/** Zulip's name for the event (a key of BODIES), IGNORED, or unsupported (thrown). */
function zulipEvent(header: string, c: Ctx, branches: string | undefined): string | typeof IGNORED {
  const p = c.p;
  switch (header) {
    case 'pull_request': {
      const action = c.action;
      const event = PULL_REQUEST_EVENTS[action];
      if (event) return event;
      if (IGNORED_PULL_REQUEST_ACTIONS.includes(action)) return IGNORED;
      break;
    }
    case 'pull_request_review':
      // GitHub follows each submitted review with an "edited" one without changes.
      if (c.action === 'edited' && (p.opt('changes')?.entries().length ?? 0) === 0) return IGNORED;
      return 'pull_request_review';
    case 'push': {
      const ref = c.str('ref');
      if (ref.startsWith('refs/heads/gh-readonly-queue/')) return IGNORED;
      if (!ref.startsWith('refs/heads/')) return 'push_tags';
      return isBranchNotifiable(branchOfRef(ref), branches) ? 'push_commits' : IGNORED;
    }
    case 'check_run':
      return c.str('check_run', 'status') === 'completed' ? 'check_run' : IGNORED;
    case 'team': {
      const action = c.action;
      if (action === 'edited') return 'team';
      if (IGNORED_TEAM_ACTIONS.includes(action)) return IGNORED;
      throw unsupportedEvent(`unsupported team action ${action}`);
    }
    case 'issues': {
      const action = c.action;
      const event = ISSUE_EVENTS[action];
      if (event) return event;
      return action === 'opened' && p.opt('changes')?.has('old_issue') ? 'issues_opened_via_transfer' : 'issues';
    }
    case 'sponsorship':
      // GitHub names sponsorship events by header and action; Zulip's integration
      // knows them by the action alone (as its own fixtures send them), so the
      // header GitHub sends is taken to the same messages.
      if (SPONSORS_EVENTS.includes(c.action)) return c.action;
      break;
    default:
      if (Object.prototype.hasOwnProperty.call(BODIES, header)) return header;
      if (IGNORED_EVENTS.includes(header)) return IGNORED;
  }
  throw unsupportedEvent(`${header}:${p.opt('action')?.str() ?? '???'}`);
}

function topicOf(c: Ctx, event: string): string {
  if (event.includes('pull_request')) {
    return topicWithPrOrIssue(c.repoName, 'PR', c.int('pull_request', 'number'), c.str('pull_request', 'title'));
  }
  if (event.startsWith('issue')) {
    return topicWithPrOrIssue(c.repoName, isPullRequestComment(c) ? 'PR' : 'issue', c.int('issue', 'number'), c.str('issue', 'title'));
  }
  if (event.startsWith('deployment')) return `${c.repoName} / Deployment on ${c.str('deployment', 'environment')}`;
  if (event === 'membership') return `${c.str('organization', 'login')} organization`;
  if (event === 'team') return `team ${c.str('team', 'name')}`;
  if (event === 'push_commits') return topicWithBranch(c.repoName, branchOfRef(c.str('ref')));
  if (event === 'gollum') return topicWithBranch(c.repoName, 'wiki pages');
  // An organization's hook is pinged without a repository.
  if (event === 'ping' && !c.p.has('repository')) return c.str('organization', 'login');
  if (event === 'check_run') return `${c.repoName} / checks`;
  if (event.startsWith('discussion')) {
    return `${c.repoName} discussion #${c.int('discussion', 'number')}: ${c.str('discussion', 'title')}`;
  }
  if (SPONSORS_EVENTS.includes(event)) return 'sponsors';
  return c.repoName;
}

function handle(input: WebhookInput): WebhookOutcome {
  const header = input.header('X-GitHub-Event') ?? '';
  const p = input.payload;
  // Zulip reads the repository's privacy whenever there is a repository, and ignores the event if asked to.
  const repo = p.opt('repository');
  if (repo !== null && repo.get('private').bool() && input.flag('ignore_private_repositories', false)) return ignore(null);
  // An edit that leaves a comment's body as it was (discussions' comments excepted) is not news.
  if (
    header.includes('comment') &&
    !header.includes('discussion') &&
    (p.opt('action')?.str() ?? '') === 'edited' &&
    p.at('changes', 'body', 'from').str() === p.at('comment', 'body').str()
  ) {
    return ignore(null);
  }
  // A topic in the URL replaces the one naming the PR or issue, so the messages name it instead.
  const c = new Ctx(p, input.option('topic') !== undefined);
  const event = zulipEvent(header, c, input.option('branches'));
  if (event === IGNORED) return ignore(null);
  return post(event, topicOf(c, event), BODIES[event](c));
}

export const github: Integration = {
  name: 'github',
  displayName: 'GitHub',
  eventHeader: 'X-GitHub-Event',
  handle,
  docs: {
    summary:
      'Posts GitHub activity: pushes, branches and tags, pull requests and reviews, issues, comments, releases, stars, forks and more; one topic per branch, pull request or issue.',
    setup: [
      'In your repository (or organization) on GitHub, open **Settings** → **Webhooks** and click **Add webhook**.',
      'Set **Payload URL** to the URL below and **Content type** to `application/json`.',
      'Choose **Send me everything** or select the events you want, keep **Active** checked, and click **Add webhook**.',
    ],
    options: [
      {
        name: 'branches',
        description: 'Comma-separated branch names: only pushes to these branches are posted (all branches by default).',
      },
      { name: 'ignore_private_repositories', description: '`true` to post nothing for events from private repositories.' },
    ],
  },
};

/** GitHub Sponsors' webhook: the same integration at its own URL, as in Zulip. */
export const githubSponsors: Integration = {
  ...github,
  name: 'githubsponsors',
  docs: {
    summary: 'Posts GitHub Sponsors activity (new, changed and cancelled sponsorships) to the topic "sponsors".',
    setup: [
      'On GitHub, open your **Sponsors dashboard** → **Webhooks** and click **Add webhook**.',
      'Set **Payload URL** to the URL below and **Content type** to `application/json`, then click **Create webhook**.',
    ],
  },
};
