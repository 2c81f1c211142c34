/**
 * The delivery state of a queued mail (outgoing_emails.state, migration
 * 041; docs/adr/0048-the-mail-queue.md).
 */
export const EmailState = {
  /** Waiting for its next attempt (next_attempt_at). */
  PENDING: 0,
  /** An attempt claimed it (claimed_at, claimed_by) and may be talking to the SMTP server now. */
  SENDING: 1,
  SENT: 2,
  /** Refused for good, out of attempts, or its outcome unknown (last_error says which). */
  FAILED: 3,
} as const;
export type EmailStateValue = (typeof EmailState)[keyof typeof EmailState];

export const EMAIL_STATE_NAMES: Record<EmailStateValue, string> = { 0: 'pending', 1: 'sending', 2: 'sent', 3: 'failed' };

/**
 * How long to wait before attempt `attempt + 1` after attempt `attempt`
 * (1-based) failed for a reason that may pass: `baseMs` doubled per attempt,
 * at most `maxMs`. Attempts of mails queued together spread apart by up to a
 * tenth more (`jitter` in 0..1), so a server that recovers is not hit by all
 * of them at once.
 */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, jitter = Math.random()): number {
  const delay = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(delay * (1 + jitter / 10));
}

/** The Message-ID of a queued mail: its token at the domain of the From address. */
export function messageIdOf(token: string, fromAddress: string): string {
  const at = fromAddress.lastIndexOf('@');
  return `<${token}@${at >= 0 ? fromAddress.slice(at + 1) : fromAddress}>`;
}
