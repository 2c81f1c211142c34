/**
 * RFC 6570 URL templates, as linkifiers and code playgrounds use them:
 * parsed once, checked, and expanded with string values. Zulip validates
 * and expands them with Python's uri_template package; this follows the
 * RFC at every level (level 4's prefix `:n` and explode `*` included, as
 * Zulip accepts `{#fragment:5}` and `{?foo*}`), with the package's
 * leniency about literal text: anything outside braces is kept as written
 * ("$not_a_url$" and "https://example.com/%%" are valid templates), only a
 * brace that does not open or close a well-formed expression is refused.
 */

interface VarSpec {
  name: string;
  /** `:n`: expand only the first n characters. */
  prefix?: number;
}

interface Expression {
  op: string;
  vars: VarSpec[];
}

type Part = string | Expression;

export interface UrlTemplate {
  readonly parts: readonly Part[];
  /** Every variable name, in order of appearance, each once. */
  readonly variables: readonly string[];
}

/** The operators of levels 2 and 3; `=,!@|` are reserved by the RFC and refused. */
const OPERATORS = new Set(['+', '#', '.', '/', ';', '?', '&']);
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*$/;
const PREFIX = /^[1-9][0-9]{0,3}$/;

/** The template, or null when it is not a valid RFC 6570 template. */
export function parseUrlTemplate(text: string): UrlTemplate | null {
  const parts: Part[] = [];
  const variables: string[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '}') return null;
    if (c !== '{') {
      literal += c;
      i++;
      continue;
    }
    const end = text.indexOf('}', i + 1);
    if (end < 0) return null;
    const body = text.slice(i + 1, end);
    if (body.includes('{')) return null;
    const expr = parseExpression(body);
    if (!expr) return null;
    if (literal) parts.push(literal);
    literal = '';
    parts.push(expr);
    for (const v of expr.vars) if (!variables.includes(v.name)) variables.push(v.name);
    i = end + 1;
  }
  if (literal) parts.push(literal);
  return { parts, variables };
}

function parseExpression(body: string): Expression | null {
  let op = '';
  if (body !== '' && OPERATORS.has(body[0]!)) {
    op = body[0]!;
    body = body.slice(1);
  }
  if (body === '') return null;
  const vars: VarSpec[] = [];
  for (const spec of body.split(',')) {
    let name = spec;
    let prefix: number | undefined;
    if (spec.endsWith('*')) name = spec.slice(0, -1);
    else {
      const colon = spec.indexOf(':');
      if (colon >= 0) {
        const digits = spec.slice(colon + 1);
        if (!PREFIX.test(digits)) return null;
        name = spec.slice(0, colon);
        prefix = Number(digits);
      }
    }
    if (!VARNAME.test(name)) return null;
    vars.push(prefix === undefined ? { name } : { name, prefix });
  }
  return { op, vars };
}

interface OpRule {
  first: string;
  sep: string;
  named: boolean;
  ifEmpty: string;
  /** Reserved characters and percent-encoded triplets pass through (`+` and `#`). */
  reserved: boolean;
}

const RULES: Record<string, OpRule> = {
  '': { first: '', sep: ',', named: false, ifEmpty: '', reserved: false },
  '+': { first: '', sep: ',', named: false, ifEmpty: '', reserved: true },
  '#': { first: '#', sep: ',', named: false, ifEmpty: '', reserved: true },
  '.': { first: '.', sep: '.', named: false, ifEmpty: '', reserved: false },
  '/': { first: '/', sep: '/', named: false, ifEmpty: '', reserved: false },
  ';': { first: ';', sep: ';', named: true, ifEmpty: '', reserved: false },
  '?': { first: '?', sep: '&', named: true, ifEmpty: '=', reserved: false },
  '&': { first: '&', sep: '&', named: true, ifEmpty: '=', reserved: false },
};

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;
const PCT_TRIPLET = /^%[0-9A-Fa-f]{2}/;

function encodeValue(value: string, reserved: boolean): string {
  let out = '';
  for (let i = 0; i < value.length;) {
    const c = value[i]!;
    if (reserved && c === '%' && PCT_TRIPLET.test(value.slice(i, i + 3))) {
      out += value.slice(i, i + 3);
      i += 3;
      continue;
    }
    if (UNRESERVED.test(c) || (reserved && RESERVED.test(c))) {
      out += c;
      i++;
      continue;
    }
    // One code point (a surrogate pair together), as UTF-8; a lone surrogate becomes U+FFFD.
    const cp = value.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    const safe = cp >= 0xd800 && cp <= 0xdfff ? '\uFFFD' : ch;
    for (const b of Buffer.from(safe, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
    i += ch.length;
  }
  return out;
}

/** The first n code points of a value (a prefix modifier counts characters, not bytes). */
function prefixOf(value: string, n: number): string {
  let out = '';
  let count = 0;
  for (const ch of value) {
    if (count++ === n) break;
    out += ch;
  }
  return out;
}

/**
 * Expands the template. A variable without a value (a named group that did
 * not take part in the match) is undefined in the RFC's sense: it and its
 * separator are left out.
 */
export function expandUrlTemplate(template: UrlTemplate, values: Readonly<Record<string, string | undefined>>): string {
  let out = '';
  for (const part of template.parts) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const rule = RULES[part.op]!;
    const pieces: string[] = [];
    for (const v of part.vars) {
      const raw = values[v.name];
      if (raw === undefined) continue;
      const value = encodeValue(v.prefix === undefined ? raw : prefixOf(raw, v.prefix), rule.reserved);
      if (!rule.named) pieces.push(value);
      else pieces.push(value === '' ? `${v.name}${rule.ifEmpty}` : `${v.name}=${value}`);
    }
    if (pieces.length) out += rule.first + pieces.join(rule.sep);
  }
  return out;
}
