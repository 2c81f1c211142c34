/**
 * The message and topic builders the git-hosting integrations share
 * (GitHub, GitLab, Gitea, …), so that a push, a branch, a pull or merge
 * request, an issue, a comment, a tag or a release reads the same whatever
 * service sent it — as Zulip's shared git helpers make them read.
 *
 * Everything here is pure string building. Zulip's quirks kept on purpose:
 * short SHAs are 11 characters; a commit row shows only the first line of
 * its message; at most 20 commits are listed, then "[and N more commit(s)]";
 * the committers are named only when the pusher is not the only author, at
 * most three then "others"; a sentence that ends with a title ending in
 * punctuation gets no extra full stop.
 */

/** The SHA a service sends for "no commit" (a deleted branch's after, a new branch's before). */
export const EMPTY_SHA = '0000000000000000000000000000000000000000';

/** How many commits a push message lists before summarising the rest. */
export const COMMITS_LIMIT = 20;

/** How many committers a push message names before "others". */
const COMMITTERS_LIMIT = 3;

/** Python's string.punctuation, which decides whether a title already ends a sentence. */
const PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

/** One commit of a push, as the services' payloads are reduced to. */
export interface CommitData {
  /** Who wrote it (the name the committers summary counts). */
  name: string;
  sha: string;
  url: string;
  message: string;
}

// Topics.

/** "<repo> / <branch>": pushes and branch events. */
export function topicWithBranch(repo: string, branch: string): string {
  return `${repo} / ${branch}`;
}

/** "<repo> / <type> #<id> <title>": pull/merge requests ("PR", "MR") and issues ("issue"). */
export function topicWithPrOrIssue(repo: string, type: string, id: number | string, title: string): string {
  return `${repo} / ${type} #${id} ${title}`;
}

/** "<repo> / <tag> <title>": releases. */
export function topicWithRelease(repo: string, tag: string, title: string): string {
  return `${repo} / ${tag} ${title}`;
}

// Small pieces.

/** A commit's short form: its first 11 characters. */
export function shortSha(sha: string): string {
  return sha.slice(0, 11);
}

/** A quoted block under a message (comment bodies, descriptions). */
export function quoteContent(message: string): string {
  return `\n~~~ quote\n${message}\n~~~`;
}

/** Python's str.rstrip(): the messages are built with trailing whitespace trimmed. */
function rstrip(s: string): string {
  return s.trimEnd();
}

function endsWithPunctuation(s: string): boolean {
  return s.length > 0 && PUNCTUATION.has(s[s.length - 1]);
}

/**
 * Whether a push to `branch` is posted under the `branches` option: every
 * branch when the option is absent, otherwise only the listed ones
 * (comma-separated, spaces around names ignored, exact names).
 */
export function isBranchNotifiable(branch: string, branches: string | null | undefined): boolean {
  if (branches === undefined || branches === null) return true;
  return branches.split(',').some((b) => b.trim() === branch);
}

/** "<Integration> webhook has been successfully configured[ by <user>]." (services' ping events). */
export function setupMessage(integration: string, userName?: string | null): string {
  return `${integration} webhook has been successfully configured${userName ? ` by ${userName}` : ''}.`;
}

// Pushes.

/**
 * The committers of a push with their commit counts: most commits first,
 * ties by name; beyond three, the rest are summed as "others".
 */
export function allCommitters(commits: readonly CommitData[]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const c of commits) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const sorted = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (sorted.length <= COMMITTERS_LIMIT) return sorted;
  const others = sorted.slice(COMMITTERS_LIMIT).reduce((n, [, count]) => n + count, 0);
  return [...sorted.slice(0, COMMITTERS_LIMIT), ['others', others]];
}

/**
 * The commit list of a push: one row per commit (first line of its message,
 * short SHA linked), at most COMMITS_LIMIT rows, then how many more; a
 * service that says it truncated the list gets "[and more commit(s)]".
 */
export function commitsContent(commits: readonly CommitData[], isTruncated = false): string {
  let out = '';
  for (const c of commits.slice(0, COMMITS_LIMIT)) {
    out += `* ${c.message.split('\n')[0]} ([${shortSha(c.sha)}](${c.url}))\n`;
  }
  if (commits.length > COMMITS_LIMIT) out += `[and ${commits.length - COMMITS_LIMIT} more commit(s)]`;
  else if (isTruncated) out += '[and more commit(s)]';
  return rstrip(out);
}

export interface PushCommitsOptions {
  userName: string;
  /** The compare view; without it "pushed" is not a link. */
  compareUrl: string | null;
  branchName: string;
  commits: readonly CommitData[];
  isTruncated?: boolean;
  /** The branch was deleted (a push without commits then says so). */
  deleted?: boolean;
  forcePush?: boolean;
  /** With repositoryUrl: "to branch X of [repo](url)." (services whose topic lacks the repository). */
  repositoryName?: string | null;
  repositoryUrl?: string | null;
}

/**
 * A push: "<user> [pushed](compare) N commit(s) to branch B." with the
 * committers when someone else wrote any of them, then the commit list. A
 * push without commits is a deleted branch or a pushed (created or
 * force-reset) branch.
 */
export function pushCommitsMessage(o: PushCommitsOptions): string {
  const { userName, compareUrl, branchName, commits } = o;
  if (commits.length === 0 && o.deleted) return `${userName} [deleted](${compareUrl}) the branch ${branchName}.`;
  const pushType = o.forcePush ? 'force pushed' : 'pushed';
  if (commits.length === 0) {
    return compareUrl
      ? `${userName} [${pushType}](${compareUrl}) the branch ${branchName}.`
      : `${userName} ${pushType} the branch ${branchName}.`;
  }
  const count = `${commits.length} commit${commits.length > 1 ? 's' : ''}`;
  const pushed = compareUrl ? `[${pushType}](${compareUrl}) ${count}` : `${pushType} ${count}`;
  const base =
    o.repositoryName && o.repositoryUrl
      ? `${userName} ${pushed} to branch ${branchName} of [${o.repositoryName}](${o.repositoryUrl}).`
      : `${userName} ${pushed} to branch ${branchName}.`;
  const list = commitsContent(commits, o.isTruncated ?? false);
  const committers = allCommitters(commits);
  if (committers.length === 1 && committers[0][0] === userName) return rstrip(`${base}\n\n${list}\n`);
  const named = committers.map(([name, n]) => `${name} (${n})`);
  const details = named.length > 1 ? `${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}` : named[0];
  return rstrip(`${base} Commits by ${details}.\n\n${list}\n`);
}

/** "<user> [force pushed](url) to branch B. Head is now <head>." */
export function forcePushCommitsMessage(userName: string, url: string, branchName: string, head: string): string {
  return `${userName} [force pushed](${url}) to branch ${branchName}. Head is now ${head}.`;
}

/** "<user> created [B](url) branch." (no link without a URL). */
export function createBranchMessage(userName: string, url: string | null, branchName: string): string {
  return url === null ? `${userName} created ${branchName} branch.` : `${userName} created [${branchName}](${url}) branch.`;
}

/** "<user> deleted branch B." */
export function removeBranchMessage(userName: string, branchName: string): string {
  return `${userName} deleted branch ${branchName}.`;
}

// Pull requests and issues.

export interface PullRequestMessageOptions {
  userName: string;
  /** The verb ("opened", "merged", "[commented](url) on", …); "approval"/"unapproval" are spelled out. */
  action: string;
  url: string;
  number?: number | null;
  /** With baseBranch: "from `target` to `base`". */
  targetBranch?: string | null;
  baseBranch?: string | null;
  /** The description or comment, quoted below (and the sentence then ends with ":"). */
  message?: string | null;
  assignee?: string | null;
  /** Several assignees: "a, b and c". */
  assignees?: readonly string[] | null;
  /** Who was (un)assigned, for the actions "assigned"/"unassigned": "<user> assigned X to [PR …]". */
  assigneeUpdated?: string | null;
  reviewer?: string | null;
  /** "PR" (default), "MR", "issue", "PR review", … */
  type?: string;
  /** Included in the link text when the topic does not already carry it. */
  title?: string | null;
}

const SPELLED_OUT_ACTIONS: Record<string, string> = {
  approval: 'added their approval for',
  unapproval: 'removed their approval for',
};

/** Names joined as "a", "a and b", "a, b and c". */
function joinNames(names: readonly string[]): string {
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/**
 * A pull request, merge request or issue event:
 * "<user> <action>[ X to|from] [<type> #<n>[ <title>]](url)[ from `a` to `b`][ (assigned to …)]."
 * then the quoted message. The full stop (":" before a message) is left out
 * only when the sentence ends with a title that already ends in punctuation.
 */
export function pullRequestMessage(o: PullRequestMessageOptions): string {
  const type = o.type ?? 'PR';
  const title = o.title ?? null;
  const action = SPELLED_OUT_ACTIONS[o.action] ?? o.action;
  // Zulip formats a missing name as Python's None; kept so the text matches.
  const updated = o.assigneeUpdated ?? 'None';
  const who = o.action === 'assigned' ? ` ${updated} to` : o.action === 'unassigned' ? ` ${updated} from` : '';
  const id = o.number !== undefined && o.number !== null ? ` #${o.number}` : '';
  let out = `${o.userName} ${action}${who} [${type}${id}${title !== null ? ` ${title}` : ''}](${o.url})`;
  const branches = Boolean(o.targetBranch && o.baseBranch);
  if (branches) out += ` from \`${o.targetBranch}\` to \`${o.baseBranch}\``;
  const assignees = o.assignees && o.assignees.length > 0 ? o.assignees : null;
  if (assignees) out += ` (assigned to ${joinNames(assignees)})`;
  else if (o.assignee) out += ` (assigned to ${o.assignee})`;
  else if (o.reviewer) out += ` (assigned reviewers: ${o.reviewer})`;
  const punctuation = o.message ? ':' : '.';
  if (assignees || o.assignee || branches || title === null || !endsWithPunctuation(title)) out += punctuation;
  if (o.message) out += `\n${quoteContent(o.message)}`;
  return rstrip(out);
}

export type IssueMessageOptions = Omit<PullRequestMessageOptions, 'type' | 'targetBranch' | 'baseBranch' | 'reviewer'>;

/** An issue event: a pull request message of type "issue". */
export function issueMessage(o: IssueMessageOptions): string {
  return pullRequestMessage({ ...o, type: 'issue' });
}

/** Who changed an issue's label or milestone, and which issue. */
interface IssueChangeOptions {
  userName: string;
  userUrl: string;
  /** "added" or "removed". */
  action: string;
  url: string;
  number: number;
  title?: string | null;
}

export interface IssueLabelOptions extends IssueChangeOptions {
  labelName: string;
}

/** "[user](url) added the L label to [Issue #n](url)." ("removed … from"; "Issue" capitalised here). */
export function issueLabeledMessage(o: IssueLabelOptions): string {
  const preposition = o.action === 'added' ? 'to' : 'from';
  const title = o.title !== undefined && o.title !== null ? ` ${o.title}` : '';
  return `[${o.userName}](${o.userUrl}) ${o.action} the ${o.labelName} label ${preposition} [Issue #${o.number}${title}](${o.url}).`;
}

export interface IssueMilestoneOptions extends IssueChangeOptions {
  milestoneName: string;
  milestoneUrl: string;
}

/** "[user](url) added milestone [M](url) to [issue #n](url)." ("removed … from"). */
export function issueMilestonedMessage(o: IssueMilestoneOptions): string {
  const preposition = o.action === 'added' ? 'to' : 'from';
  const title = o.title !== undefined && o.title !== null ? ` ${o.title}` : '';
  return `[${o.userName}](${o.userUrl}) ${o.action} milestone [${o.milestoneName}](${o.milestoneUrl}) ${preposition} [issue #${o.number}${title}](${o.url}).`;
}

// Tags, commit comments, releases.

/** "<user> pushed tag T." (linked with a URL; no full stop after a tag ending in punctuation). */
export function pushTagMessage(userName: string, tagName: string, tagUrl?: string | null, action = 'pushed'): string {
  const tag = tagUrl ? `[${tagName}](${tagUrl})` : tagName;
  const out = `${userName} ${action} tag ${tag}`;
  return endsWithPunctuation(tagName) ? out : `${out}.`;
}

/** "<user> <action> on [sha](url)." or, with a comment, ":" and the comment quoted. */
export function commitCommentMessage(userName: string, action: string, commitUrl: string, sha: string, message?: string | null): string {
  const out = `${userName} ${action} on [${shortSha(sha)}](${commitUrl})`;
  return message ? `${out}:${quoteContent(message)}` : `${out}.`;
}

/** "<user> <action> release [R](url) for tag T." */
export function releaseMessage(userName: string, action: string, tagName: string, releaseName: string, url: string): string {
  return `${userName} ${action} release [${releaseName}](${url}) for tag ${tagName}.`;
}

/**
 * A release without its author (services that do not say who):
 * "Release [R](url) for tag T was <action>." (no link without a URL).
 */
export function releaseMessageWithoutUser(action: string, tagName: string, releaseName: string, url: string | null): string {
  return url
    ? `Release [${releaseName}](${url}) for tag ${tagName} was ${action}.`
    : `Release ${releaseName} for tag ${tagName} was ${action}.`;
}
