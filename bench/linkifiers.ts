/**
 * One-shot, in-process: what linkifiers cost a render. Renders messages
 * through Parley's Markdown renderer with an organization's linkifiers and
 * prints the median time per render, and the cost of compiling them. ADR
 * 0042 records the numbers of this script against the engine before it.
 *
 *   node dist/bench/linkifiers.js      (LINKIFIER_RUNS, default 200)
 */
import { compileLinkifier, type CompiledLinkifier, type Linkifier } from '../src/domain/linkifiers';
import { renderMessage } from '../src/markdown/zulip';

const RUNS = Number(process.env.LINKIFIER_RUNS ?? 200);

/** Ten linkifiers of the kinds organizations write (issue trackers, commits, tickets). */
const LINKIFIERS: Linkifier[] = (
  [
    { id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' },
    { id: 2, pattern: '#M(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip-mobile/issues/{id}' },
    {
      id: 3,
      pattern: '(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)',
      url_template: 'https://github.com/{org}/{repo}/issues/{id}',
    },
    { id: 4, pattern: '[0-9a-f]{7}(?P<rest>[0-9a-f]{0,33})', url_template: 'https://github.com/zulip/zulip/commit/{rest}' },
    { id: 5, pattern: 'RT #(?P<id>[0-9]{1,8})', url_template: 'https://rt.example.com/Ticket/Display.html?id={id}' },
    { id: 6, pattern: 'JIRA-(?P<id>[0-9]+)', url_template: 'https://jira.example.com/browse/JIRA-{id}' },
    { id: 7, pattern: 'CVE-(?P<year>[0-9]{4})-(?P<id>[0-9]+)', url_template: 'https://cve.example.org/{year}-{id}' },
    { id: 8, pattern: 'PR (?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/pull/{id}' },
    { id: 9, pattern: 'doc:(?P<path>[a-z/]+)', url_template: 'https://docs.example.com/{+path}' },
    { id: 10, pattern: 'T(?P<id>[0-9]{4,6})', url_template: 'https://phab.example.com/T{id}' },
  ] satisfies Array<Pick<Linkifier, 'id' | 'pattern' | 'url_template'>>
).map((l) => ({ ...l, example_input: null, reverse_template: null, alternative_url_templates: [] }));

const MESSAGES: Record<string, string> = {
  'short, one match': 'Fixed in #1234, thanks!',
  'paragraph, 5 matches': `${'We discussed this in the meeting and agreed that the approach is fine. '.repeat(4)}See #12, JIRA-34, CVE-2024-1234, PR 77 and zulip/zulip#99.`,
  'long, no match': 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(170),
  '10,000 chars, 1,200 matches': '#1234 x '.repeat(1250),
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time(fn: () => void, runs: number): number {
  for (let i = 0; i < Math.min(20, runs); i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(samples);
}

const compileAll = () => LINKIFIERS.map(compileLinkifier).filter((l): l is CompiledLinkifier => l !== null);
const linkifiers = compileAll();
const ctx = { usersByName: new Map(), usersById: new Map(), groupsByName: new Map(), channelsByName: new Map(), linkifiers };
const bare = { ...ctx, linkifiers: [] };

console.log(`compiling ${LINKIFIERS.length} linkifiers: ${time(compileAll, RUNS).toFixed(3)} ms (median of ${RUNS})`);
console.log('| message | length | render without linkifiers (ms) | with 10 linkifiers (ms) |');
console.log('|---|---|---|---|');
for (const [name, content] of Object.entries(MESSAGES)) {
  const runs = content.length > 5000 ? Math.max(5, Math.floor(RUNS / 10)) : RUNS;
  const without = time(() => renderMessage(content, bare), runs);
  const withL = time(() => renderMessage(content, ctx), runs);
  console.log(`| ${name} | ${content.length} | ${without.toFixed(3)} | ${withL.toFixed(3)} |`);
}
