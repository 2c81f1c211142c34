import crypto from 'node:crypto';
import os from 'node:os';
import type { Knex } from 'knex';
import { inTransaction, type Tx } from '../db/transaction';
import { releaseLease, renewLease, takeLease } from '../queries/leases';

/**
 * The loop of a background worker that one process of a cluster runs at a
 * time (ADR 0044): scheduled messages and the mail queue. Each pass first
 * makes sure this process holds the named lease (taken again a third of
 * the way through its life, so a holder keeps it while idle), then runs the
 * worker's `pass`, which answers how long to sleep before the next one.
 * Passes never overlap: a wake during a pass runs another right after it.
 * The worker renews the lease inside each transaction that does its work
 * (`keepLease`), so a holder that lost the lease (a long pause, a
 * partition) cannot commit beside the new holder.
 */
export interface LeasedLoop {
  /** Who this process is in the lease. */
  readonly holder: string;
  /** Whether this process held the lease at its last look. */
  holding(): boolean;
  /** Whether the loop was stopped (a pass in progress ends early). */
  stopped(): boolean;
  /** Runs a pass in `delayMs` (0: now), unless one is due sooner; during a pass, another right after it. */
  wake(delayMs: number): void;
  /** Renews the lease in the worker's transaction; throws LeaseLost (which rolls it back) when it is no longer this process's. */
  keepLease(tx: Tx): Promise<void>;
  /** Stops the loop, waits for the pass in progress, and gives the lease up. */
  stop(): Promise<void>;
}

export interface LeasedLoopOptions {
  /** The lease's name (a row of `leases`). */
  lease: string;
  nodeId: string | null;
  /** How long the lease lasts unrenewed: how soon another process takes over after a crash. */
  leaseMs: number;
  /** The holder's longest sleep; a non-holder tries the lease at twice this or a third of the lease, whichever is longer. */
  pollMs: number;
  onError: (err: unknown) => void;
}

/** The work of a transaction that renewed a lease it no longer held: rolled back, and the loop stands by. */
export class LeaseLost extends Error {}

/**
 * Who this process is in a lease. A node with a NODE_ID (every node of a
 * cluster has its own: queue ids are routed by it) is that name, so the
 * node restarted after a crash takes its lease back at once instead of
 * waiting for it to lapse; without one, host, process and a random part.
 */
export function leaseHolder(nodeId: string | null): string {
  return nodeId !== null ? `node:${nodeId}` : `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`.slice(0, 200);
}

/** Starts the loop with a first pass at once. */
export function startLeasedLoop(db: Knex, opts: LeasedLoopOptions, pass: (loop: LeasedLoop) => Promise<number>): LeasedLoop {
  const holder = leaseHolder(opts.nodeId);
  let stopped = false;
  let holding = false;
  let renewedAt = 0;
  let timer: NodeJS.Timeout | null = null;
  let wakeAt = Infinity;
  let running: Promise<void> | null = null;
  let again = false;

  const wake = (delayMs: number) => {
    if (stopped) return;
    const at = Date.now() + Math.max(0, delayMs);
    if (timer && at >= wakeAt) return;
    if (timer) clearTimeout(timer);
    wakeAt = at;
    timer = setTimeout(tick, Math.max(0, delayMs));
    timer.unref();
  };
  const runOnce = async (): Promise<number> => {
    const now = Date.now();
    if (!holding || now - renewedAt > opts.leaseMs / 3) {
      holding = await inTransaction(db, (tx) => takeLease(tx.trx, opts.lease, holder, now, now + opts.leaseMs));
      renewedAt = now;
    }
    if (!holding) return Math.max(opts.pollMs * 2, opts.leaseMs / 3);
    return pass(loop);
  };
  const tick = () => {
    timer = null;
    wakeAt = Infinity;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = runOnce()
      .catch((err: unknown) => {
        if (err instanceof LeaseLost) holding = false;
        else opts.onError(err);
        return opts.pollMs;
      })
      .then((delay) => {
        running = null;
        if (again) {
          again = false;
          delay = 0;
        }
        wake(delay);
      });
  };

  const loop: LeasedLoop = {
    holder,
    holding: () => holding,
    stopped: () => stopped,
    wake,
    keepLease: async (tx) => {
      if (!(await renewLease(tx.trx, opts.lease, holder, Date.now() + opts.leaseMs))) throw new LeaseLost();
      renewedAt = Date.now();
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      if (holding) await inTransaction(db, (tx) => releaseLease(tx.trx, opts.lease, holder)).catch(() => undefined);
    },
  };
  wake(0);
  return loop;
}
