import { checkLinkifier, compileLinkifier, ModelValidationError, type CompiledLinkifier } from '../src/domain/linkifiers';
import { expandUrlTemplate, parseUrlTemplate } from '../src/domain/url-template';
import { renderMessage, topicLinksOf } from '../src/markdown/zulip';

let nextId = 1;
const compile = (pattern: string, url_template: string): CompiledLinkifier => {
  const l = compileLinkifier({ id: nextId++, pattern, url_template });
  if (!l) throw new Error(`does not compile: ${pattern}`);
  return l;
};
const TICKET = compile('#(?P<id>[0-9]{2,8})', 'https://trac.example.com/ticket/{id}');
const TRAC = compile('trac #(?P<id>[0-9]+)', 'https://trac.example.com/other/{id}');
const render = (content: string, linkifiers: CompiledLinkifier[] = [TICKET]) =>
  renderMessage(content, { usersByName: new Map(), usersById: new Map(), groupsByName: new Map(), channelsByName: new Map(), linkifiers })
    .html;
const a = (id: string) => `<a href="https://trac.example.com/ticket/${id}">#${id}</a>`;

describe('URL templates (RFC 6570)', () => {
  const expand = (template: string, values: Record<string, string | undefined>) => expandUrlTemplate(parseUrlTemplate(template)!, values);

  it('expands each operator as the RFC does', () => {
    const v = { var: 'value', hello: 'Hello World!', path: '/foo/bar', x: '1024', y: '768', empty: '' };
    expect(expand('{var}', v)).toBe('value');
    expect(expand('{hello}', v)).toBe('Hello%20World%21');
    expect(expand('{+hello}', v)).toBe('Hello%20World!');
    expect(expand('{+path}/here', v)).toBe('/foo/bar/here');
    expect(expand('X{#var}', v)).toBe('X#value');
    expect(expand('X{.x,y}', v)).toBe('X.1024.768');
    expect(expand('{/var,x}/here', v)).toBe('/value/1024/here');
    expect(expand('{;x,y,empty}', v)).toBe(';x=1024;y=768;empty');
    expect(expand('{?x,y,empty}', v)).toBe('?x=1024&y=768&empty=');
    expect(expand('?fixed=yes{&x}', v)).toBe('?fixed=yes&x=1024');
    expect(expand('{var:3}', v)).toBe('val');
    expect(expand('{?undef,x}', v)).toBe('?x=1024');
    expect(expand('{+p}', { p: 'a%20b c' })).toBe('a%20b%20c');
    expect(expand('{q}', { q: 'caf\u00e9 \u{1f600}' })).toBe('caf%C3%A9%20%F0%9F%98%80');
  });

  it("accepts Zulip's valid templates and refuses its invalid ones", () => {
    for (const valid of [
      'https://example.com/%%(foo)s',
      'https://example.com{/foo,bar,baz}',
      'https://example.com/{?foo*}',
      'https://chat{.domain}.com/{#foo}',
      '$not_a_url$',
      'https://example.com/foo[bar]',
    ]) {
      expect(parseUrlTemplate(valid)).not.toBeNull();
    }
    for (const invalid of [
      'https://example.com/{foo',
      'https://example.com/{{}',
      'https://example.com/{//foo}',
      'https://example.com/{bar++}',
      '{}',
      '{a=b}',
    ]) {
      expect(parseUrlTemplate(invalid)).toBeNull();
    }
  });
});

describe('linkifiers in message content', () => {
  it("links matches on Zulip's boundaries only", () => {
    expect(render('We should fix #224 and #115, but not issue#124 or #1124z today.')).toBe(
      `<p>We should fix ${a('224')} and ${a('115')}, but not issue#124 or #1124z today.</p>`,
    );
    expect(render('(#12) "#34" #56. #78:#90')).toBe(`<p>(${a('12')}) &quot;${a('34')}&quot; ${a('56')}. ${a('78')}:${a('90')}</p>`);
    // A match right after another needs a boundary of its own; the text's end is one.
    expect(render('#12#34')).toBe(`<p>${a('12')}#34</p>`);
    expect(render('line one\n#12')).toBe(`<p>line one<br>\n${a('12')}</p>`);
  });

  it('leaves code, links and emphasized text where Zulip sees a marker before the match', () => {
    expect(render('`#123` and\n```\n#456\n```')).toBe(
      '<p><code>#123</code> and</p>\n<div class="codehilite"><pre><span></span><code>#456\n</code></pre></div>',
    );
    expect(render('[#12](https://example.com/x) https://example.com/#34')).toBe(
      '<p><a href="https://example.com/x" rel="noopener noreferrer" target="_blank">#12</a> <a href="https://example.com/#34" rel="noopener noreferrer" target="_blank">https://example.com/#34</a></p>',
    );
    expect(render('*#12*')).toBe('<p><em>#12</em></p>');
  });

  it('applies linkifiers in order: the earlier wins where two overlap', () => {
    expect(render('see trac #15 now', [TRAC, TICKET])).toBe('<p>see <a href="https://trac.example.com/other/15">trac #15</a> now</p>');
    expect(render('see trac #15 now', [TICKET, TRAC])).toBe(`<p>see trac ${a('15')} now</p>`);
  });

  it('escapes the values as the template says, and refuses a scheme Zulip does not link', () => {
    const search = compile('find:(?P<q>[a-z]+(?: [a-z]+)?)', 'https://search.example/?q={q}');
    expect(render('find:hello world', [search])).toBe('<p><a href="https://search.example/?q=hello%20world">find:hello world</a></p>');
    const js = compile('js:(?P<x>[a-z]+)', 'javascript:{x}');
    expect(render('js:alert', [js])).toBe('<p>js:alert</p>');
  });

  it('renders a long message full of matches quickly', () => {
    const started = Date.now();
    const html = render('#1234 x '.repeat(1200));
    expect(html.split('<a ').length - 1).toBe(1200);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe('patterns on RE2, as Zulip compiles them', () => {
  const refusal = (pattern: string, template = 'https://x.example/') => {
    try {
      checkLinkifier(
        { pattern, url_template: template, example_input: null, reverse_template: null, alternative_url_templates: [] },
        false,
      );
      return null;
    } catch (err) {
      if (!(err instanceof ModelValidationError)) throw err;
      return err.message;
    }
  };

  it('accepts what RE2 accepts: flags, Unicode classes, counts above 16, RE2-only escapes', () => {
    for (const pattern of [
      '(?i)jira-(?P<id>[0-9]+)',
      '\\pL{2,40}-(?P<id>\\d+)',
      '[a-z]{2,40}#(?P<id>\\d+)',
      '\\x{41}(?P<id>\\d+)',
      '\\Q#\\E(?P<id>\\d+)',
      '(?<id>[[:digit:]]+)!',
    ]) {
      expect(refusal(pattern, 'https://x.example/{id}')).toBeNull();
    }
  });

  it("refuses what RE2 refuses, in RE2's words", () => {
    expect(refusal('(foo')).toBe('Bad regular expression: missing ): (foo');
    expect(refusal('foo)')).toBe('Bad regular expression: unexpected ): foo)');
    expect(refusal('[a')).toBe('Bad regular expression: missing ]: [a');
    expect(refusal('*a')).toBe('Bad regular expression: no argument for repetition operator: *');
    expect(refusal('a**')).toBe('Bad regular expression: bad repetition operator: **');
    expect(refusal('a{1001}')).toBe('Bad regular expression: invalid repetition size: {1001}');
    expect(refusal('a\\')).toBe('Bad regular expression: trailing \\');
    expect(refusal('(?P<id>a)\\1')).toBe('Bad regular expression: invalid escape sequence: \\1');
    expect(refusal('(?=a)')).toBe('Bad regular expression: invalid perl operator: (?=');
    expect(refusal('(?P<id>a)(?P<id>b)')).toBe('Bad regular expression: invalid named capture group: (?P<id>');
    expect(refusal('[z-a]')).toBe('Bad regular expression: invalid character class range: z-a');
  });

  it('matches case-insensitively, by Unicode class, and judges the boundary after a match by code point', () => {
    const jira = compile('(?i)jira-(?P<id>[0-9]+)', 'https://jira.example/{id}');
    expect(render('see JIRA-12 and jira-13', [jira])).toBe(
      '<p>see <a href="https://jira.example/12">JIRA-12</a> and <a href="https://jira.example/13">jira-13</a></p>',
    );
    const word = compile('\\pL{2,40}#(?P<id>\\d+)', 'https://w.example/{id}');
    expect(render('Straße#7 ok', [word])).toBe('<p><a href="https://w.example/7">Straße#7</a> ok</p>');
    // An astral letter (U+1D400) or digit (U+1D7CE) right after the digits is one to RE2: no boundary, no link.
    expect(render('#12\u{1d400} #13\u{1d7ce} #14.')).toBe(`<p>#12\u{1d400} #13\u{1d7ce} ${a('14')}.</p>`);
  });

  it('matches nothing with a pattern that uses one of the boundary group names, as Zulip', () => {
    expect(refusal('#(?P<linkifier_actual_match>\\d+)', 'https://x.example/{linkifier_actual_match}')).toBeNull();
    expect(
      compileLinkifier({ id: 0, pattern: '#(?P<linkifier_actual_match>\\d+)', url_template: 'https://x.example/{linkifier_actual_match}' }),
    ).toBeNull();
  });

  it('matches in time linear in the text, whatever the pattern', () => {
    const nested = compile('(?P<id>(a|a)+)b', 'https://x.example/{id}');
    const started = Date.now();
    expect(render(`${'a'.repeat(5000)}`, [nested])).toBe(`<p>${'a'.repeat(5000)}</p>`);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('topic links', () => {
  it("finds Zulip's links: linkifiers in order, then raw URLs, overlaps dropped, in text order", () => {
    expect(topicLinksOf('#1234 and https://example.com/x and zulip.com', [TICKET])).toEqual([
      { text: '#1234', url: 'https://trac.example.com/ticket/1234' },
      { text: 'https://example.com/x', url: 'https://example.com/x' },
      { text: 'zulip.com', url: 'https://zulip.com' },
    ]);
    expect(topicLinksOf('trac #15 #15', [TICKET, TRAC])).toEqual([
      { text: '#15', url: 'https://trac.example.com/ticket/15' },
      { text: '#15', url: 'https://trac.example.com/ticket/15' },
    ]);
    expect(topicLinksOf('trac #15', [TRAC, TICKET])).toEqual([{ text: 'trac #15', url: 'https://trac.example.com/other/15' }]);
    expect(topicLinksOf('issue#12', [TICKET])).toEqual([]);
  });
});
