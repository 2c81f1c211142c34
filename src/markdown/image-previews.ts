/** Inline previews of image links, chosen like Zulip's InlineInterestingLinkProcessor. */
import type MarkdownIt from 'markdown-it';
import { escapeHtml } from './html';
import { isImageLink } from './links';
import type { RenderResult } from './render-context';

type Token = MarkdownIt.Token;
type TokenConstructor = MarkdownIt.StateCore['Token'];

/** Zulip stops previewing when a message has more distinct links than this. */
const INLINE_PREVIEW_LIMIT = 24;

export interface ImagePreview {
  url: string;
  title: string | undefined;
}

export interface LinkFound {
  inlineIndex: number;
  href: string;
  text: string;
  /** The link is all there is in its paragraph or list item, shown as its URL. */
  alone: boolean;
}

/**
 * Chooses image previews like Zulip's InlineInterestingLinkProcessor: no
 * previews for quoted links, each URL once, none at all past the limit.
 * A paragraph that held nothing but the image URL is replaced by the preview.
 */
export function planPreviews(links: LinkFound[], tokens: Token[], result: RenderResult): Map<number, ImagePreview[]> {
  const plan = new Map<number, ImagePreview[]>();
  if (new Set(links.map((link) => link.href)).size > INLINE_PREVIEW_LIMIT) return plan;
  const seen = new Set<string>();
  for (const link of links) {
    if (seen.has(link.href)) continue;
    seen.add(link.href);
    if (!isImageLink(link.href)) continue;
    result.hasImage = true;
    const title = link.text === link.href ? undefined : link.text;
    const previews = plan.get(link.inlineIndex) ?? [];
    previews.push({ url: link.href, title });
    plan.set(link.inlineIndex, previews);
    if (link.alone) hideInline(tokens, link.inlineIndex);
  }
  return plan;
}

/** Drops a paragraph (or a tight list item's text) that held only the image URL. */
function hideInline(tokens: Token[], inlineIndex: number): void {
  const before = tokens[inlineIndex - 1];
  const after = tokens[inlineIndex + 1];
  // Links alone in a heading or table cell stay, as in Zulip.
  if (before?.type !== 'paragraph_open' || after?.type !== 'paragraph_close') return;
  tokens[inlineIndex]!.children = [];
  before.hidden = true;
  after.hidden = true;
}

function previewToken(TokenCtor: TokenConstructor, previews: ImagePreview[]): Token {
  const token = new TokenCtor('zulip_image_preview', 'div', 0);
  token.block = true;
  token.meta = previews;
  return token;
}

/** Previews go right after their paragraph (inside a list item for lists), else at the end. */
export function insertPreviews(tokens: Token[], plan: Map<number, ImagePreview[]>, TokenCtor: TokenConstructor): Token[] {
  if (plan.size === 0) return tokens;
  const out: Token[] = [];
  const atEnd: ImagePreview[] = [];
  for (const [index, previews] of plan) {
    if (tokens[index + 1]?.type !== 'paragraph_close') atEnd.push(...previews);
  }
  tokens.forEach((token, i) => {
    out.push(token);
    const previews = token.type === 'paragraph_close' ? plan.get(i - 1) : undefined;
    if (previews) out.push(previewToken(TokenCtor, previews));
  });
  if (atEnd.length > 0) out.push(previewToken(TokenCtor, atEnd));
  return out;
}

export function renderImagePreviews(previews: ImagePreview[]): string {
  const divs = previews.map(({ url, title }) => {
    const href = escapeHtml(url);
    const titleAttr = title === undefined ? '' : ` title="${escapeHtml(title)}"`;
    return (
      `<div class="message_inline_image"><a href="${href}" rel="noopener noreferrer" target="_blank"${titleAttr}>` +
      `<img src="${href}"></a></div>`
    );
  });
  return `${divs.join('')}\n`;
}
