/**
 * Benchmark scales. Each fixes the organization's size; the generator
 * derives the rest (channel sizes, traffic, topics, read states) from a
 * seeded random source, so a scale always yields the same dataset.
 *
 * user_messages volume is Σ over messages of the channel's subscribers at
 * send time, so it is bounded by keeping big channels quiet: everyone is in
 * `general` but it carries a small share of the traffic; the busy channels
 * are small teams. At 1m this gives about 15 million rows (printed by
 * `BENCH_PLAN_ONLY=1 node dist/bench/generate.js`).
 */
export type ScaleName = 'small' | '100k' | '1m' | 'big';

export interface Scale {
  name: ScaleName;
  users: number;
  /** All channels, including general, the 100-subscriber channel and the big ones. */
  channels: number;
  messages: number;
  /** Share of all messages that goes to `general` (everyone subscribed). */
  generalShare: number;
  /** The POST /messages target: exactly 100 subscribers. */
  channel100Share: number;
  /** A few more channels with 100+ subscribers: [subscribers, share of messages]. */
  big: Array<[number, number]>;
  /** Team channel size range (log-uniform). */
  teamSize: [number, number];
  /** Zipf exponent of the team channels' traffic: a few busy, many rarely used. */
  teamTrafficZipf: number;
  /** Share of direct messages. */
  dmShare: number;
  /** Distinct DM conversations (1:1 and a few groups of three). */
  dmConversations: number;
  /** Share of all messages each heavy-unread user has never read (0.1 of 1M = 100k unread). */
  lurkerUnreadShares: number[];
  /** Messages per bulk-insert batch (one transaction each). */
  batch: number;
  seed: number;
  /**
   * Share of the users (not the designated ones) who stopped coming: from
   * `idleSince` (a fraction of history) they neither send nor read, and at
   * the end they are soft-deactivated as the daily job would have left them
   * (ADR 0058): rows after that point only where flags need one.
   */
  idleShare?: number;
  idleSince?: number;
}

export const SCALES: Record<ScaleName, Scale> = {
  small: {
    name: 'small',
    users: 110,
    channels: 20,
    messages: 10_000,
    generalShare: 0.02,
    channel100Share: 0.03,
    big: [],
    teamSize: [3, 30],
    teamTrafficZipf: 1.0,
    dmShare: 0.05,
    dmConversations: 80,
    lurkerUnreadShares: [0.1, 0.05],
    batch: 1000,
    seed: 10_000,
  },
  '100k': {
    name: '100k',
    users: 320,
    channels: 60,
    messages: 100_000,
    generalShare: 0.005,
    channel100Share: 0.015,
    big: [
      [220, 0.006],
      [140, 0.01],
    ],
    teamSize: [3, 50],
    teamTrafficZipf: 1.05,
    dmShare: 0.05,
    dmConversations: 400,
    lurkerUnreadShares: [0.1, 0.05],
    batch: 2000,
    seed: 100_000,
  },
  '1m': {
    name: '1m',
    users: 1000,
    channels: 200,
    messages: 1_000_000,
    generalShare: 0.001,
    channel100Share: 0.01,
    big: [
      [400, 0.004],
      [250, 0.006],
      [150, 0.01],
    ],
    teamSize: [4, 90],
    teamTrafficZipf: 1.1,
    dmShare: 0.04,
    dmConversations: 1500,
    lurkerUnreadShares: [0.1, 0.1, 0.05],
    batch: 2000,
    seed: 1_000_000,
  },
  /**
   * big: a large open organization (ADR 0058's target): 10,000 users, 70% of
   * whom stopped coming 9½ months ago, everyone in `general` (the
   * announcement channel), 1M messages. Its sends to general are measured by
   * bench/announce.ts.
   */
  big: {
    name: 'big',
    users: 10_000,
    channels: 400,
    messages: 1_000_000,
    generalShare: 0.001,
    channel100Share: 0.01,
    big: [
      [1000, 0.004],
      [400, 0.006],
    ],
    teamSize: [4, 120],
    teamTrafficZipf: 1.1,
    dmShare: 0.04,
    dmConversations: 6000,
    lurkerUnreadShares: [0.1, 0.05],
    batch: 2000,
    seed: 10_000_000,
    idleShare: 0.7,
    idleSince: 0.6,
  },
};

/** BENCH_SCALE: small (= 10k), 100k, 1m, big. */
export function parseScale(raw: string | undefined): Scale {
  const key = (raw ?? 'small').trim().toLowerCase();
  const name = key === '10k' || key === '' ? 'small' : key;
  const scale = SCALES[name as ScaleName];
  if (!scale) throw new Error(`BENCH_SCALE must be small|10k|100k|1m|big, got ${raw}`);
  return scale;
}
