import crypto from 'node:crypto';
import type { AppContext } from '../context';
import type { Tx } from '../db/transaction';
import { renderEmail, type EmailTemplate } from '../emails/template';
import { deletePendingEmails, insertOutgoingEmail } from '../queries/outgoing-emails';
import { nowSeconds } from '../queries/ids';

export interface EmailToQueue<D> {
  template: EmailTemplate<D>;
  data: D;
  /** The recipient's address. */
  to: string;
  /** The recipient's language setting (default_language); unknown languages get English. */
  language: string;
  /** The organization the mail is from; null for the server's own (send-test-email). */
  realmId: number | null;
  /** The display name before the server's From address (NOREPLY_EMAIL_ADDRESS). */
  fromName: string;
  /** Where replies go (a missed-message email's reply address); none by default. */
  replyTo?: string | null;
  /**
   * Not sent before this time (milliseconds): a mail for later, such as an
   * invitation's reminder (Zulip's send_future_email). It waits in the
   * queue like a retry, and may be withdrawn before then (withdrawPendingEmails).
   */
  notBeforeMs?: number;
}

const wakers = new WeakMap<object, () => void>();

/** The delivery worker of this process registers how it is woken (src/actions/email-delivery.ts). */
export function setEmailWaker(ctx: object, wake: (() => void) | null): void {
  if (wake) wakers.set(ctx, wake);
  else wakers.delete(ctx);
}

/**
 * Renders a mail and queues it in `tx`: it is stored only if the change
 * that sends it commits, and this process's delivery worker is woken once it
 * has. Returns the queued row's id.
 */
export async function queueEmail<D>(ctx: Pick<AppContext, never>, tx: Tx, email: EmailToQueue<D>): Promise<number> {
  const rendered = renderEmail(email.template, email.language, email.data);
  const id = await insertOutgoingEmail(tx.trx, {
    realm_id: email.realmId,
    template: email.template.name,
    to_address: email.to,
    from_name: email.fromName,
    reply_to: email.replyTo ?? null,
    subject: rendered.subject,
    text_body: rendered.text,
    html_body: rendered.html.value,
    created_at: nowSeconds(),
    // Fixed now: every attempt sends this Message-ID (docs/adr/0048-the-mail-queue.md).
    message_token: `${Date.now().toString(36)}.${crypto.randomBytes(12).toString('hex')}`,
    // Due at once unless it is for later; the row is seen only after commit, when the worker is woken.
    next_attempt_at: email.notBeforeMs ?? Date.now(),
  });
  tx.afterCommit(() => wakers.get(ctx)?.());
  return id;
}

/**
 * Withdraws the mail of one kind to one address that is still waiting (Zulip's
 * clear_scheduled_invitation_emails): sent and in-flight mail is history.
 */
export async function withdrawPendingEmails(tx: Tx, template: { name: string }, to: string): Promise<void> {
  await deletePendingEmails(tx.trx, template.name, to);
}
