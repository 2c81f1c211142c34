/**
 * Linkifiers: an organization's patterns that turn matching text in
 * messages and topics into links (Zulip's RealmFilter). The rules here are
 * pure: checking a new linkifier as Zulip does (the pattern compiles, the
 * URL template is valid, the template's variables are exactly the pattern's
 * named groups), compiling one for matching, and finding its matches.
 *
 * Zulip validates and matches linkifier patterns with RE2, whose matching
 * time is linear in the text: a pattern an administrator writes can never
 * make a render hang. Parley uses re2js, a JavaScript port of the same
 * engine, so it accepts and refuses the patterns Zulip does, matches them
 * as Zulip does, and keeps the linear-time guarantee (ADR 0042).
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException, type Matcher } from 're2js';
import { ApiError } from '../errors';
import { expandUrlTemplate, parseUrlTemplate, type UrlTemplate } from './url-template';

/**
 * Python's str.strip(), which Zulip's views apply to these values: Unicode
 * whitespace, with U+0085 and the separators U+001C to U+001F that
 * JavaScript's \s leaves out.
 */
// eslint-disable-next-line no-control-regex -- U+001C..U+001F are whitespace to Python
const PYTHON_EDGE_SPACE = /^[\s\u0085\u001c-\u001f]+|[\s\u0085\u001c-\u001f]+$/g;
export const pythonStrip = (s: string): string => s.replace(PYTHON_EDGE_SPACE, '');

/** A linkifier as stored and sent (Zulip's LinkifierDict; the last three from feature levels 471 and 478). */
export interface Linkifier {
  id: number;
  pattern: string;
  url_template: string;
  /** Text the pattern matches; needed by a reverse template. */
  example_input: string | null;
  /** How a client writes a URL matching the template(s) back as linkifier text: `{name}` for a group, `{{` and `}}` for braces. */
  reverse_template: string | null;
  /** Further URL templates a client may turn back into text with the reverse template; rendering uses url_template only. */
  alternative_url_templates: string[];
}

/** The values an administrator sets (POST and PATCH /realm/filters), after trimming. */
export interface LinkifierFields {
  pattern: string;
  url_template: string;
  example_input: string | null;
  reverse_template: string | null;
  alternative_url_templates: string[];
}

/** A linkifier ready for matching. */
export interface CompiledLinkifier extends Pick<Linkifier, 'id' | 'pattern' | 'url_template'> {
  /** The pattern wrapped in Zulip's boundaries, on RE2. */
  readonly regex: RE2JS;
  readonly template: UrlTemplate;
  readonly groupNames: readonly string[];
}

/** A pattern's or template's length: Zulip has none; a Parley limit keeps rows and compiled programs small. */
export const MAX_LINKIFIER_PATTERN_LENGTH = 1000;
export const MAX_URL_TEMPLATE_LENGTH = 1000;
/** The example's and the reverse template's lengths, and the number of alternative templates (Parley limits). */
export const MAX_EXAMPLE_INPUT_LENGTH = 1000;
export const MAX_REVERSE_TEMPLATE_LENGTH = 1000;
export const MAX_ALTERNATIVE_URL_TEMPLATES = 20;

/**
 * Zulip's prepare_linkifier_pattern, in RE2 syntax as Zulip writes it: a
 * match must follow the start of the text, whitespace (RE2's ASCII \s,
 * U+0085 and \pZ: together Unicode's White_Space) or one of ' " ( , : <,
 * and must be followed by the end of the text or a character that is
 * neither a letter nor a digit (astral ones included: RE2 reads code
 * points). The groups carry Zulip's names, so a pattern that uses one of
 * them compiles on its own (and is accepted) but not wrapped, and then
 * matches nothing, as in Zulip.
 */
const BEFORE_GROUP = 'linkifier_before_match';
const MATCH_GROUP = 'linkifier_actual_match';
const AFTER_GROUP = 'linkifier_after_match';
const wrap = (pattern: string) =>
  `(?P<${BEFORE_GROUP}>^|\\s|\\x{85}|\\pZ|['"\\(,:<])(?P<${MATCH_GROUP}>${pattern})(?P<${AFTER_GROUP}>$|[^\\pL\\pN])`;

function badRegex(detail: string): ModelValidationError {
  return new ModelValidationError({ __all__: [`Bad regular expression: ${detail}`] });
}

/**
 * RE2's own wording (its C++ error texts, which Zulip sends after "Bad
 * regular expression: ") for re2js's, which are those of Go's port: the
 * same errors, other words. RE2 names the whole `(?P<name>` of a repeated
 * group name, where re2js names just the name.
 */
const RE2_ERROR_TEXT: Record<string, string> = {
  'missing closing )': 'missing )',
  'missing closing ]': 'missing ]',
  'missing argument to repetition operator': 'no argument for repetition operator',
  'invalid nested repetition operator': 'bad repetition operator',
  'invalid repeat count': 'invalid repetition size',
  'invalid or unsupported Perl syntax': 'invalid perl operator',
  'invalid named capture': 'invalid named capture group',
  'duplicate capture group name': 'invalid named capture group',
  'trailing backslash at end of expression': 'trailing \\',
};

function describeSyntaxError(pattern: string, err: RE2JSSyntaxException): string {
  const description = err.getDescription();
  let arg = err.getPattern();
  if (description === 'duplicate capture group name' && arg !== null) {
    const python = `(?P<${arg}>`;
    arg = pattern.includes(python) ? python : `(?<${arg}>`;
  }
  const text = RE2_ERROR_TEXT[description] ?? description;
  return arg ? `${text}: ${arg}` : text;
}

/** The pattern on RE2, as Zulip's filter_pattern_validator compiles it; throws Zulip's "Bad regular expression". */
function compilePattern(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    if (err instanceof RE2JSSyntaxException) throw badRegex(describeSyntaxError(pattern, err));
    if (err instanceof RE2JSException) throw badRegex(err.message);
    throw err;
  }
}

/** The named groups of a compiled pattern (Python's groupindex keys). */
const groupNamesOf = (re: RE2JS): string[] => Object.keys(re.namedGroups());

/** Django's ValidationError as Zulip sends it: the first message, and every message by field. */
export class ModelValidationError extends ApiError<'BAD_REQUEST'> {
  constructor(errors: Record<string, string[]>) {
    super(Object.values(errors)[0]![0]!, 'BAD_REQUEST', 400, { errors });
  }
}

/**
 * A reverse template's variables: `{name}` names a group, `{{` and `}}`
 * stand for a brace; null for a lone brace or an empty or unclosed `{`.
 */
export function reverseTemplateVariables(template: string): string[] | null {
  const names: string[] = [];
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if ((c === '{' || c === '}') && template[i + 1] === c) {
      i++;
      continue;
    }
    if (c === '}') return null;
    if (c !== '{') continue;
    const close = template.indexOf('}', i + 1);
    const name = close < 0 ? '' : template.slice(i + 1, close);
    if (name === '' || name.includes('{')) return null;
    names.push(name);
    i = close;
  }
  return names;
}

/**
 * Zulip's checks of a linkifier (RealmFilter.full_clean), after the view
 * strips the values: the fields first (a blank pattern or template, an
 * invalid template), then the model's own check (the pattern compiles; with
 * a valid template, every template variable is a named group and every
 * named group is used, the smallest missing name reported), then
 * uniqueness, which the caller checks with `patternTaken` (Zulip skips it
 * when the pattern itself failed). The error carries the first message as
 * msg and all of them by field, as Zulip's ValidationFailureError.
 *
 * The reverse-linkifier fields (feature levels 471 and 478) are checked as
 * Zulip's design has them: each alternative URL template is a valid template
 * whose variables are named groups of the pattern; a reverse template needs
 * an example input, and its variables are named groups of the pattern; an
 * example input must be matched by the linkifier (with Zulip's boundaries,
 * as in a message).
 */
export function checkLinkifier(fields: LinkifierFields, patternTaken: boolean): void {
  const { pattern, url_template: urlTemplate } = fields;
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const tooLong = (value: string, max: number) => `Ensure this value has at most ${max} characters (it has ${value.length}).`;
  if (pattern === '') add('pattern', 'This field cannot be blank.');
  else if (pattern.length > MAX_LINKIFIER_PATTERN_LENGTH) add('pattern', tooLong(pattern, MAX_LINKIFIER_PATTERN_LENGTH));
  const template = urlTemplate.length > MAX_URL_TEMPLATE_LENGTH ? null : parseUrlTemplate(urlTemplate);
  if (urlTemplate === '') add('url_template', 'This field cannot be blank.');
  else if (urlTemplate.length > MAX_URL_TEMPLATE_LENGTH) add('url_template', tooLong(urlTemplate, MAX_URL_TEMPLATE_LENGTH));
  else if (!template) add('url_template', 'Invalid URL template.');
  const alternatives = fields.alternative_url_templates.map((t) => (t.length > MAX_URL_TEMPLATE_LENGTH ? null : parseUrlTemplate(t)));
  if (fields.alternative_url_templates.length > MAX_ALTERNATIVE_URL_TEMPLATES) {
    add('alternative_url_templates', `Ensure this list has at most ${MAX_ALTERNATIVE_URL_TEMPLATES} items.`);
  } else if (alternatives.some((t) => t === null)) add('alternative_url_templates', 'Invalid URL template.');
  const example = fields.example_input;
  if (example !== null && example.length > MAX_EXAMPLE_INPUT_LENGTH) add('example_input', tooLong(example, MAX_EXAMPLE_INPUT_LENGTH));
  const reverse = fields.reverse_template;
  const reverseVariables = reverse === null ? [] : reverseTemplateVariables(reverse);
  if (reverse !== null && reverse.length > MAX_REVERSE_TEMPLATE_LENGTH)
    add('reverse_template', tooLong(reverse, MAX_REVERSE_TEMPLATE_LENGTH));
  else if (reverseVariables === null) add('reverse_template', 'Invalid reverse template.');
  try {
    const groups = new Set(groupNamesOf(compilePattern(pattern)));
    const notInPattern = (variables: Iterable<string>) => [...new Set(variables)].filter((v) => !groups.has(v)).sort();
    if (template) {
      const variables = new Set(template.variables);
      const missing = notInPattern(variables);
      const notInTemplate = [...groups].filter((g) => !variables.has(g)).sort();
      if (missing.length) add('__all__', `Group '${missing[0]}' in URL template is not present in linkifier pattern.`);
      else if (notInTemplate.length) add('__all__', `Group '${notInTemplate[0]}' in linkifier pattern is not present in URL template.`);
    }
    const alternativeMissing = notInPattern(alternatives.flatMap((t) => t?.variables ?? []));
    if (alternativeMissing.length) {
      add('__all__', `Group '${alternativeMissing[0]}' in alternative URL template is not present in linkifier pattern.`);
    }
    if (reverse !== null && reverseVariables) {
      const missing = notInPattern(reverseVariables);
      if (missing.length) add('__all__', `Group '${missing[0]}' in reverse template is not present in linkifier pattern.`);
      if (example === null) add('example_input', 'An example input is required for a reverse template.');
    }
    if (example !== null && example.length <= MAX_EXAMPLE_INPUT_LENGTH && !matchesExample(pattern, example)) {
      add('example_input', 'The example input does not match the linkifier pattern.');
    }
  } catch (err) {
    if (!(err instanceof ModelValidationError)) throw err;
    add('__all__', err.message);
  }
  if (patternTaken && !errors.pattern) add('__all__', 'Realm filter with this Realm and Pattern already exists.');
  if (Object.keys(errors).length) throw new ModelValidationError(errors);
}

/** Whether the linkifier would link something in `example`, as in a message (Zulip's boundaries). */
function matchesExample(pattern: string, example: string): boolean {
  try {
    return RE2JS.compile(wrap(pattern)).matcher(example).find(0);
  } catch {
    return false;
  }
}

/** A stored linkifier ready for matching; null for one that no longer compiles, wrapped in the boundaries (Zulip matches nothing with those). */
export function compileLinkifier(l: Pick<Linkifier, 'id' | 'pattern' | 'url_template'>): CompiledLinkifier | null {
  const template = parseUrlTemplate(l.url_template);
  if (!template) return null;
  try {
    const groupNames = groupNamesOf(compilePattern(l.pattern));
    const regex = RE2JS.compile(wrap(l.pattern));
    return Object.freeze({ id: l.id, pattern: l.pattern, url_template: l.url_template, regex, template, groupNames });
  } catch (err) {
    if (err instanceof ModelValidationError || err instanceof RE2JSException) return null;
    throw err;
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
 * The last matcher of each linkifier, with its text. A matcher decodes its
 * whole text once; the renders search one text for match after match, so
 * a new matcher per search would decode the text once per match (quadratic
 * in a text dense with matches). Searches are synchronous, so one matcher
 * per linkifier is never used by two at once.
 */
const lastMatcher = new WeakMap<CompiledLinkifier, { text: string; matcher: Matcher }>();

function matcherFor(l: CompiledLinkifier, text: string): Matcher {
  const last = lastMatcher.get(l);
  if (last?.text === text) return last.matcher;
  const matcher = l.regex.matcher(text);
  lastMatcher.set(l, { text, matcher });
  return matcher;
}

/**
 * The first match at or after `from`. As with a search at a position in
 * Zulip (RE2's match from a start position), `^` matches only at the very
 * start of `text`: a later match needs a boundary character of its own.
 * Offsets are UTF-16 indexes into `text`, as re2js gives them.
 */
export function searchLinkifier(l: CompiledLinkifier, text: string, from: number): LinkifierMatch | null {
  const m = matcherFor(l, text);
  if (!m.find(from)) return null;
  const values: Record<string, string | undefined> = {};
  for (const name of l.groupNames) values[name] = m.group(name) ?? undefined;
  return {
    matchStart: m.start(),
    start: m.start(MATCH_GROUP),
    end: m.end(MATCH_GROUP),
    matchEnd: m.end(),
    url: expandUrlTemplate(l.template, values),
  };
}
