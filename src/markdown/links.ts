/** Links: which targets are allowed, how scheme-less ones are completed, file-name autolinks undone, and how they render. */
import type MarkdownIt from 'markdown-it';
import { escapeHtml } from './html';

type Token = MarkdownIt.Token;
type TokenConstructor = MarkdownIt.StateCore['Token'];

/** Schemes Zulip lets through in links (sanitize_url); anything else stays text. */
const ALLOWED_SCHEMES = new Set([
  'http',
  'https',
  'ftp',
  'file',
  'bitcoin',
  'geo',
  'im',
  'irc',
  'ircs',
  'magnet',
  'mailto',
  'matrix',
  'mms',
  'news',
  'nntp',
  'openpgp4fpr',
  'sip',
  'sms',
  'smsto',
  'ssh',
  'tel',
  'urn',
  'webcal',
  'wtai',
  'xmpp',
]);
const URL_SCHEME = /^([a-zA-Z][a-zA-Z0-9+.-]*):/;
const QUERY_OR_FRAGMENT = /[?#]/;
const HOST_END = /[/?#:]/;
/** Zulip's IMAGE_EXTENSIONS: links to these get an inline preview. */
const IMAGE_EXTENSION = /\.(?:bmp|gif|jpe|jpeg|jpg|png|webp)$/;
/**
 * File extensions that are also TLDs; Zulip does not auto-link "readme.md" or
 * "views.py" (list_of_tlds drops them).
 */
const NON_LINK_TLDS = new Set(['java', 'md', 'mov', 'py', 'zip']);

export function isSafeImageSource(url: string): boolean {
  const scheme = URL_SCHEME.exec(url)?.[1]?.toLowerCase();
  return scheme === undefined ? url.startsWith('/') : scheme === 'http' || scheme === 'https';
}

/** markdown-it calls this for every link target; rejected links stay literal text. */
export function validateLink(url: string): boolean {
  const scheme = URL_SCHEME.exec(url)?.[1];
  return scheme === undefined || ALLOWED_SCHEMES.has(scheme.toLowerCase());
}

/**
 * Zulip's sanitize_url for scheme-less targets: "/path" and "#fragment" stay
 * relative, "a@b.c" becomes mailto:, anything else is assumed to be http://.
 */
function finalizeHref(href: string): string {
  if (URL_SCHEME.test(href) || href.startsWith('/') || href.startsWith('#') || href === '') return href;
  if (href.includes('@')) return `mailto:${href}`;
  return `http://${href}`;
}

export function isUploadLink(href: string): boolean {
  return href.startsWith('/user_uploads/');
}

export function isImageLink(href: string): boolean {
  const scheme = URL_SCHEME.exec(href)?.[1]?.toLowerCase();
  let path: string;
  if (scheme === undefined) {
    path = href.split(QUERY_OR_FRAGMENT, 1)[0]!;
  } else if (scheme === 'http' || scheme === 'https') {
    try {
      path = new URL(href).pathname;
    } catch {
      return false;
    }
  } else {
    return false;
  }
  return IMAGE_EXTENSION.test(path.toLowerCase());
}

/** Bare "readme.md" / "views.py" are file names, not links (see NON_LINK_TLDS). */
function isFileNameAutolink(open: Token, text: Token | undefined): boolean {
  if (open.markup !== 'linkify' || text?.type !== 'text') return false;
  const shown = text.content;
  if (shown.includes('://') || shown.includes('@')) return false;
  const host = shown.split(HOST_END, 1)[0]!;
  return NON_LINK_TLDS.has(host.slice(host.lastIndexOf('.') + 1).toLowerCase());
}

/** Index of the link_close matching the link_open at `open`. */
export function linkCloseIndex(children: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < children.length; i++) {
    if (children[i]!.type === 'link_open') depth++;
    else if (children[i]!.type === 'link_close' && --depth === 0) return i;
  }
  return children.length - 1;
}

export function linkText(children: Token[], open: number, close: number): string {
  let text = '';
  for (let i = open + 1; i < close; i++) {
    const token = children[i]!;
    if (token.type === 'text' || token.type === 'code_inline') text += token.content;
  }
  return text;
}

/** Unwraps file-name autolinks and gives empty links their URL as text (as Zulip does). */
export function tidyLinks(children: Token[], TokenCtor: TokenConstructor): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < children.length; i++) {
    const token = children[i]!;
    if (token.type !== 'link_open') {
      out.push(token);
      continue;
    }
    if (isFileNameAutolink(token, children[i + 1])) {
      out.push(children[i + 1]!);
      i = linkCloseIndex(children, i);
      continue;
    }
    token.attrSet('href', finalizeHref(token.attrGet('href') ?? ''));
    out.push(token);
    const close = linkCloseIndex(children, i);
    const onlyBlankText = children.slice(i + 1, close).every((t) => t.type === 'text' && t.content.trim() === '');
    if (onlyBlankText) {
      const filler = new TokenCtor('text', '', 0);
      filler.content = token.attrGet('href') ?? '';
      out.push(filler, children[close]!);
      i = close;
    }
  }
  return out;
}

export function renderLinkOpen(token: Token): string {
  const href = escapeHtml(token.attrGet('href') ?? '');
  // Zulip's url_to_a gives a linkifier's link its href alone.
  if (token.markup === 'linkifier') return `<a href="${href}">`;
  const title = token.attrGet('title');
  const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
  return `<a href="${href}" rel="noopener noreferrer" target="_blank"${titleAttr}>`;
}
