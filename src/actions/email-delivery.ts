import crypto from 'node:crypto';
import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { messageIdOf, retryDelayMs } from '../domain/outgoing-emails';
import { mailFailure, type MailFailure } from '../mail/errors';
import type { MailSent, MailTransport } from '../mail/transport';
import {
  claimDueEmail,
  failStaleClaims,
  markEmailFailed,
  markEmailRetry,
  markEmailSent,
  nextEmailDueAt,
  type OutgoingEmailRow,
} from '../queries/outgoing-emails';
import { nowSeconds } from '../queries/ids';
import { setEmailWaker } from './email-queue';
import { startLeasedLoop, type LeasedLoop } from './leased-loop';

/**
 * The delivery worker of the mail queue (docs/architecture/email.md,
 * docs/adr/0048-the-mail-queue.md), built as the scheduler of scheduled
 * messages is (ADR 0044):
 *
 * - Durable: what is to be sent is a row of `outgoing_emails`, inserted in
 *   the transaction of the change it tells of (queueEmail); nothing waits in
 *   memory, so a restart loses nothing and a rolled-back change sends nothing.
 * - Once across a cluster: the `email_delivery` lease names the one process
 *   that sends; every claim renews it first.
 * - At most once: an attempt first claims its row (sending, with the time and
 *   this process's name) and commits that claim, then talks to the SMTP
 *   server, then records the answer. A process that stops between the claim
 *   and the record (killed, the machine lost) leaves the row in sending; its
 *   outcome is unknown (the server may have answered 250 just before), so it
 *   is not sent again: once the claim is older than any attempt can last it
 *   is marked failed, and logged. A graceful stop waits for the attempt in
 *   flight, so only a crash leaves one.
 * - Retries: a 4xx answer or a connection error puts the row back to pending,
 *   due after a backoff that doubles per attempt; a 5xx answer to the mail,
 *   or the last attempt failing, marks it failed with the server's answer.
 * - Promptly: a mail queued in this process wakes the worker at commit
 *   (setEmailWaker); one queued on another node is seen by a short poll.
 */

const LEASE = 'email_delivery';

export interface EmailDeliveryOptions {
  /** How long the lease lasts unrenewed: how soon another node takes over after a crash. */
  leaseMs: number;
  /** The holder's longest sleep; a non-holder tries the lease at twice this or a third of the lease, whichever is longer. */
  pollMs: number;
  /** First retry delay, doubled per attempt up to `retryMaxMs`. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Attempts per mail; after the last fails the row is failed. */
  maxAttempts: number;
  /** How long one attempt may take as a whole (the transport aborts it then). */
  attemptMs: number;
  onError: (err: unknown) => void;
  /** After a mail's sent state is committed. */
  onSent?: (row: OutgoingEmailRow, sent: MailSent) => void;
  /** After a failed attempt is recorded and the mail put back for `nextAttemptAt`. */
  onRetry?: (row: OutgoingEmailRow, failure: MailFailure, nextAttemptAt: number) => void;
  /** After a mail is marked failed: refused, out of attempts, or its attempt's outcome unknown. */
  onFailed?: (row: OutgoingEmailRow, reason: string) => void;
}

/** The options from the configuration (EMAIL_* settings, src/config/email.ts). */
export function emailDeliveryOptions(config: AppContext['config']): Omit<EmailDeliveryOptions, 'onError'> {
  return {
    leaseMs: 15_000,
    pollMs: 1_000,
    retryBaseMs: config.emailRetrySeconds * 1000,
    retryMaxMs: 3_600_000,
    maxAttempts: config.emailMaxAttempts,
    attemptMs: config.emailTimeoutSeconds * 3000,
  };
}

/** Why a row left in sending by a stopped process is failed rather than sent again. */
export const UNKNOWN_OUTCOME =
  'Delivery outcome unknown: the process sending this mail stopped during the attempt; it is not sent again, so that it is never sent twice';

type Ctx = Pick<AppContext, 'db' | 'config'>;

/**
 * Starts the worker; the returned function stops it, waiting for the attempt
 * in flight, and gives the lease up. The transport stays the caller's.
 */
export function startEmailDelivery(ctx: Ctx, transport: MailTransport, opts: EmailDeliveryOptions): () => Promise<void> {
  let claimant = '';
  const pass = async (loop: LeasedLoop): Promise<number> => {
    // Claims name this process, not only the lease holder: a node restarted under the same NODE_ID is another process.
    claimant ||= `${loop.holder}#${crypto.randomBytes(4).toString('hex')}`.slice(0, 200);
    // An attempt lasts at most attemptMs, and its claim is committed under a lease that lapses leaseMs
    // after its holder stops renewing: a claim older than both belongs to no running attempt.
    for (const row of await failStaleClaims(ctx.db, Date.now() - opts.attemptMs - opts.leaseMs, UNKNOWN_OUTCOME)) {
      opts.onFailed?.(row, UNKNOWN_OUTCOME);
    }
    // Reads first: an idle holder writes nothing (the lease is renewed by claims, and retaken every leaseMs / 3).
    for (;;) {
      const next = await nextEmailDueAt(ctx.db);
      if (loop.stopped() || next === null || next > Date.now())
        return next === null ? opts.pollMs : Math.min(opts.pollMs, next - Date.now());
      const row = await inTransaction(ctx.db, async (tx) => {
        await loop.keepLease(tx);
        return claimDueEmail(tx.trx, Date.now(), claimant);
      });
      if (!row) return opts.pollMs;
      await attempt(row);
    }
  };

  /** One attempt at a claimed mail, its outcome recorded on the claim. */
  const attempt = async (row: OutgoingEmailRow) => {
    let sent: MailSent;
    try {
      sent = await transport.send(
        {
          from: { name: row.from_name, address: ctx.config.noreplyEmailAddress },
          to: row.to_address,
          replyTo: row.reply_to,
          subject: row.subject,
          text: row.text_body,
          html: row.html_body,
          messageId: messageIdOf(row.message_token, ctx.config.noreplyEmailAddress),
        },
        opts.attemptMs,
      );
    } catch (err) {
      const failure = mailFailure(err);
      if (failure.permanent || row.attempts >= opts.maxAttempts) {
        const reason = failure.permanent ? failure.message : `${failure.message} (gave up after ${row.attempts} attempts)`;
        if (await inTransaction(ctx.db, (tx) => markEmailFailed(tx.trx, row, reason))) opts.onFailed?.(row, reason);
        return;
      }
      const nextAt = Date.now() + retryDelayMs(row.attempts, opts.retryBaseMs, opts.retryMaxMs);
      if (await inTransaction(ctx.db, (tx) => markEmailRetry(tx.trx, row, nextAt, failure.message))) opts.onRetry?.(row, failure, nextAt);
      return;
    }
    // The server took it: recorded whatever befell the lease meanwhile (the claim is this attempt's own).
    await inTransaction(ctx.db, (tx) => markEmailSent(tx.trx, row, nowSeconds()));
    opts.onSent?.(row, sent);
  };

  const loop = startLeasedLoop(ctx.db, { lease: LEASE, nodeId: ctx.config.nodeId, ...opts }, pass);
  // Mail queued in this process: sent at its commit, if the lease is ours (otherwise the holder's poll finds it).
  setEmailWaker(ctx, () => {
    if (loop.holding()) loop.wake(0);
  });
  return async () => {
    setEmailWaker(ctx, null);
    await loop.stop();
  };
}
