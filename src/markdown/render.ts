import MarkdownIt from 'markdown-it';

/**
 * Markdown → safe HTML. Raw HTML in the source is escaped (html: false), so
 * what users type can never inject markup; links are recognised in plain
 * text. Zulip's own syntax (mentions, channel links, emoji) builds on this.
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: true, typographer: false });

// Links open outside the app and do not leak the referrer, as Zulip renders them.
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('target', '_blank');
  tokens[idx]!.attrSet('rel', 'noopener noreferrer');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

export function renderMarkdown(source: string): string {
  if (source.trim() === '') return '';
  return md.render(source).trim();
}
