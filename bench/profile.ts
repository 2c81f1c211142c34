/**
 * Summarises a V8 .cpuprofile (from BENCH_CPU_PROF=1, i.e. node --cpu-prof):
 * the functions with the most self time, and self time per package / source
 * folder, so "where does a request's time go" has a first answer.
 *
 *   node dist/bench/profile.js bench/.data/prof/CPU.….cpuprofile [top=25]
 */
import fs from 'node:fs';
import { sourceOf } from './lib/in-process';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node dist/bench/profile.js <file.cpuprofile> [top]\n');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const where = sourceOf;

const fnSelf = new Map<string, number>();
const areaSelf = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  const f = n.callFrame;
  const key = `${f.functionName || '(anonymous)'}  ${where(f.url)}:${f.lineNumber + 1}`;
  fnSelf.set(key, (fnSelf.get(key) ?? 0) + us);
  const area = f.url ? where(f.url) : f.functionName || '(native)';
  areaSelf.set(area, (areaSelf.get(area) ?? 0) + us);
}
// Inclusive time: each function (and package) counted once per sampled stack.
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const fnIncl = new Map<string, number>();
const areaIncl = new Map<string, number>();
profile.samples.forEach((leaf, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  const fns = new Set<string>();
  const areas = new Set<string>();
  for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
    const f = byId.get(id)!.callFrame;
    if (!f.url) continue;
    fns.add(`${f.functionName || '(anonymous)'}  ${where(f.url)}:${f.lineNumber + 1}`);
    areas.add(where(f.url));
  }
  for (const k of fns) fnIncl.set(k, (fnIncl.get(k) ?? 0) + dt);
  for (const k of areas) areaIncl.set(k, (areaIncl.get(k) ?? 0) + dt);
});

const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
process.stdout.write(`total sampled: ${(total / 1e6).toFixed(2)} s\n\nself time by package / folder:\n`);
for (const [k, v] of [...areaSelf].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(v)}  ${k}\n`);
process.stdout.write('\nself time by function:\n');
for (const [k, v] of [...fnSelf].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(v)}  ${k}\n`);
process.stdout.write('\ninclusive time by package / folder (a stack counts once per package):\n');
for (const [k, v] of [...areaIncl].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(v)}  ${k}\n`);
process.stdout.write('\ninclusive time by function:\n');
for (const [k, v] of [...fnIncl].sort((a, b) => b[1] - a[1]).slice(0, top * 2)) process.stdout.write(`${pct(v)}  ${k}\n`);
