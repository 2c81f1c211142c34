import {
  EMPTY_SHA,
  commitCommentMessage,
  isBranchNotifiable,
  issueMessage,
  pullRequestMessage,
  pushCommitsMessage,
  pushTagMessage,
  quoteContent,
  releaseMessageWithoutUser,
  removeBranchMessage,
  topicWithBranch,
  topicWithPrOrIssue,
  type CommitData,
} from './git';
import type { Payload } from './payload';
import { anomalousPayload, ignore, post, unsupportedEvent, type Integration } from './types';

/**
 * GitLab's webhooks (project, group and system hooks). GitLab names the
 * event in the X-Gitlab-Event header ("Push Hook", "Merge Request Hook", …)
 * and sends the object as JSON.
 *
 * The event type (what only_events/exclude_events match) is the header,
 * completed as Zulip completes it: issue, merge request and wiki events get
 * their object_attributes.action ("Issue Hook open", "Merge Request Hook
 * approved", "Wiki Page Hook update"), comments their noteable_type ("Note
 * Hook MergeRequest", "Confidential Note Hook Issue"). A "System Hook" is
 * first renamed after its event_name (else object_kind): "merge_request"
 * becomes "Merge Request Hook", and so on.
 *
 * Posted: pushes (branch pushed, created, deleted), tags, issues and
 * confidential issues (open, close, reopen, update), comments on commits,
 * merge requests, issues, snippets and designs, merge requests (open,
 * update, merge, close, reopen, approved, unapproved, approval,
 * unapproval), wiki pages (create, update), pipelines, jobs ("Job Hook",
 * and "Build Hook" from older GitLabs), releases, feature flags, access
 * token expiry warnings, deployments and the legacy "Test Hook". Every other
 * event (emoji, member, wiki page delete, …) is Zulip's unsupported event.
 * A push to a branch the `branches` option does not list posts nothing.
 *
 * Options: `branches` (comma-separated branches whose pushes are posted),
 * `use_merge_request_title` (default true; false leaves the title out of
 * merge request topics). With the generic `topic` option the message starts
 * with a link to the project and names the issue or MR by title, since the
 * topic no longer does.
 */

type BodyBuilder = (payload: Payload, includeTitle: boolean) => string;

/** Python's truthiness of a JSON value: absent, null, "", 0, false, [] and {} are false. */
function truthy(value: Payload | null): boolean {
  if (value === null) return false;
  const raw = value.raw;
  if (Array.isArray(raw)) return raw.length > 0;
  if (typeof raw === 'object' && raw !== null) return Object.keys(raw).length > 0;
  return Boolean(raw);
}

// The payload's common parts. Job events carried only `repository` before
// GitLab added `project` to them, so the repository is read from either.

function repoName(p: Payload): string {
  return p.has('project') ? p.at('project', 'name').str() : p.at('repository', 'name').str();
}

function projectHomepage(p: Payload): string {
  return p.has('project') ? p.at('project', 'web_url').str() : p.at('repository', 'homepage').str();
}

/** The pusher, in push and tag payloads. */
const pusherName = (p: Payload) => p.get('user_name').str();
/** Who acted, in every other payload. */
const actorName = (p: Payload) => p.at('user', 'name').str();
const branchName = (ref: string) => ref.replaceAll('refs/heads/', '');
const tagName = (ref: string) => ref.replaceAll('refs/tags/', '');
const attrs = (p: Payload) => p.get('object_attributes');
const titleIf = (includeTitle: boolean, p: Payload) => (includeTitle ? p.get('title').str() : null);

/**
 * The assignees' display names: `assignees` when it lists anyone, else the
 * single `assignee` older payloads carry. Zulip shows names, not usernames.
 */
function assigneeNames(p: Payload): string[] {
  const many = p.opt('assignees');
  if (truthy(many)) return many!.list().map((a) => a.get('name').str());
  const one = p.opt('assignee');
  return truthy(one) ? [one!.get('name').str()] : [];
}

// Pushes and tags.

function pushBody(p: Payload): string {
  const after = p.opt('after');
  const branch = branchName(p.get('ref').str());
  if (truthy(after) && after!.str() === EMPTY_SHA) return removeBranchMessage(pusherName(p), branch);
  const commits: CommitData[] = p
    .get('commits')
    .list()
    .map((c) => ({ name: c.at('author', 'name').str(), sha: c.get('id').str(), message: c.get('message').str(), url: c.get('url').str() }));
  return pushCommitsMessage({
    userName: pusherName(p),
    compareUrl: `${projectHomepage(p)}/-/compare/${p.get('before').str()}...${p.get('after').str()}`,
    branchName: branch,
    commits,
  });
}

function tagPushBody(p: Payload): string {
  // A deleted tag's payload has no checkout_sha.
  const action = truthy(p.opt('checkout_sha')) ? 'pushed' : 'removed';
  return pushTagMessage(pusherName(p), tagName(p.get('ref').str()), null, action);
}

// Issues.

function issueCreatedBody(p: Payload, includeTitle: boolean): string {
  const a = attrs(p);
  const description = a.opt('description');
  // HTML comments (issue templates' hints) are invisible on GitLab; Zulip drops them too.
  const message = truthy(description)
    ? description!
        .str()
        .replace(/<!--[\s\S]*?-->/g, '')
        .trimEnd()
    : null;
  return issueMessage({
    userName: actorName(p),
    action: 'created',
    url: a.get('url').str(),
    number: a.get('iid').int(),
    message,
    assignees: assigneeNames(p),
    title: titleIf(includeTitle, a),
  });
}

const issueBody =
  (action: string): BodyBuilder =>
  (p, includeTitle) => {
    const a = attrs(p);
    return issueMessage({
      userName: actorName(p),
      action,
      url: a.get('url').str(),
      number: a.get('iid').int(),
      title: titleIf(includeTitle, a),
    });
  };

// Merge requests.

/**
 * A merge request event. A merge and an opening say which branch goes where;
 * an opened or edited MR (`details`) also names its assignees and quotes its
 * description; the other actions are the bare sentence.
 */
const mergeRequestBuilder =
  (action: string, details: boolean): BodyBuilder =>
  (p, includeTitle) => {
    const a = attrs(p);
    const branches = action === 'merged' || action === 'created';
    return pullRequestMessage({
      userName: actorName(p),
      action,
      url: a.get('url').str(),
      number: a.get('iid').int(),
      targetBranch: branches ? a.get('source_branch').str() : null,
      baseBranch: branches ? a.get('target_branch').str() : null,
      message: details ? (a.opt('description')?.str() ?? null) : null,
      assignees: details ? assigneeNames(p) : null,
      type: 'MR',
      title: titleIf(includeTitle, a),
    });
  };
const mergeRequestBody = (action: string) => mergeRequestBuilder(action, false);
const mergeRequestDetailsBody = (action: string) => mergeRequestBuilder(action, true);

/** GitLab reports new commits on an MR as an update with `oldrev` (the previous head). */
const mergeRequestUpdatedBody: BodyBuilder = (p, includeTitle) =>
  truthy(attrs(p).opt('oldrev'))
    ? mergeRequestBody('added commit(s) to')(p, includeTitle)
    : mergeRequestDetailsBody('updated')(p, includeTitle);

// Comments.

const commentedOn = (p: Payload) => `[commented](${attrs(p).get('url').str()}) on`;

function commitNoteBody(p: Payload): string {
  const commit = p.get('commit');
  return commitCommentMessage(
    actorName(p),
    `[commented](${attrs(p).get('url').str()})`,
    commit.get('url').str(),
    commit.get('id').str(),
    attrs(p).get('note').str(),
  );
}

/** A comment on a merge request or an issue: `key` names the commented object in the payload. */
const noteBody =
  (key: 'merge_request' | 'issue', type: string): BodyBuilder =>
  (p, includeTitle) => {
    const target = p.get(key);
    return pullRequestMessage({
      userName: actorName(p),
      action: commentedOn(p),
      url: target.get('url').str(),
      number: target.get('iid').int(),
      message: attrs(p).get('note').str(),
      type,
      title: titleIf(includeTitle, target),
    });
  };

const snippetNoteBody: BodyBuilder = (p, includeTitle) => {
  const snippet = p.get('snippet');
  const id = snippet.get('id').int();
  // GitLab sends the snippet's URL since 16.1; before, it is built from the project.
  const url = snippet.opt('url')?.str() ?? `${p.at('project', 'web_url').str()}/-/snippets/${id}`;
  return pullRequestMessage({
    userName: actorName(p),
    action: commentedOn(p),
    url,
    number: id,
    message: attrs(p).get('note').str(),
    type: 'snippet',
    title: titleIf(includeTitle, snippet),
  });
};

/**
 * A design's comment payload names no issue: its position's path does
 * ("designs/issue-<n>/<file>"), and the design's page is built from it.
 */
function designOf(p: Payload): { name: string; url: string } {
  const parts = attrs(p).at('position', 'new_path').str().split('/');
  if (parts.length !== 3) throw anomalousPayload();
  const issue = parts[1].split('-').pop()!;
  return { name: parts[2], url: `${p.at('repository', 'homepage').str()}/-/issues/${issue}/designs/${parts[2]}` };
}

function designNoteBody(p: Payload): string {
  const design = designOf(p);
  const commentUrl = `${design.url}#note_${attrs(p).get('id').int()}`;
  return `${actorName(p)} [commented](${commentUrl}) on design [${design.name}](${design.url}):\n${quoteContent(attrs(p).get('note').str())}`;
}

// Wiki pages, CI, releases, feature flags, access tokens, deployments.

const wikiPageBody =
  (action: string): BodyBuilder =>
  (p) =>
    `${actorName(p)} ${action} [wiki page "${attrs(p).get('title').str()}"](${attrs(p).get('url').str()}).`;

/** "created" and "running" read as sentences; any other status is quoted as it is. */
function statusPhrase(status: string, createdStatus: string): string {
  return status === createdStatus ? 'was created' : status === 'running' ? 'started' : `changed status to ${status}`;
}

function buildBody(p: Payload): string {
  const action = statusPhrase(p.get('build_status').str(), 'created');
  return `Build ${p.get('build_name').str()} from ${p.get('build_stage').str()} stage ${action}.`;
}

function pipelineBody(p: Payload): string {
  const a = attrs(p);
  const home = projectHomepage(p);
  const id = a.get('id').int();
  const rows = p
    .get('builds')
    .list()
    .map((b) => {
      const jobUrl = `${home}/-/jobs/${b.get('id').int()}`;
      let row = `* [${b.get('name').str()}](${jobUrl}) - ${b.get('status').str()}`;
      const artifact = b.opt('artifacts_file')?.opt('filename') ?? null;
      if (truthy(artifact)) {
        row += `\n  * built artifact: *${artifact!.str()}* [[Browse](${jobUrl}/artifacts/browse)|[Download](${jobUrl}/artifacts/download)]`;
      }
      return row;
    });
  // A pending pipeline "was created"; the job list ends the sentence.
  return `[Pipeline (${id})](${home}/-/pipelines/${id}) ${statusPhrase(a.get('status').str(), 'pending')} with build(s):\n${rows.join('\n')}.`;
}

function releaseBody(p: Payload): string {
  const action = p.get('action').str();
  const name = p.get('name').str();
  const tag = p.get('tag').str();
  // GitLab's actions are create/update/delete: the message's verb is the action plus "d".
  if (action === 'delete') return releaseMessageWithoutUser(`${action}d`, tag, name, null);
  const body = releaseMessageWithoutUser(`${action}d`, tag, name, p.get('url').str());
  const description = p.opt('description');
  return description === null ? body : body + quoteContent(description.str());
}

function featureFlagBody(p: Payload): string {
  const flag = attrs(p);
  const action = truthy(flag.get('active')) ? 'activated' : 'deactivated';
  // Zulip names the user by username here, unlike every other GitLab message.
  return `${p.at('user', 'username').str()} ${action} the feature flag [${flag.get('name').str()}](${p.at('project', 'web_url').str()}/-/feature_flags).`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function accessTokenBody(p: Payload): string {
  const token = attrs(p);
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(token.get('expires_at').str());
  if (!date || Number(date[2]) < 1 || Number(date[2]) > 12) throw anomalousPayload();
  // A group's token page is linked on gitlab.com whatever instance sent it, as Zulip does.
  const url = p.has('group')
    ? `https://gitlab.com/groups/${p.at('group', 'group_path').str()}/-/settings/access_tokens`
    : `${p.at('project', 'web_url').str()}/-/settings/access_tokens`;
  return `The access token [${token.get('name').str()}](${url}) will expire on ${MONTHS[Number(date[2]) - 1]} ${date[3]}, ${date[1]}.`;
}

function deploymentBody(p: Payload): string {
  const user = `[${actorName(p)}](${p.get('user_url').str()})`;
  const status = p.get('status').str();
  const jobUrl = p.opt('deployable_url')?.str() ?? '';
  const deployment = jobUrl ? `[deployment](${jobUrl})` : 'deployment';
  const commitTitle = p.get('commit_title').str();
  const commitUrl = p.get('commit_url').str();
  const sha = commitUrl.split('/').pop()!.slice(0, 7);
  switch (status) {
    case 'running':
      return `${user} started a new ${deployment}:\n> [${sha}](${commitUrl}) ${commitTitle}`;
    case 'success':
      return `The ${deployment} was successful.`;
    case 'failed':
      return `The ${deployment} failed.`;
    case 'canceled':
      return `The ${deployment} was canceled.`;
    default:
      // Zulip has no message for the other statuses (blocked, created, …).
      throw unsupportedEvent(`Deployment Hook ${status}`);
  }
}

/** Issue events read the same whether the issue is confidential or not. */
const issueEvents = (hook: string): Array<[string, BodyBuilder]> => [
  [`${hook} open`, issueCreatedBody],
  [`${hook} close`, issueBody('closed')],
  [`${hook} reopen`, issueBody('reopened')],
  [`${hook} update`, issueBody('updated')],
];

/**
 * Merge request actions posted as a bare sentence, with their verbs. GitLab
 * sends approval/unapproval (rather than approved/unapproved) while more
 * approvals are still required.
 */
const MERGE_REQUEST_VERBS: Record<string, string> = {
  approved: 'approved',
  unapproved: 'unapproved',
  approval: 'approval',
  unapproval: 'unapproval',
  merge: 'merged',
  close: 'closed',
  reopen: 'reopened',
};

const BODIES = new Map<string, BodyBuilder>([
  ['Push Hook', pushBody],
  ['Tag Push Hook', tagPushBody],
  ['Test Hook', (p) => `Webhook for **${repoName(p)}** has been configured successfully! :tada:`],
  ...issueEvents('Issue Hook'),
  ...issueEvents('Confidential Issue Hook'),
  ['Note Hook Commit', commitNoteBody],
  ['Note Hook MergeRequest', noteBody('merge_request', 'MR')],
  ['Note Hook Issue', noteBody('issue', 'issue')],
  ['Confidential Note Hook Issue', noteBody('issue', 'issue')],
  ['Note Hook DesignManagement::Design', designNoteBody],
  ['Confidential Note Hook DesignManagement::Design', designNoteBody],
  ['Note Hook Snippet', snippetNoteBody],
  ['Merge Request Hook open', mergeRequestDetailsBody('created')],
  ['Merge Request Hook update', mergeRequestUpdatedBody],
  ...Object.entries(MERGE_REQUEST_VERBS).map(([action, verb]): [string, BodyBuilder] => [
    `Merge Request Hook ${action}`,
    mergeRequestBody(verb),
  ]),
  ['Wiki Page Hook create', wikiPageBody('created')],
  ['Wiki Page Hook update', wikiPageBody('updated')],
  ['Job Hook', buildBody],
  ['Build Hook', buildBody],
  ['Pipeline Hook', pipelineBody],
  ['Release Hook', releaseBody],
  ['Feature Flag Hook', featureFlagBody],
  ['Resource Access Token Hook', accessTokenBody],
  ['Deployment Hook', deploymentBody],
]);

/** Python's str.title(): each run of letters capitalised, the rest of it lower-cased. */
function pythonTitle(s: string): string {
  let out = '';
  let inWord = false;
  for (const ch of s) {
    const cased = ch.toLowerCase() !== ch.toUpperCase();
    out += cased ? (inWord ? ch.toLowerCase() : ch.toUpperCase()) : ch;
    inWord = cased;
  }
  return out;
}

/** Events whose type is completed with object_attributes.action (GitLab omits it on some; then "open"). */
const BY_ACTION = new Set(['Confidential Issue Hook', 'Issue Hook', 'Merge Request Hook', 'Wiki Page Hook']);
const BY_NOTEABLE_TYPE = new Set(['Confidential Note Hook', 'Note Hook']);

/** The complete event type, or null for a push the `branches` option filters out. */
function completeEventType(header: string, p: Payload, branches: string | undefined): string | null {
  let event = header;
  if (event === 'System Hook') {
    const name = (p.opt('event_name') ?? p.get('object_kind')).str();
    event = `${pythonTitle(name.split('__')[0].replaceAll('_', ' '))} Hook`;
  }
  if (BY_ACTION.has(event)) {
    event = `${event} ${attrs(p).opt('action')?.str() ?? 'open'}`;
  } else if (BY_NOTEABLE_TYPE.has(event)) {
    event = `${event} ${attrs(p).get('noteable_type').str()}`;
  } else if (event === 'Push Hook' && !isBranchNotifiable(branchName(p.get('ref').str()), branches)) {
    return null;
  }
  if (!BODIES.has(event)) throw unsupportedEvent(event);
  return event;
}

/** "<repo> / <type> #<id> <title>"; without a title the topic ends at the number. */
function objectTopic(p: Payload, type: string, id: number, title: string): string {
  return topicWithPrOrIssue(repoName(p), type, id, title).trimEnd();
}

function topicFor(event: string, p: Payload, useMergeRequestTitle: boolean): string {
  if (event === 'Push Hook') return topicWithBranch(repoName(p), branchName(p.get('ref').str()));
  // A job's topic names the repository section even when the payload has a project.
  if (event === 'Job Hook' || event === 'Build Hook')
    return topicWithBranch(p.at('repository', 'name').str(), branchName(p.get('ref').str()));
  if (event === 'Pipeline Hook') return topicWithBranch(repoName(p), branchName(attrs(p).get('ref').str()));
  if (event.startsWith('Merge Request Hook')) {
    const a = attrs(p);
    return objectTopic(p, 'MR', a.get('iid').int(), useMergeRequestTitle ? a.get('title').str() : '');
  }
  if (event.startsWith('Issue Hook') || event.startsWith('Confidential Issue Hook')) {
    return objectTopic(p, 'issue', attrs(p).get('iid').int(), attrs(p).get('title').str());
  }
  if (event === 'Note Hook Issue' || event === 'Confidential Note Hook Issue') {
    return objectTopic(p, 'issue', p.at('issue', 'iid').int(), p.at('issue', 'title').str());
  }
  if (event.endsWith('Note Hook DesignManagement::Design')) {
    return `${repoName(p)} / design ${attrs(p).at('position', 'new_path').str().split('/').pop()}`;
  }
  if (event === 'Note Hook MergeRequest') {
    const mr = p.get('merge_request');
    return objectTopic(p, 'MR', mr.get('iid').int(), useMergeRequestTitle ? mr.get('title').str() : '');
  }
  if (event === 'Note Hook Snippet') {
    return objectTopic(p, 'snippet', p.at('snippet', 'id').int(), p.at('snippet', 'title').str());
  }
  // A group's access token has no project to name.
  if (event === 'Resource Access Token Hook' && truthy(p.opt('group'))) return p.at('group', 'group_name').str();
  if (event === 'Deployment Hook') return `${repoName(p)} / ${p.get('environment').str()}`;
  return repoName(p);
}

export const gitlab: Integration = {
  name: 'gitlab',
  displayName: 'GitLab',
  // GitLab sends X-Gitlab-Event; header names are case-insensitive, and this
  // is Zulip's spelling, which its missing-header error quotes.
  eventHeader: 'X-GitLab-Event',
  handle(input) {
    const p = input.payload;
    const event = completeEventType(input.header('X-GitLab-Event')!, p, input.option('branches'));
    if (event === null) return ignore('Push Hook');
    // A topic given in the URL replaces the one naming the issue or MR, so the
    // message names it by title instead, and says which project it is from.
    const userTopic = input.option('topic');
    let content = BODIES.get(event)!(p, userTopic !== undefined);
    if (userTopic) content = `[[${repoName(p)}](${projectHomepage(p)})] ${content}`;
    return post(event, topicFor(event, p, input.flag('use_merge_request_title', true)), content);
  },
  docs: {
    summary:
      'Posts GitLab pushes, tags, issues, merge requests, comments, wiki pages, pipelines, jobs, releases, feature flags, deployments and access token expiry warnings.',
    setup: [
      'In your GitLab project (or group), open **Settings → Webhooks** and click **Add new webhook**.',
      'Paste the URL below as the **URL**.',
      'Select the **Trigger** events to post (push, tag push, comments, issues, confidential issues, merge requests, wiki pages, pipelines, jobs, deployments, feature flags, releases, project or group access token events).',
      'Click **Add webhook**; **Test** sends a sample event of the kind you choose.',
    ],
    options: [
      {
        name: 'branches',
        description: 'A comma-separated list of branches: only pushes to these branches are posted (all are by default).',
      },
      {
        name: 'use_merge_request_title',
        description: 'Set to `false` to leave the merge request title out of merge request topics (`repo / MR #12`). Default `true`.',
      },
    ],
  },
};
