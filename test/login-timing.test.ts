/**
 * A login's time must not tell whether an account exists (ADR 0004): an
 * unknown address, a deactivated account, an account without a password and
 * a wrong password each cost one scrypt run. Before, an unknown address
 * answered in about 3 ms and a wrong password in about 110 ms.
 *
 * Ratios of medians over interleaved rounds, not absolute times. The time
 * is the process's CPU time (the server runs in this process, and scrypt's
 * threads count in it), not the wall clock: on a loaded machine (a CI run
 * with other test files and a database beside it) an attempt's wall time is
 * mostly waiting for a core, which once made an unknown address look twice
 * as fast as a wrong password although both ran one scrypt.
 */
import { startTestServer, type TestServer } from './support/server';

const ROUNDS = 9;

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

describe('equal-time login', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite');
    // An account with no password (as one made for single sign-on would be).
    await t.ctx.db('users').where({ id: t.cast.guest.id }).update({ password_hash: null });
  });
  afterAll(() => t.close());

  it('an unknown address, a deactivated account, one without a password and a wrong password take the same time', async () => {
    const attempts: Record<string, string> = {
      unknown: 'nobody-here@example.com',
      deactivated: 'deactivated@example.com',
      'no password': 'guest@example.com',
      'wrong password': 'member@example.com',
    };
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(attempts).map((k) => [k, []]));
    // One request first, so that nothing loaded on first use is counted against one kind.
    await t.api.post('/fetch_api_key', null, { username: 'member@example.com', password: 'warming-up' });
    for (let round = 0; round < ROUNDS; round++) {
      for (const [kind, username] of Object.entries(attempts)) {
        const start = process.cpuUsage();
        const res = await t.api.post('/fetch_api_key', null, { username, password: 'not-the-password' });
        const used = process.cpuUsage(start);
        times[kind]!.push((used.user + used.system) / 1000);
        expect([kind, res.status, res.body.code]).toEqual([kind, 401, 'AUTHENTICATION_FAILED']);
      }
    }
    const medians = Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, median(xs)]));
    const slowest = Math.max(...Object.values(medians));
    for (const [kind, m] of Object.entries(medians)) {
      // Each within half of the slowest: one scrypt run is most of every attempt.
      expect([kind, m / slowest >= 0.5, medians]).toEqual([kind, true, medians]);
    }
  });
});
