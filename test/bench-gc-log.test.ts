import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { describeGc, GcLog } from '../bench/lib/gc-log';

// The benchmark reads each Parley process's collections from its --trace-gc
// lines (bench/lib/gc-log.ts) and names the mark-compacts of every measured
// window beside the row they may explain.

describe('bench GC log', () => {
  it("reads a real node process's scavenges and mark-compacts from its --trace-gc lines", async () => {
    // Young garbage for some scavenges, then a full collection.
    const script =
      "const keep = []; for (let i = 0; i < 4e5; i++) { const o = { i, s: 'x' + i }; if (i % 50 === 0) keep.push(o); }" +
      "require('v8').setFlagsFromString('--expose-gc'); require('vm').runInNewContext('gc')(); console.log(keep.length);";
    const from = Date.now();
    const child = spawn(process.execPath, ['--trace-gc', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const log = new GcLog(child.stdout);
    await new Promise((resolve) => child.on('close', resolve));
    expect(log.tracing).toBe(true);
    const w = log.window(from, Date.now());
    expect(w.major).toBeGreaterThanOrEqual(1);
    expect(w.minor).toBeGreaterThanOrEqual(1);
    expect(w.majorPausesMs.every((p) => p >= 0)).toBe(true);
    // Nothing is counted outside the window.
    expect(log.window(0, from - 1)).toEqual({ major: 0, majorPausesMs: [], minor: 0, minorPauseMs: 0 });
  });

  it('tells old-generation collections from young ones, whatever V8 calls them', () => {
    const log = new GcLog(new PassThrough());
    log.add('[1:0x1]  13700 ms: Mark-Compact 138.2 (170.8) -> 48.7 (170.5) MB, 7.02 / 0.01 ms  (+ 13.3 ms in 42 steps)', 100);
    log.add('[1:0x1]  13800 ms: Mark-Compact (reduce) 48.7 (170.5) -> 40.1 (90.0) MB, 3.50 / 0.01 ms  (…)', 200);
    log.add('[1:0x1]  13900 ms: Scavenge 72.8 (93.8) -> 61.5 (94.8) MB, 4.07 / 0.00 ms  (average mu = 0.996)', 300);
    log.add('[1:0x1]  14000 ms: Minor Mark-Compact 72.8 (93.8) -> 61.5 (94.8) MB, 1.50 / 0.00 ms  (…)', 400);
    log.add('some other line from the server: 12 ms: nothing', 500);
    const w = log.window(0, 1000);
    expect(w).toMatchObject({ major: 2, majorPausesMs: [7.02, 3.5], minor: 2 });
    expect(w.minorPauseMs).toBeCloseTo(5.57, 5);
    expect(describeGc(w)).toBe('2 mark-compacts (7.0 + 3.5 ms), 2 scavenges (6 ms in all)');
    expect(describeGc(log.window(250, 1000))).toBe('no mark-compact, 2 scavenges (6 ms in all)');
  });
});
