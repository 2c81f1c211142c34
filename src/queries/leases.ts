import type { Knex } from 'knex';
import { dialectOf, insertIgnoreInto } from '../db/connection';

type Q = Knex | Knex.Transaction;

/**
 * Leases (migration 030): a named row saying which process does some
 * background work, until when. The processes of a cluster share the
 * database, so the row decides for all of them; a holder that dies stops
 * renewing and the lease lapses at `expires_at` (milliseconds). Run these in
 * a transaction: the row is locked (FOR UPDATE on MariaDB, the one writer on
 * SQLite) between reading and writing it.
 */

/**
 * Takes the lease for `holder` until `expiresAt` when it is free, lapsed
 * (`expires_at` before `now`) or already theirs. Returns whether `holder`
 * holds it now.
 */
export async function takeLease(q: Q, name: string, holder: string, now: number, expiresAt: number): Promise<boolean> {
  // The row exists from the first attempt on; a second process inserting at the same time is ignored.
  await q.raw(`${insertIgnoreInto(q)} leases (name, holder, expires_at) VALUES (?, ?, ?)`, [name, '', 0]);
  const row = await lockedLease(q, name);
  if (!row) return false;
  if (row.holder !== holder && row.holder !== '' && row.expires_at >= now) return false;
  await q('leases').where({ name }).update({ holder, expires_at: expiresAt });
  return true;
}

/** Moves the expiry of `holder`'s lease on; false when it is no longer theirs (it lapsed and another took it). */
export async function renewLease(q: Q, name: string, holder: string, expiresAt: number): Promise<boolean> {
  const row = await lockedLease(q, name);
  if (!row || row.holder !== holder) return false;
  await q('leases').where({ name }).update({ expires_at: expiresAt });
  return true;
}

/** Gives the lease up, if `holder` still has it. */
export async function releaseLease(q: Q, name: string, holder: string): Promise<void> {
  await q('leases').where({ name, holder }).update({ holder: '', expires_at: 0 });
}

/** A lease's holder ('' when nobody holds it) and expiry (milliseconds). */
export interface LeaseRow {
  holder: string;
  expires_at: number;
}

/** Who holds the lease and until when (null: nobody ever took it). */
export async function getLease(q: Q, name: string): Promise<LeaseRow | null> {
  const row: LeaseRow | undefined = await q('leases').where({ name }).first('holder', 'expires_at');
  return row ? { holder: String(row.holder), expires_at: Number(row.expires_at) } : null;
}

async function lockedLease(q: Q, name: string): Promise<LeaseRow | null> {
  const qb = q('leases').where({ name }).first('holder', 'expires_at');
  if (dialectOf(q as Knex) === 'mysql') qb.forUpdate();
  const row: LeaseRow | undefined = await qb;
  return row ? { holder: String(row.holder), expires_at: Number(row.expires_at) } : null;
}
