import fs from 'node:fs';
import path from 'node:path';
import { ZULIP_FEATURE_LEVEL } from '../src/domain/version';

/**
 * docs/feature-levels.md holds, for every Zulip feature level from 300 on,
 * the API changes Zulip's changelog lists at that level and whether Parley
 * has each: built, not applicable, missing, or not yet (an additive endpoint
 * no client calls because of the level). A client takes the advertised level
 * as a promise about every change at or below it, so the advertised level
 * may not reach a level where a change that clients gate on is missing.
 */
const FIRST_LEVEL = 300;
const STATUSES = ['built', 'not applicable', 'missing', 'not yet', 'no change'] as const;
type Status = (typeof STATUSES)[number];

interface Row {
  level: number;
  status: Status;
  gates: 'yes' | 'no' | '-';
  line: number;
}

function readTable(): Row[] {
  const text = fs.readFileSync(path.join(__dirname, '..', 'docs', 'feature-levels.md'), 'utf8');
  const rows: Row[] = [];
  text.split('\n').forEach((raw, i) => {
    if (!/^\| \d/.test(raw)) return;
    const cells = raw.split(' | ').map((c) => c.replace(/^\|\s*|\s*\|$/g, '').trim());
    const level = Number(cells[0]);
    const status = STATUSES.find((s) => cells[2] === s || cells[2]!.startsWith(`${s}:`) || cells[2]!.startsWith(`${s} (`));
    const gates = cells[3]!.replace(/^\*\*|\*\*$/g, '').split(/[\s:—,(]/)[0];
    if (!Number.isInteger(level) || !status || !['yes', 'no', '-'].includes(gates!)) {
      throw new Error(`docs/feature-levels.md line ${i + 1} is not a row of level | change | status | gates | notes: ${raw}`);
    }
    rows.push({ level, status, gates: gates as Row['gates'], line: i + 1 });
  });
  return rows;
}

describe('docs/feature-levels.md', () => {
  const rows = readTable();

  it('has a row for every level from 300 to the advertised one', () => {
    const levels = new Set(rows.map((r) => r.level));
    const absent: number[] = [];
    for (let level = FIRST_LEVEL; level <= ZULIP_FEATURE_LEVEL; level++) if (!levels.has(level)) absent.push(level);
    expect(absent).toEqual([]);
  });

  it('says for each missing or not-yet change whether clients gate on it', () => {
    const unjudged = rows.filter((r) => (r.status === 'missing' || r.status === 'not yet') && r.gates === '-');
    expect(unjudged.map((r) => r.line)).toEqual([]);
    // "not yet" is for what no client gates on; a gated change that is absent is missing.
    expect(rows.filter((r) => r.status === 'not yet' && r.gates === 'yes').map((r) => r.line)).toEqual([]);
  });

  it('advertises no level at or above a missing change that clients gate on', () => {
    const blocking = rows.filter((r) => r.status === 'missing' && r.gates === 'yes' && r.level <= ZULIP_FEATURE_LEVEL);
    expect(blocking.map((r) => `level ${r.level} (docs/feature-levels.md line ${r.line})`)).toEqual([]);
  });
});
