import { escapeHtml, unescapeAll } from './html';

const FENCE_INFO_LANG = /^\{?\.?([a-zA-Z0-9_+\-./#]+)/;

/**
 * Pygments lexer names for common fence languages; Zulip records the lexer
 * name in data-code-language (`py` → "Python"), or the lower-cased language
 * itself when Pygments does not know it. This is a best-effort subset.
 */
const CODE_LANGUAGE_NAMES: Record<string, string> = {
  python: 'Python',
  py: 'Python',
  python3: 'Python',
  py3: 'Python',
  python2: 'Python 2.x',
  py2: 'Python 2.x',
  javascript: 'JavaScript',
  js: 'JavaScript',
  typescript: 'TypeScript',
  ts: 'TypeScript',
  json: 'JSON',
  html: 'HTML',
  xml: 'XML',
  css: 'CSS',
  scss: 'SCSS',
  bash: 'Bash',
  sh: 'Bash',
  shell: 'Bash',
  zsh: 'Bash',
  ksh: 'Bash',
  console: 'Bash Session',
  sql: 'SQL',
  java: 'Java',
  c: 'C',
  cpp: 'C++',
  'c++': 'C++',
  csharp: 'C#',
  'c#': 'C#',
  go: 'Go',
  golang: 'Go',
  rust: 'Rust',
  rs: 'Rust',
  ruby: 'Ruby',
  rb: 'Ruby',
  php: 'PHP',
  yaml: 'YAML',
  yml: 'YAML',
  markdown: 'Markdown',
  md: 'Markdown',
  tex: 'TeX',
  latex: 'TeX',
  diff: 'Diff',
  patch: 'Diff',
  text: 'Text only',
  kotlin: 'Kotlin',
  swift: 'Swift',
  haskell: 'Haskell',
  hs: 'Haskell',
  scala: 'Scala',
  perl: 'Perl',
  lua: 'Lua',
  docker: 'Docker',
  dockerfile: 'Docker',
  ini: 'INI',
  toml: 'TOML',
  powershell: 'PowerShell',
  dart: 'Dart',
  elixir: 'Elixir',
  erlang: 'Erlang',
  clojure: 'Clojure',
  ocaml: 'OCaml',
  graphql: 'GraphQL',
  make: 'Makefile',
  makefile: 'Makefile',
};

const CODE_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const CODE_SPECIAL = /[&<>"']/g;
/** Pygments also escapes the apostrophe in code blocks. */
const escapeCode = (text: string): string => text.replace(CODE_SPECIAL, (c) => CODE_ESCAPES[c]!);

function trimNewlines(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) === 0x0a) start++;
  while (end > start && text.charCodeAt(end - 1) === 0x0a) end--;
  return text.slice(start, end);
}

function canonicalLanguage(lang: string): string {
  return Object.prototype.hasOwnProperty.call(CODE_LANGUAGE_NAMES, lang) ? CODE_LANGUAGE_NAMES[lang]! : lang;
}

/**
 * Zulip's code block: Pygments' `<div class="codehilite"><pre><span></span><code>`
 * wrapper (no highlighting spans here), trailing spaces and surrounding blank
 * lines removed, and data-code-language naming the language when one is given.
 */
export function renderCodeBlock(content: string, lang: string | undefined): string {
  if (content === '') return '';
  const code = trimNewlines(
    content
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n'),
  );
  const langAttr = lang ? ` data-code-language="${escapeHtml(canonicalLanguage(lang))}"` : '';
  return `<div class="codehilite"${langAttr}><pre><span></span><code>${escapeCode(code)}\n</code></pre></div>\n`;
}

export function fenceLanguage(info: string): string | undefined {
  return FENCE_INFO_LANG.exec(unescapeAll(info).trim())?.[1]?.toLowerCase();
}
