import { Payload } from './payload';
import { hasKey, truthy } from './python';
import { anomalousPayload, ignore, post, unsupportedEvent, type Integration } from './types';

/**
 * Jira (Cloud, and Server/Data Center 5.2+): a system webhook POSTs JSON
 * naming its event in `webhookEvent`. Posted, under the topic
 * "<KEY>: <summary>" (the issue's key and summary): jira:issue_created,
 * jira:issue_updated (each changelog item: assignee, status, priority, …),
 * jira:issue_deleted, comment_created, comment_updated and comment_deleted.
 * Ignored: attachments, issue links, worklogs, sprints and version releases.
 * Any other event is unsupported; a body without `webhookEvent` is not
 * Jira's (anomalous). The event is `webhookEvent`. No options.
 *
 * Issue links are guessed from the issue's REST URL (…/rest/api/… becomes
 * …/browse/<KEY>), as the payload has no web URL. Jira people are named by
 * their display name: Zulip mentions the Zulip user matching a person's
 * Atlassian account ID or email instead when there is one, which an
 * integration without the organization's users cannot do. Likewise a
 * `[~name]` mention inside a comment becomes **name** in bold.
 *
 * Zulip URL-decodes the `stream` and `topic` query parameters of Jira's
 * requests once more than for other services (a URL pasted into Jira may
 * carry them encoded twice): that is the endpoint's to do, not this file's.
 */
export const jira: Integration = {
  name: 'jira',
  displayName: 'Jira',
  // Jira percent-encodes the URL's parameters twice (a space arrives as %2520).
  unquoteUrlParameters: true,
  handle(input) {
    const p = input.payload;
    const event = p.opt('webhookEvent')?.str() ?? null;
    if (event !== null && IGNORED.has(event)) return ignore(event);
    if (event === null) throw anomalousPayload();
    const content = CONTENT.get(event);
    if (!content) throw unsupportedEvent(event);
    // Trimmed as Zulip's send path trims it: an update's changelog lines each end in a newline.
    return post(event, `${issueKey(p)}: ${issueTitle(p)}`, content(p).trimEnd());
  },
  docs: {
    summary: 'Posts Jira issue activity (created, updated, deleted, comments), one topic per issue.',
    setup: [
      'In Jira, open **Settings** → **System** and select **WebHooks** (under **Advanced**), then **Create a WebHook**.',
      'Name it, set its status to **Enabled**, set **URL** to the URL below, and tick the issue and comment events to be notified about.',
      'Click **Create**.',
    ],
  },
};

const IGNORED = new Set([
  'attachment_created',
  'issuelink_created',
  'issuelink_deleted',
  'jira:version_released',
  'jira:worklog_updated',
  'sprint_closed',
  'sprint_started',
  'worklog_created',
  'worklog_updated',
]);

const CONTENT = new Map<string, (p: Payload) => string>([
  ['jira:issue_created', issueCreated],
  ['jira:issue_deleted', issueDeleted],
  ['jira:issue_updated', issueUpdated],
  ['comment_created', (p) => commentContent(p, 'commented on', (c) => c)],
  ['comment_updated', (p) => commentContent(p, 'updated their comment on', (c) => c)],
  ['comment_deleted', (p) => commentContent(p, 'deleted their comment on', (c) => `~~${c}~~`)],
]);

function issueCreated(p: Payload): string {
  const priority = textAt(p, ['issue', 'fields', 'priority', 'name']).toLowerCase();
  const assignee = personField(p, ['issue', 'fields', 'assignee']);
  return `${person(p.get('user'))} created ${issueLink(p)} with ${priority} priority${assignee ? ` (assigned to ${person(assignee)})` : ''}.`;
}

function issueDeleted(p: Payload): string {
  // No full stop after a summary that already ends in punctuation.
  const punctuation = PUNCTUATION.includes(issueTitle(p).slice(-1) || '.') ? '' : '.';
  return `${person(p.get('user'))} deleted ${issueLink(p)}${punctuation}`;
}

/** Python's string.punctuation. */
const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

/** An update lists its changelog, one line a changed field; the assignee is named in the header too. */
function issueUpdated(p: Payload): string {
  const assigneeField = personField(p, ['issue', 'fields', 'assignee']);
  const assignee = assigneeField ? person(assigneeField) : '';
  let content = `${person(p.get('user'))} updated ${issueLink(p, textAt(p, ['issue', 'key']))}${assignee ? ` (assigned to ${assignee})` : ''}:\n\n`;
  const changelog = truthy(p.opt('changelog'));
  if (changelog) {
    for (const item of changelog.opt('items')?.list() ?? []) {
      // Python formats a missing field or value as None.
      const field = item.opt('field')?.str() ?? 'None';
      const to = field === 'assignee' && assignee ? assignee : `**${item.opt('toString')?.str() ?? 'None'}**`;
      const from = item.opt('fromString')?.str() ?? '';
      content += `* Changed ${field}${from ? ` from **${from}**` : ''} to ${to}\n`;
    }
  }
  return content;
}

function commentContent(p: Payload, verb: string, decorate: (comment: string) => string): string {
  const comment = p.get('comment');
  const body = normalizeComment(comment.get('body').str());
  return `${person(comment.get('author'))} ${verb} ${issueLink(p)}\n\`\`\` quote\n${decorate(body)}\n\`\`\``;
}

/**
 * A Jira person. Zulip names the Zulip user whose Atlassian account ID or
 * email matches with a silent mention; without the organization's users the
 * display name is what it falls back to.
 */
function person(p: Payload): string {
  return p.get('displayName').str();
}

/** A person-valued field when it holds someone (a non-empty object). */
function personField(p: Payload, keys: string[]): Payload | null {
  let cur: Payload | null = p;
  for (const k of keys) cur = cur?.isObject() ? cur.opt(k) : null;
  return cur?.isObject() ? truthy(cur) : null;
}

/**
 * Zulip's lenient lookup: a missing key (or a non-object on the way) gives
 * the fallback, but a value that is there must be a string.
 */
function textAt(p: Payload, keys: string[], fallback = ''): string {
  let cur = p;
  for (const k of keys) {
    if (!hasKey(cur, k)) return fallback;
    const next = cur.opt(k);
    if (next === null) return new Payload(null, `${cur.path}[${JSON.stringify(k)}]`).str();
    cur = next;
  }
  return cur.str();
}

/**
 * Some old Jira versions (or plugins) send comment events without the
 * issue: the topic then uses the issue's internal ID from the comment's
 * REST URL, and asks for an upgrade in place of the summary.
 */
function issueKey(p: Payload): string {
  if (!hasKey(p, 'issue')) return p.at('comment', 'self').str().split('/').at(-3) ?? '';
  return textAt(p, ['issue', 'key']);
}

function issueTitle(p: Payload): string {
  if (!hasKey(p, 'issue')) return 'Upgrade Jira to get the issue title here.';
  return textAt(p, ['issue', 'fields', 'summary']);
}

/** "KEY: summary", linked to the issue's page when its REST URL shows where Jira lives. */
function issueLink(p: Payload, key = issueKey(p)): string {
  const text = `${key}: ${issueTitle(p)}`;
  const base = /^(.*)\/rest\/api\/.*/.exec(textAt(p, ['issue', 'self']));
  return base ? `[${text}](${base[1]}/browse/${key})` : text;
}

/**
 * Jira's wiki markup, roughly, in Zulip's Markdown: *bold*, {{monospace}},
 * bq. quotes, {quote}/{noformat}/{code} blocks, [links] and [title|links],
 * and [~name] mentions (in bold, as Zulip does for a name it cannot match).
 * Jira also escapes "!" as "\!".
 */
function normalizeComment(raw: string): string {
  return raw
    .replace(/\*([^*]+)\*/g, '**$1**')
    .replace(/\{\{([^*]+?)\}\}/g, '`$1`')
    .replace(/bq\. (.*)/g, '> $1')
    .replace(/\{quote\}([\s\S]*?)\{quote\}/g, '~~~ quote\n$1\n~~~')
    .replace(/\{noformat\}([\s\S]*?)\{noformat\}/g, '~~~\n$1\n~~~')
    .replace(/\{code[^\n]*\}([\s\S]*?)\{code\}/g, '~~~\n$1\n~~~')
    .replace(/\[([^|~]+?)\]/g, '[$1]($1)')
    .replace(/\[(?:([^|~]+)\|)([^\]]*)\]/g, '[$1]($2)')
    .replace(/\[~(.*?)\]/g, '**$1**')
    .replaceAll('\\!', '!');
}
