/**
 * Zulip-flavoured Markdown → safe HTML for message content.
 *
 * Built on markdown-it with raw HTML disabled (so `<script>` is escaped) and
 * our own rules for Zulip's syntax: @-mentions, group mentions, wildcards,
 * channel/topic links, :emoji:, ```quote / ```spoiler fences and inline image
 * previews. The HTML shapes (class names, attributes, text) follow what the
 * Zulip server stores in `rendered_content`, because Zulip clients parse it;
 * see zerver/lib/markdown/__init__.py, zerver/lib/mention.py,
 * zerver/lib/markdown/fenced_code.py and
 * zerver/tests/fixtures/markdown_test_cases.json in zulip/zulip.
 *
 * Rendering needs names and ids from the database. Callers first run
 * `extractMentionCandidates` on the raw content, fetch those rows, then call
 * `renderMessage` with the maps; the renderer itself never touches the DB.
 *
 * Each family of rules lives in its own file (mentions, channel links,
 * underscores, container fences, emoji, links and image previews, code
 * blocks, linkifiers); this one assembles them into the parser.
 */
import { LRUCache } from 'lru-cache';
import MarkdownIt from 'markdown-it';
import { channelLinkRule, renderChannelLink, type ChannelLinkMeta } from './channel-links';
import { fenceLanguage, renderCodeBlock } from './code-blocks';
import { containerFenceRule, SPOILER_HTML } from './container-fences';
import { emojiCoreRule, renderEmoji, type EmojiMeta } from './emoji-rule';
import { finishCoreRule } from './finish-rule';
import { renderImagePreviews, type ImagePreview } from './image-previews';
import { linkifierCoreRule } from './linkifiers';
import { renderLinkOpen, validateLink } from './links';
import { topicLinks, type TopicLink } from './topic-links';
import type { CompiledLinkifier } from '../domain/linkifiers';
import { mentionRule, renderMention, type MentionMeta } from './mentions';
import type { RenderContext, RenderEnv, RenderResult } from './render-context';
import { underscoreRule } from './underscores';

export type { MentionableUser, RenderContext, RenderResult, MentionCandidates } from './render-context';
export type { TopicLink } from './topic-links';
export { channelNarrowPath, encodeHashComponent } from './channel-links';
export { extractMentionCandidates } from './mention-candidates';

/** The parser, built once. Our tokens render with their attributes in alphabetical order, like Zulip's output. */
function createParser(): MarkdownIt {
  const parser = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });
  // Zulip has no reference links, no setext headings, no ![image](syntax)
  // (it previews image links instead) and no <autolinks> (`<a@b.com>` keeps
  // its brackets around a linkified address).
  parser.disable(['reference', 'lheading', 'image', 'autolink']);
  parser.validateLink = validateLink;

  parser.inline.ruler.before('emphasis', 'zulip_mention', mentionRule);
  parser.inline.ruler.before('emphasis', 'zulip_channel_link', channelLinkRule);
  parser.inline.ruler.before('emphasis', 'zulip_underscore', underscoreRule);
  parser.block.ruler.before('fence', 'zulip_container_fence', containerFenceRule, {
    alt: ['paragraph', 'reference', 'blockquote', 'list'],
  });
  parser.core.ruler.before('text_join', 'zulip_emoji', emojiCoreRule);
  // After text_join (one text token per run of text), before the links are tidied and counted.
  parser.core.ruler.push('zulip_linkifiers', linkifierCoreRule);
  parser.core.ruler.push('zulip_finish', finishCoreRule);

  const rules = parser.renderer.rules;
  rules.zulip_mention = (tokens, idx) => renderMention(tokens[idx]!.meta as MentionMeta);
  rules.zulip_channel_link = (tokens, idx) => renderChannelLink(tokens[idx]!.meta as ChannelLinkMeta);
  rules.zulip_emoji = (tokens, idx) => renderEmoji(tokens[idx]!.meta as EmojiMeta);
  rules.zulip_image_preview = (tokens, idx) => renderImagePreviews(tokens[idx]!.meta as ImagePreview[]);
  rules.zulip_spoiler_open = () => SPOILER_HTML.open;
  rules.zulip_spoiler_content = () => SPOILER_HTML.content;
  rules.zulip_spoiler_close = () => SPOILER_HTML.close;
  rules.fence = (tokens, idx) => renderCodeBlock(tokens[idx]!.content, fenceLanguage(tokens[idx]!.info));
  rules.code_block = (tokens, idx) => renderCodeBlock(tokens[idx]!.content, undefined);
  rules.link_open = (tokens, idx) => renderLinkOpen(tokens[idx]!);
  // Zulip renders ~~strikethrough~~ as <del>.
  rules.s_open = () => '<del>';
  rules.s_close = () => '</del>';
  return parser;
}

const md = createParser();

/** Renders message content to the HTML Zulip clients expect, plus the flags the server stores. */
export function renderMessage(content: string, ctx: RenderContext): RenderResult {
  const result: RenderResult = {
    html: '',
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    streamWildcard: false,
    topicWildcard: false,
    hasLink: false,
    hasImage: false,
    hasAttachment: false,
    // Zulip keeps "/me" in the HTML; clients replace it with the sender's name.
    isMeMessage: content.startsWith('/me '),
  };
  const env: RenderEnv = { ctx, result };
  const html = md.render(content, env);
  let end = html.length;
  while (end > 0 && html.charCodeAt(end - 1) === 0x0a) end--;
  result.html = html.slice(0, end);
  return result;
}

/**
 * Recent topics' links per compiled linkifier list. The linkifier cache
 * (src/cache/linkifiers.ts) hands out one frozen list until the
 * organization's linkifiers change, and then a new one, so the links
 * computed with a list stay right for as long as the list is in use. Every
 * page of messages asks for the links of each of its topics: the pattern
 * matching (linkifiers, then linkify-it over the whole topic) was 8 % of
 * Parley's CPU for GET /messages at 1m (ADR 0056).
 */
const recentTopicLinks = new WeakMap<readonly CompiledLinkifier[], LRUCache<string, readonly TopicLink[]>>();
const TOPICS_KEPT_PER_LIST = 2000;
/** Every empty list is one key: callers without linkifiers pass a new `[]`. */
const NO_LINKIFIERS: readonly CompiledLinkifier[] = Object.freeze([]);

/** A topic's links (a message's topic_links): the linkifiers' matches and the raw URLs in it. A new array; the links are shared. */
export function topicLinksOf(topic: string, linkifiers: readonly CompiledLinkifier[]): Array<Readonly<TopicLink>> {
  const key = linkifiers.length ? linkifiers : NO_LINKIFIERS;
  let recent = recentTopicLinks.get(key);
  if (!recent) recentTopicLinks.set(key, (recent = new LRUCache({ max: TOPICS_KEPT_PER_LIST })));
  let links = recent.get(topic);
  if (!links) recent.set(topic, (links = Object.freeze(topicLinks(topic, linkifiers, md.linkify).map((l) => Object.freeze(l)))));
  return links.slice();
}
