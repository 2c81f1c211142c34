import fs from 'node:fs';
import path from 'node:path';

/**
 * Every relative link of the documentation resolves: README.md, docs/ (the
 * architecture map, its pages, the ADRs) and bench/'s README and results. A
 * link names a file or directory of the repository; its #fragment, when it
 * points into a markdown file, names one of that file's headings as GitHub
 * anchors them. Links to other sites are not followed. Documents move (the
 * map splits into pages, old benchmark results leave the tree), and a link
 * left behind is found here rather than by a reader.
 */
const ROOT = path.join(__dirname, '..');

function markdownUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return markdownUnder(p);
    return e.name.endsWith('.md') ? [p] : [];
  });
}

const DOCUMENTS = [
  path.join(ROOT, 'README.md'),
  ...markdownUnder(path.join(ROOT, 'docs')),
  path.join(ROOT, 'bench', 'README.md'),
  ...markdownUnder(path.join(ROOT, 'bench', 'results')),
];

/** The text outside fenced code blocks, line by line (a link or heading in code is not one). */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, each space a `-`. */
function anchorOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (!anchors) {
    anchors = new Set();
    const seen = new Map<string, number>();
    for (const line of proseLines(fs.readFileSync(file, 'utf8'))) {
      const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
      if (!m) continue;
      const base = anchorOf(m[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    anchorCache.set(file, anchors);
  }
  return anchors;
}

/** Inline links and images, `[text](target "title")`, outside code. */
function linksOf(file: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  proseLines(fs.readFileSync(file, 'utf8')).forEach((raw, i) => {
    const line = raw.replace(/`[^`]*`/g, '``');
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, line: i + 1 });
  });
  return links;
}

function brokenLinks(): { broken: string[]; checked: number } {
  const broken: string[] = [];
  let checked = 0;
  for (const file of DOCUMENTS) {
    const where = path.relative(ROOT, file);
    for (const { target, line } of linksOf(file)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      checked++;
      const hash = target.indexOf('#');
      const filePart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const fragment = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
      const resolved = filePart === '' ? file : path.resolve(path.dirname(file), filePart);
      if (!resolved.startsWith(ROOT + path.sep) && resolved !== ROOT) {
        broken.push(`${where}:${line}: ${target} leaves the repository`);
        continue;
      }
      if (!fs.existsSync(resolved)) {
        broken.push(`${where}:${line}: ${target} (no ${path.relative(ROOT, resolved)})`);
        continue;
      }
      if (fragment !== null && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment)) {
        broken.push(`${where}:${line}: ${target} (no heading #${fragment} in ${path.relative(ROOT, resolved)})`);
      }
    }
  }
  return { broken, checked };
}

describe('documentation links', () => {
  it('finds the documents and their links', () => {
    expect(DOCUMENTS.map((f) => path.relative(ROOT, f))).toEqual(
      expect.arrayContaining(['README.md', 'docs/ARCHITECTURE.md', 'docs/adr/README.md', 'bench/results/README.md']),
    );
    expect(brokenLinks().checked).toBeGreaterThan(200);
  });

  it('every relative link names a file of the repository, and a heading where it names one', () => {
    expect(brokenLinks().broken).toEqual([]);
  });

  it("reads headings' anchors as GitHub makes them", () => {
    expect(anchorOf('Several Parley nodes (`make cluster`)')).toBe('several-parley-nodes-make-cluster');
    expect(anchorOf('Health, metrics, logs and stopping')).toBe('health-metrics-logs-and-stopping');
    expect(anchorOf('Layers (`src/`)')).toBe('layers-src');
  });
});

describe('docs/adr/README.md', () => {
  const dir = path.join(ROOT, 'docs', 'adr');
  const index = fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
  const records = fs.readdirSync(dir).filter((f) => /^\d{4}-.+\.md$/.test(f));

  it('lists every record with the status line under its title', () => {
    expect(records.length).toBeGreaterThan(30);
    const wrong = records.flatMap((f) => {
      const status = /^# .+\n\nStatus: (.+)\.\n/.exec(fs.readFileSync(path.join(dir, f), 'utf8'))?.[1];
      if (!status) return [`${f}: no "Status:" line under its title`];
      const row = index.split('\n').find((l) => l.startsWith(`| [${f.slice(0, 4)}](${f}) |`));
      if (!row) return [`${f}: no row in the index`];
      return row.endsWith(`| ${status} |`) ? [] : [`${f}: the index says otherwise than "Status: ${status}."`];
    });
    expect(wrong).toEqual([]);
  });
});
