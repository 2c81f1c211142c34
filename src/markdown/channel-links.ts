/** Channel, topic and message links: `#**channel**`, `#**channel>topic**`, `#**channel>topic@123**`. */
import type MarkdownIt from 'markdown-it';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import { escapeHtml } from './html';
import { BEFORE_MENTION, matchAt, mayStartMention } from './inline-match';
import type { RenderContext, RenderEnv } from './render-context';

type StateInline = MarkdownIt.StateInline;

// Sticky for the inline rule (matched at an exact position); global for the pre-render scan.
const CHANNEL_LINK_AT = /#\*\*([^*]+)\*\*/y;
export const CHANNEL_LINK_SCAN = new RegExp(String.raw`${BEFORE_MENTION}#\*\*([^*]+)\*\*`, 'g');

/**
 * `#**channel>topic@123**` (message link) and `#**channel>topic**`. The
 * topic may be empty (feature level 346): `#**channel>**` links to the
 * channel's empty topic and `#**channel>@123**` to a message in it.
 */
const CHANNEL_TOPIC_MESSAGE = /^([^*>]+)>([^*]*)@(\d+)$/;
const CHANNEL_TOPIC = /^([^*>]+)>([^*]*)$/;

const SPACES = / /g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const PYTHON_QUOTE_EXTRA = /[!'()]/g;
const HASH_SPECIAL = /[%.]/g;

/**
 * Zulip's encode_hash_component: Python's quote(s, safe="*"), then '%' → '.'
 * and '.' → '.2E', so "some topic" → "some.20topic".
 */
export function encodeHashComponent(text: string): string {
  const percent = encodeURIComponent(text.replace(LONE_SURROGATE, '\uFFFD')).replace(
    PYTHON_QUOTE_EXTRA,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return percent.replace(HASH_SPECIAL, (c) => (c === '%' ? '.' : '.2E'));
}

/** "/#narrow/channel/7-general-chat" — spaces in the name become '-' first (encode_channel). */
export function channelNarrowPath(channelId: number, channelName: string): string {
  return `/#narrow/channel/${channelId}-${encodeHashComponent(channelName.replace(SPACES, '-'))}`;
}

export type ChannelLinkMeta =
  | { kind: 'channel'; id: number; name: string }
  | { kind: 'topic'; id: number; name: string; topic: string }
  | { kind: 'message'; id: number; name: string; topic: string; messageId: string };

function resolveChannelLink(ctx: RenderContext, body: string): ChannelLinkMeta | undefined {
  const find = (name: string) => ctx.channelsByName.get(name.toLowerCase());
  // Same order as Zulip: message link, then topic link, then the whole body
  // as a channel name (a channel may contain '>').
  const message = CHANNEL_TOPIC_MESSAGE.exec(body);
  const messageChannel = message && find(message[1]!);
  if (message && messageChannel) {
    return { kind: 'message', ...messageChannel, topic: message[2]!, messageId: message[3]! };
  }
  const topic = CHANNEL_TOPIC.exec(body);
  const topicChannel = topic && find(topic[1]!);
  if (topic && topicChannel) return { kind: 'topic', ...topicChannel, topic: topic[2]! };
  const channel = find(body);
  return channel && { kind: 'channel', ...channel };
}

/** `#**channel**`, `#**channel>topic**`, `#**channel>topic@123**`. */
export function channelLinkRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */ || !mayStartMention(state.src, state.pos)) return false;
  const m = matchAt(CHANNEL_LINK_AT, state);
  if (!m) return false;
  const meta = resolveChannelLink((state.env as RenderEnv).ctx, m[1]!);
  if (!meta) return false;
  if (!silent) state.push('zulip_channel_link', 'a', 0).meta = meta;
  state.pos += m[0].length;
  return true;
}

export function renderChannelLink(meta: ChannelLinkMeta): string {
  const channelPath = channelNarrowPath(meta.id, meta.name);
  if (meta.kind === 'channel') {
    return `<a class="stream" data-stream-id="${meta.id}" href="${escapeHtml(channelPath)}">${escapeHtml(`#${meta.name}`)}</a>`;
  }
  // The empty topic's path segment is empty ("/topic/", "/topic//near/5"), and Zulip shows it
  // as the empty topic's display name in <em> (Message.EMPTY_TOPIC_FALLBACK_NAME, not the topic).
  const topicPath = `${channelPath}/topic/${encodeHashComponent(meta.topic)}`;
  const topicText = meta.topic === '' ? `<em>${EMPTY_TOPIC_DISPLAY_NAME}</em>` : escapeHtml(meta.topic);
  const text = `${escapeHtml(`#${meta.name} > `)}${topicText}`;
  if (meta.kind === 'topic') {
    return `<a class="stream-topic" data-stream-id="${meta.id}" href="${escapeHtml(topicPath)}">${text}</a>`;
  }
  return `<a class="message-link" href="${escapeHtml(`${topicPath}/near/${meta.messageId}`)}">${text} @ 💬</a>`;
}
