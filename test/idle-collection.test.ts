import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from './support/server-process';

/**
 * The server process gives back its young generation when idle
 * (src/idle-collection.ts): after start, and again after a burst of
 * requests. Read from its debug log, which reports the young generation's
 * size before and after each collection.
 */
describe('idle collection in the server process', () => {
  jest.setTimeout(120_000);
  let dataDir: string;
  let server: ServerProcess | null = null;

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-idle-gc-'));
  });
  afterEach(async () => {
    await server?.kill();
    server = null;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  interface Collection {
    young_before_mib: number;
    young_after_mib: number;
    heap_used_mib: number;
  }
  const collections = (p: ServerProcess): Collection[] =>
    p
      .output()
      .split('\n')
      .filter((line) => line.includes('idle: heap collected'))
      .map((line) => JSON.parse(line) as Collection);

  /** Waits (bounded) until a collection after the `after`-th has shrunk the young generation. */
  async function shrunkAfter(p: ServerProcess, after: number): Promise<Collection[]> {
    const deadline = Date.now() + 45_000;
    for (;;) {
      const seen = collections(p);
      if (seen.slice(after).some((c) => c.young_after_mib <= 2)) return seen;
      if (Date.now() > deadline) throw new Error(`no shrinking collection after the ${after}th\n--- output ---\n${p.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('collects once idle after start and after a burst, and the young generation ends at its smallest', async () => {
    server = await startServerProcess({ DATA_DIR: dataDir, IDLE_COLLECT_SECONDS: '1', LOG_LEVEL: 'debug' }, 60_000);
    const atStart = await shrunkAfter(server, 0);
    // Start-up grows the young generation well past its smallest size.
    expect(atStart[0]!.young_before_mib).toBeGreaterThan(2);

    // A burst of requests: allocation grows the young generation again, then a quiet second passes.
    const settled = collections(server).length;
    const auth = 'Basic ' + Buffer.from(`${server.owner.email}:${server.owner.apiKey}`).toString('base64');
    for (let i = 0; i < 300; i++) {
      const res = await fetch(`${server.url}/api/v1/users/me`, { headers: { authorization: auth } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const afterBurst = await shrunkAfter(server, settled);
    expect(afterBurst.length).toBeGreaterThan(settled);
    // Once at its smallest and still idle, no further collection runs (longer than a retry's 5 s).
    await new Promise((r) => setTimeout(r, 7000));
    expect(collections(server).length).toBe(afterBurst.length);
  });
});
