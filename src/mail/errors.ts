/**
 * What a failed attempt means for the mail (src/actions/email-delivery.ts):
 * `permanent` when the SMTP server refused the mail itself for good (a
 * 5xx answer to it), so trying again would only be refused again; anything
 * else may pass (a 4xx answer, a connection or TLS failure, a timeout,
 * credentials the server refused, a full disk) and is retried.
 *
 * Authentication refused (535) is a 5xx answer but says nothing about the
 * mail: it is the server's configuration, fixed by the operator, after which
 * the mail should still go out; so it is retried as long as any other
 * temporary failure.
 */
export interface MailFailure {
  permanent: boolean;
  /** One line for last_error, the log and send-test-email: the server's own words where it answered. */
  message: string;
}

interface NodemailerError extends Error {
  code?: string;
  originalCode?: string;
  responseCode?: number;
  response?: string;
  permanent?: boolean;
  command?: string;
}

export function mailFailure(err: unknown): MailFailure {
  if (!(err instanceof Error)) return { permanent: false, message: String(err) };
  const e = err as NodemailerError;
  const auth = e.code === 'EAUTH' || e.code === 'ENOAUTH' || (e.command ?? '').startsWith('AUTH');
  const permanent = !auth && (e.permanent ?? (e.responseCode !== undefined && e.responseCode >= 500 && e.responseCode !== 503));
  return { permanent, message: describeMailError(e) };
}

/**
 * The error as one line: nodemailer's message (which ends with the server's
 * answer when there was one) and its code, with the system's (ECONNREFUSED,
 * ENOTFOUND, a certificate's) when nodemailer replaced it with its own.
 */
export function describeMailError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const e = err as NodemailerError;
  const codes = [e.code, e.originalCode].filter((c, i, all): c is string => typeof c === 'string' && all.indexOf(c) === i);
  const line = e.message.trim().replace(/\s*\n\s*/g, ' ');
  return codes.length ? `${line} (${codes.join(', ')})` : line;
}
