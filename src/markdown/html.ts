import MarkdownIt from 'markdown-it';

// markdown-it hands out its string helpers only on an instance; they are the same functions
// for every instance, so one without rules serves every rule file.
const { utils } = new MarkdownIt('zero');

export const escapeHtml = (text: string): string => utils.escapeHtml(text);
export const unescapeAll = (text: string): string => utils.unescapeAll(text);
