import type { Knex } from 'knex';

export interface QueuedEmail {
  id: number;
  realm_id: number | null;
  template: string;
  to_address: string;
  from_name: string;
  reply_to: string | null;
  subject: string;
  text_body: string;
  html_body: string;
}

/** The mail queued so far (migration 041), oldest first; to one address when given. */
export async function queuedEmails(db: Knex, to?: string): Promise<QueuedEmail[]> {
  const q = db('outgoing_emails').orderBy('id');
  if (to !== undefined) void q.where({ to_address: to });
  return (await q) as QueuedEmail[];
}

/** The first http(s) link in a mail's text part that starts with `prefix`. */
export function linkIn(text: string, prefix: string): string {
  const found = text.split(/\s+/).find((w) => w.startsWith(prefix));
  if (!found) throw new Error(`no link starting with ${prefix} in:\n${text}`);
  return found.replace(/[).,>]+$/, '');
}
