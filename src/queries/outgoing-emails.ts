import type { Knex } from 'knex';
import type { TableInsert, TableRow } from '../../generated/tables';
import { dialectOf } from '../db/connection';
import { EmailState } from '../domain/outgoing-emails';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

/** A rendered mail, as the queue (migration 041) stores it. */
export type NewOutgoingEmail = TableInsert<'outgoing_emails'>;

export async function insertOutgoingEmail(q: Q, row: NewOutgoingEmail): Promise<number> {
  return insertOne(q, 'outgoing_emails', row);
}

/** A queued mail with its delivery state; times as numbers whatever the driver returned (MariaDB's BIGINT). */
export type OutgoingEmailRow = TableRow<'outgoing_emails'>;

const toRow = (r: OutgoingEmailRow): OutgoingEmailRow => ({
  ...r,
  id: Number(r.id),
  realm_id: r.realm_id === null ? null : Number(r.realm_id),
  state: Number(r.state),
  attempts: Number(r.attempts),
  created_at: Number(r.created_at),
  next_attempt_at: Number(r.next_attempt_at),
  claimed_at: r.claimed_at === null ? null : Number(r.claimed_at),
  sent_at: r.sent_at === null ? null : Number(r.sent_at),
});

export async function getOutgoingEmail(q: Q, id: number): Promise<OutgoingEmailRow | null> {
  const row = await q('outgoing_emails').where({ id }).first();
  return row ? toRow(row) : null;
}

/**
 * Claims the pending mail due first (at `nowMs` or before) for an attempt by
 * `claimedBy`: it becomes sending, its attempt counted. Run it in a
 * transaction that commits before the attempt starts: the claim is the
 * record that an attempt may have reached the SMTP server.
 */
export async function claimDueEmail(q: Knex.Transaction, nowMs: number, claimedBy: string): Promise<OutgoingEmailRow | null> {
  const query = q('outgoing_emails')
    .where({ state: EmailState.PENDING })
    .where('next_attempt_at', '<=', nowMs)
    .orderBy([
      { column: 'next_attempt_at', order: 'asc' },
      { column: 'id', order: 'asc' },
    ])
    .first();
  // SQLite has no row locks (its writer holds the database); knex warns on forUpdate there.
  if (dialectOf(q) === 'mysql') query.forUpdate();
  const row: OutgoingEmailRow | undefined = await query;
  if (!row) return null;
  const claimed = await q('outgoing_emails')
    .where({ id: row.id, state: EmailState.PENDING })
    .update({ state: EmailState.SENDING, claimed_at: nowMs, claimed_by: claimedBy, attempts: Number(row.attempts) + 1 });
  if (claimed !== 1) return null;
  return toRow({ ...row, state: EmailState.SENDING, claimed_at: nowMs, claimed_by: claimedBy, attempts: Number(row.attempts) + 1 });
}

/**
 * A mail's bodies once it is done with (sent or failed): gone. They may hold
 * a live secret (a password reset link, whose token the database otherwise
 * keeps only as a hash, ADR 0050); the row keeps what a log needs: kind,
 * recipient, subject, times, the server's answer.
 */
const BODIES_CLEARED = { text_body: '', html_body: '' };

/** The attempt's own claim: its outcome is recorded only on the row it claimed, as it claimed it. */
const ofClaim = (q: Q, row: Pick<OutgoingEmailRow, 'id' | 'claimed_at' | 'claimed_by'>) =>
  q('outgoing_emails').where({ id: row.id, claimed_at: row.claimed_at, claimed_by: row.claimed_by });

/**
 * The SMTP server took it. Recorded even over a failed state: a claim
 * given up as stale (below) by another process while this attempt still
 * ran was in fact delivered.
 */
export async function markEmailSent(q: Q, row: OutgoingEmailRow, sentAt: number): Promise<boolean> {
  return (await ofClaim(q, row).update({ state: EmailState.SENT, sent_at: sentAt, last_error: null, ...BODIES_CLEARED })) === 1;
}

/** Not taken, for a reason that may pass: pending again, from `nextAttemptAt`. */
export async function markEmailRetry(q: Q, row: OutgoingEmailRow, nextAttemptAt: number, error: string): Promise<boolean> {
  return (
    (await ofClaim(q, row)
      .where({ state: EmailState.SENDING })
      .update({ state: EmailState.PENDING, next_attempt_at: nextAttemptAt, last_error: bounded(error) })) === 1
  );
}

/** Refused for good, or out of attempts. */
export async function markEmailFailed(q: Q, row: OutgoingEmailRow, error: string): Promise<boolean> {
  return (
    (await ofClaim(q, row)
      .where({ state: EmailState.SENDING })
      .update({ state: EmailState.FAILED, last_error: bounded(error), ...BODIES_CLEARED })) === 1
  );
}

/**
 * Claims older than `beforeMs`, whose attempt cannot still be running (its
 * process stopped mid-attempt): failed, with `error`. Returns those it failed.
 * One read when there are none (every run of the worker asks).
 */
export async function failStaleClaims(q: Q, beforeMs: number, error: string): Promise<OutgoingEmailRow[]> {
  const rows: OutgoingEmailRow[] = (
    await q('outgoing_emails').where({ state: EmailState.SENDING }).where('claimed_at', '<', beforeMs).select()
  ).map(toRow);
  const failed: OutgoingEmailRow[] = [];
  for (const row of rows) {
    // Still as read: an attempt that ended meanwhile recorded its outcome, which stands.
    const n = await q('outgoing_emails')
      .where({ id: row.id, state: EmailState.SENDING, claimed_at: row.claimed_at, claimed_by: row.claimed_by })
      .update({ state: EmailState.FAILED, last_error: bounded(error), ...BODIES_CLEARED });
    if (n === 1) failed.push({ ...row, state: EmailState.FAILED, last_error: bounded(error) });
  }
  return failed;
}

/** When the next pending mail is due (milliseconds), or null when none is pending. */
export async function nextEmailDueAt(q: Q): Promise<number | null> {
  const row = (await q('outgoing_emails').where({ state: EmailState.PENDING }).min('next_attempt_at as at').first()) as
    { at: number | string | null } | undefined;
  return row?.at === null || row?.at === undefined ? null : Number(row.at);
}

/** How many mails are in each state (the metrics). */
export async function countEmailsByState(q: Q): Promise<Map<number, number>> {
  const rows = (await q('outgoing_emails').select('state').count('* as n').groupBy('state')) as Array<{
    state: number;
    n: number | string;
  }>;
  return new Map(rows.map((r) => [Number(r.state), Number(r.n)]));
}

/** last_error's column holds 1000 characters: an SMTP answer is a line, a connection error a sentence. */
const bounded = (s: string) => (s.length > 1000 ? `${s.slice(0, 999)}…` : s);

/** Deletes the pending mail of one template to one address (its case ignored). */
export async function deletePendingEmails(q: Q, template: string, to: string): Promise<number> {
  return q('outgoing_emails').where({ template, state: EmailState.PENDING }).whereRaw('LOWER(to_address) = ?', [to.toLowerCase()]).delete();
}
