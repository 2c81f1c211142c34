import { describeGoal, judge, nearTheLine } from '../bench/lib/goals';

// The benchmark's verdicts (bench/lib/goals.ts): what "met" means for each
// kind of target, and which results are close enough to be measured again.

describe('bench targets', () => {
  it('judges a rate and a p99 target, saying by how much each was missed', () => {
    expect(judge({ rps: 1000, p99: 40 }, { rps: 1200, p99: 35 }, null, null)).toBe('met');
    expect(judge({ rps: 1000, p99: 40 }, { rps: 860, p99: 39 }, null, null)).toBe('missed: req/s 0.86× of 1,000');
    expect(judge({ rps: 500, p99: 30 }, { rps: 702, p99: 56 }, null, null)).toBe('missed: p99 56 ms > 30');
  });

  it('judges a load offered at a fixed rate by whether it was sustained and by its p99', () => {
    const g = { atRate: 500, p99: 30 };
    expect(describeGoal(g)).toBe('500 req/s sustained, p99 ≤ 30 ms');
    expect(judge(g, { rps: 499.9, p99: 28 }, null, null)).toBe('met');
    expect(judge(g, { rps: 430, p99: 28 }, null, null)).toBe('missed: sustained 430 of 500 req/s offered');
    expect(judge(g, { rps: 500, p99: 37 }, null, null)).toBe('missed: p99 37 ms > 30');
  });

  it('calls a result near its line within 25 % of any bound, on either side', () => {
    expect(nearTheLine({ rps: 1000 }, { rps: 938, p99: 20 }, null)).toBe(true);
    expect(nearTheLine({ rps: 1000 }, { rps: 791, p99: 20 }, null)).toBe(true);
    expect(nearTheLine({ rps: 1000 }, { rps: 1300, p99: 20 }, null)).toBe(true);
    expect(nearTheLine({ rps: 1000 }, { rps: 1354, p99: 20 }, null)).toBe(false);
    expect(nearTheLine({ rps: 1000 }, { rps: 700, p99: 20 }, null)).toBe(false);
    // p99 bounds count too: a rate far above its line does not hide a p99 at its own.
    expect(nearTheLine({ rps: 1000, p99: 40 }, { rps: 1400, p99: 39 }, null)).toBe(true);
    expect(nearTheLine({ p99: 100, flat: 1.3 }, { rps: 300, p99: 60 }, null)).toBe(false);
    // A target relative to Express is near when the rate is near that share of Express's.
    expect(nearTheLine({ ofExpress: 0.5 }, { rps: 4400, p99: 5 }, 9000)).toBe(true);
    expect(nearTheLine({ ofExpress: 0.5 }, { rps: 6200, p99: 5 }, 9000)).toBe(false);
    expect(nearTheLine({ ofExpress: 0.5 }, { rps: 4400, p99: 5 }, null)).toBe(false);
  });
});
