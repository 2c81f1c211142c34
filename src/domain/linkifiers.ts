/**
 * Linkifiers: an organization's patterns that turn matching text in
 * messages and topics into links (Zulip's RealmFilter). The rules here are
 * pure: checking a new linkifier as Zulip does (the pattern compiles, the
 * URL template is valid, the template's variables are exactly the pattern's
 * named groups), compiling one for matching, and finding its matches.
 *
 * Zulip matches with RE2, whose matching time is linear in the text: a
 * pattern an administrator writes can never make a render hang. Parley gets
 * the same guarantee from V8's linear-time regular expression engine (the
 * `l` flag, behind a V8 flag set at load below): a pattern that engine
 * cannot run in linear time is refused when it is added, and every
 * linkifier is matched with it (ADR 0042).
 */
import { setFlagsFromString } from 'node:v8';
import { ApiError } from '../errors';
import { expandUrlTemplate, parseUrlTemplate, type UrlTemplate } from './url-template';

// Lets `new RegExp(source, 'l')` compile on the linear-time engine. Without
// it every 'l' pattern throws a SyntaxError, so a missed flag fails loudly
// (every linkifier refused) rather than silently matching by backtracking.
setFlagsFromString('--enable-experimental-regexp-engine');

/** The flag of V8's linear-time engine (a variable: linters know only the standard flags). */
const LINEAR = 'l';

/**
 * Python's str.strip(), which Zulip's views apply to these values: Unicode
 * whitespace, with U+0085 and the separators U+001C to U+001F that
 * JavaScript's \s leaves out.
 */
// eslint-disable-next-line no-control-regex -- U+001C..U+001F are whitespace to Python
const PYTHON_EDGE_SPACE = /^[\s\u0085\u001c-\u001f]+|[\s\u0085\u001c-\u001f]+$/g;
export const pythonStrip = (s: string): string => s.replace(PYTHON_EDGE_SPACE, '');

/** A linkifier as stored and sent (Zulip's LinkifierDict). */
export interface Linkifier {
  id: number;
  pattern: string;
  url_template: string;
}

/** A linkifier ready for matching. */
export interface CompiledLinkifier extends Linkifier {
  /** The pattern wrapped in Zulip's boundaries, global, on the linear-time engine. */
  readonly regex: RegExp;
  readonly template: UrlTemplate;
  readonly groupNames: readonly string[];
}

/** A pattern's or template's length: Zulip has none; a Parley limit keeps rows and compiled programs small. */
export const MAX_LINKIFIER_PATTERN_LENGTH = 1000;
export const MAX_URL_TEMPLATE_LENGTH = 1000;

/**
 * The characters of a Unicode property class, as a class body of BMP
 * ranges. The linear-time engine runs without the `u` flag, so `\p{...}`
 * is unavailable; the classes are spelled out once at load. Astral
 * characters are two code units there: surrogates are in no class, so an
 * astral letter right after a match counts as a boundary (an emoji does in
 * Zulip too, which is the common case).
 */
function bmpClass(property: RegExp): string {
  let body = '';
  let start = -1;
  const hex = (c: number) => `\\u${c.toString(16).padStart(4, '0')}`;
  for (let c = 0; c <= 0x10000; c++) {
    const inside = c < 0x10000 && (c < 0xd800 || c > 0xdfff) && property.test(String.fromCharCode(c));
    if (inside && start < 0) start = c;
    if (!inside && start >= 0) {
      body += start === c - 1 ? hex(start) : `${hex(start)}-${hex(c - 1)}`;
      start = -1;
    }
  }
  return body;
}

/**
 * Zulip's prepare_linkifier_pattern: a match must follow the start of the
 * text, whitespace (RE2's ASCII \s, U+0085 and \pZ: together Unicode's
 * White_Space) or one of ' " ( , : <, and must be followed by the end of
 * the text or a character that is neither a letter nor a digit. The
 * boundaries are groups 1 and 3; the linkified text is group 2.
 */
const BEFORE = `(^|[\\t\\n\\f\\r \\u0085${bmpClass(/\p{Z}/u)}'"(,:<])`;
const AFTER = `($|[^${bmpClass(/[\p{L}\p{N}]/u)}])`;

/** Python's named group syntax, which Zulip's patterns use, in JavaScript's spelling. */
const PYTHON_NAMED_GROUP = /\(\?P</g;

function badRegex(detail: string): ModelValidationError {
  return new ModelValidationError({ __all__: [`Bad regular expression: ${detail}`] });
}

/**
 * RE2's wording for the errors administrators meet most (Zulip sends RE2's
 * message after "Bad regular expression: "); V8's for the rest, and a
 * message of Parley's for a pattern the linear-time engine cannot run.
 */
function describeSyntaxError(pattern: string, message: string): string {
  const reason = message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
  if (reason === 'Unterminated group') return `missing ): ${pattern}`;
  if (reason === "Unmatched ')'") return `unexpected ): ${pattern}`;
  if (reason === 'Nothing to repeat') return `missing argument to repetition operator: ${pattern}`;
  if (reason === 'Unterminated character class') return `missing ]: ${pattern}`;
  if (reason === '\\ at end of pattern') return 'trailing \\';
  if (reason === 'Cannot be executed in linear time') {
    return 'the pattern cannot be matched in linear time (no look-around, back-references, case-insensitive flags or repetition counts above 16)';
  }
  return reason.charAt(0).toLowerCase() + reason.slice(1);
}

/** The pattern in JavaScript syntax on the linear-time engine, and its named groups; throws Zulip's "Bad regular expression". */
function compilePattern(pattern: string): { source: string; groupNames: string[] } {
  const source = pattern.replace(PYTHON_NAMED_GROUP, '(?<');
  let probe: RegExp;
  try {
    // The empty alternative makes exec('') match at once, listing every named group.
    probe = new RegExp(`(?:${source})|`, LINEAR);
  } catch (err) {
    throw badRegex(describeSyntaxError(pattern, (err as Error).message));
  }
  const groups = probe.exec('')?.groups ?? {};
  return { source, groupNames: Object.keys(groups) };
}

/** Django's ValidationError as Zulip sends it: the first message, and every message by field. */
export class ModelValidationError extends ApiError<'BAD_REQUEST'> {
  constructor(errors: Record<string, string[]>) {
    super(Object.values(errors)[0]![0]!, 'BAD_REQUEST', 400, { errors });
  }
}

/**
 * Zulip's checks of a linkifier (RealmFilter.full_clean), after the view
 * strips both values: the fields first (a blank pattern or template, an
 * invalid template), then the model's own check (the pattern compiles; with
 * a valid template, every template variable is a named group and every
 * named group is used, the smallest missing name reported), then
 * uniqueness, which the caller checks with `patternTaken` (Zulip skips it
 * when the pattern itself failed). The error carries the first message as
 * msg and all of them by field, as Zulip's ValidationFailureError.
 */
export function checkLinkifier(pattern: string, urlTemplate: string, patternTaken: boolean): void {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (pattern === '') add('pattern', 'This field cannot be blank.');
  else if (pattern.length > MAX_LINKIFIER_PATTERN_LENGTH) {
    add('pattern', `Ensure this value has at most ${MAX_LINKIFIER_PATTERN_LENGTH} characters (it has ${pattern.length}).`);
  }
  const template = urlTemplate.length > MAX_URL_TEMPLATE_LENGTH ? null : parseUrlTemplate(urlTemplate);
  if (urlTemplate === '') add('url_template', 'This field cannot be blank.');
  else if (urlTemplate.length > MAX_URL_TEMPLATE_LENGTH) {
    add('url_template', `Ensure this value has at most ${MAX_URL_TEMPLATE_LENGTH} characters (it has ${urlTemplate.length}).`);
  } else if (!template) add('url_template', 'Invalid URL template.');
  try {
    const { groupNames } = compilePattern(pattern);
    if (template) {
      const groups = new Set(groupNames);
      const variables = new Set(template.variables);
      const notInPattern = [...variables].filter((v) => !groups.has(v)).sort();
      const notInTemplate = [...groups].filter((g) => !variables.has(g)).sort();
      if (notInPattern.length) add('__all__', `Group '${notInPattern[0]}' in URL template is not present in linkifier pattern.`);
      else if (notInTemplate.length) add('__all__', `Group '${notInTemplate[0]}' in linkifier pattern is not present in URL template.`);
    }
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    add('__all__', err.message);
  }
  if (patternTaken && !errors.pattern) add('__all__', 'Realm filter with this Realm and Pattern already exists.');
  if (Object.keys(errors).length) throw new ModelValidationError(errors);
}

/** A stored linkifier ready for matching; null for one that no longer compiles (Zulip skips those too). */
export function compileLinkifier(l: Linkifier): CompiledLinkifier | null {
  const template = parseUrlTemplate(l.url_template);
  if (!template) return null;
  try {
    const { source, groupNames } = compilePattern(l.pattern);
    const regex = new RegExp(`${BEFORE}(${source})${AFTER}`, `${LINEAR}g`);
    return Object.freeze({ ...l, regex, template, groupNames });
  } catch {
    return null;
  }
}

/** One match: the linkified text is text.slice(start, end); `matchStart` includes the boundary before it. */
export interface LinkifierMatch {
  matchStart: number;
  start: number;
  end: number;
  /** Where the whole match ends, the boundary after the text included. */
  matchEnd: number;
  url: string;
}

/**
 * The first match at or after `from`. As with Python's search at a
 * position, `^` matches only at the very start of `text`: a later match
 * needs a boundary character of its own.
 */
export function searchLinkifier(l: CompiledLinkifier, text: string, from: number): LinkifierMatch | null {
  l.regex.lastIndex = from;
  const m = l.regex.exec(text);
  if (!m) return null;
  const start = m.index + m[1]!.length;
  const end = start + m[2]!.length;
  const values: Record<string, string | undefined> = {};
  for (const name of l.groupNames) values[name] = m.groups?.[name];
  return { matchStart: m.index, start, end, matchEnd: m.index + m[0].length, url: expandUrlTemplate(l.template, values) };
}
