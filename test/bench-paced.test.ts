import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runPaced } from '../bench/lib/paced';

// The benchmark's load at a fixed offered rate (bench/lib/paced.ts), against
// a real local HTTP server: requests arrive spread over the run, not in
// bursts, and a stall of the server shows in the latencies of the requests
// that were due while it lasted.

describe('paced load', () => {
  let server: http.Server;
  let port: number;
  const arrivals: number[] = [];
  let stallAt: number | null = null;
  let seen: Array<string | undefined> = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      arrivals.push(performance.now());
      seen.push(req.headers.authorization);
      req.resume();
      req.on('end', () => {
        if (stallAt !== null && arrivals.length === stallAt) {
          // Block the event loop, as a long pause of a real server would.
          const until = performance.now() + 150;
          while (performance.now() < until);
        }
        const body = '{"result":"success"}';
        res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    arrivals.length = 0;
    seen = [];
    stallAt = null;
  });

  const load = (over: Partial<Parameters<typeof runPaced>[0]> = {}) =>
    runPaced({ port, method: 'POST', path: '/', headers: {}, body: 'a=1', connections: 4, rate: 200, seconds: 1, ...over });

  it('sends every request at its due time, spread over the run', async () => {
    const r = await load({ auth: ['Basic one', 'Basic two'] });
    expect(r.completed).toBe(200);
    expect(r.errors).toBe(0);
    expect(r.latencies).toHaveLength(200);
    // 200 requests over one second: a tenth of the run holds about a tenth of
    // them. A sender that spends a per-second budget at once would put them
    // all in the first tenth.
    const first = arrivals[0]!;
    const inFirstTenth = arrivals.filter((t) => t - first < 100).length;
    expect(inFirstTenth).toBeLessThan(50);
    expect(arrivals.at(-1)! - first).toBeGreaterThan(900);
    // Each connection carries its own credential, and they take turns.
    expect(new Set(seen)).toEqual(new Set(['Basic one', 'Basic two']));
  });

  it('counts a late answer from when its request was due, so a stall shows', async () => {
    stallAt = 60;
    const r = await load();
    expect(r.completed).toBe(200);
    // Requests due during the 150 ms stall waited for it: the slowest waited
    // most of it, though the server answered each quickly once it read it.
    expect(r.latencies.at(-1)!).toBeGreaterThan(100);
    // About 30 of the 200 were due during the stall: more than the 1 % tail.
    expect(r.latencies[Math.ceil(0.99 * r.latencies.length) - 1]!).toBeGreaterThan(50);
  });

  it('reports answers other than 2xx as errors', async () => {
    const r = await load({ path: '/missing', rate: 50 });
    expect(r.completed).toBe(50);
    expect(r.errors).toBe(50);
    expect(r.statusCodes).toEqual({ 404: 50 });
    expect(r.latencies).toHaveLength(0);
  });
});
