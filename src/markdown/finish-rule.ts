/** The last core rule (after text_join): link clean-up, the mention and link flags, and image previews. */
import type MarkdownIt from 'markdown-it';
import { insertPreviews, planPreviews, type LinkFound } from './image-previews';
import { isUploadLink, linkCloseIndex, linkText, tidyLinks } from './links';
import { recordMention, type MentionMeta } from './mentions';
import type { RenderEnv, RenderResult } from './render-context';

type Token = MarkdownIt.Token;
type StateCore = MarkdownIt.StateCore;

function scanInline(children: Token[], inlineIndex: number, inQuote: boolean, result: RenderResult): LinkFound[] {
  const links: LinkFound[] = [];
  for (let i = 0; i < children.length; i++) {
    const token = children[i]!;
    if (token.type === 'zulip_mention') recordMention(token.meta as MentionMeta, inQuote, result);
    // Zulip sets has_link for every <a> in the message, channel links included.
    if (token.type === 'zulip_channel_link') result.hasLink = true;
    if (token.type !== 'link_open') continue;
    const href = token.attrGet('href') ?? '';
    result.hasLink = true;
    if (isUploadLink(href)) result.hasAttachment = true;
    const close = linkCloseIndex(children, i);
    const text = linkText(children, i, close);
    const alone = i === 0 && close === children.length - 1 && text === href;
    if (!inQuote) links.push({ inlineIndex, href, text, alone });
  }
  return links;
}

export function finishCoreRule(state: StateCore): void {
  const env = state.env as RenderEnv | undefined;
  if (!env?.result) return;
  const links: LinkFound[] = [];
  let quoteDepth = 0;
  state.tokens.forEach((token, i) => {
    if (token.type === 'blockquote_open') quoteDepth++;
    else if (token.type === 'blockquote_close') quoteDepth--;
    else if (token.type === 'inline' && token.children) {
      token.children = tidyLinks(token.children, state.Token);
      links.push(...scanInline(token.children, i, quoteDepth > 0, env.result));
    }
  });
  const plan = planPreviews(links, state.tokens, env.result);
  state.tokens = insertPreviews(state.tokens, plan, state.Token);
}
