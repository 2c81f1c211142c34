import { emailRealmProblem, type EmailRealmProblem } from './realm-domains';
import { isValidEmail } from './users';

/**
 * POST /invites's `invitee_emails` as Zulip reads it (get_invitee_emails_set):
 * split on commas and newlines; an entry written `Name <address>` gives the
 * address between the angle brackets; each is trimmed; repeats collapse.
 * Empty entries are kept (and then refused as "Invalid address."), as in Zulip.
 */
export function parseInviteeEmails(raw: string): string[] {
  const out = new Set<string>();
  for (const part of raw.split(/[,\n]/)) {
    const named = /<(.*)>/.exec(part);
    out.add((named ? named[1]! : part).trim());
  }
  return [...out];
}

/** Zulip's words for each reason an address may not join (validate_email_is_valid). */
const INVITEE_PROBLEMS: Readonly<Record<EmailRealmProblem, string>> = {
  'outside-domains': 'Outside your domain.',
  plus: 'Email addresses containing + are not allowed.',
  disposable: 'Please use your real email address.',
};

/**
 * Why an address may not be invited to the organization, in Zulip's words
 * (validate_email_is_valid with the realm's validator), or null: the
 * organization's domains, "+" addresses and disposable-mail domains
 * (emailRealmProblem).
 */
export function inviteeEmailProblem(
  email: string,
  realm: { emails_restricted_to_domains: boolean; disallow_disposable_email_addresses: boolean },
  domains: ReadonlyArray<{ domain: string; allow_subdomains: boolean }>,
): string | null {
  if (!isValidEmail(email)) return 'Invalid address.';
  const problem = emailRealmProblem(email, realm, domains);
  return problem === null ? null : INVITEE_PROBLEMS[problem];
}

/**
 * Why an address may not sign up, in the words of Zulip's sign-up forms
 * (its RegistrationForm and HomepageForm), or null.
 */
export function signupEmailProblem(
  email: string,
  realm: { emails_restricted_to_domains: boolean; disallow_disposable_email_addresses: boolean },
  domains: ReadonlyArray<{ domain: string; allow_subdomains: boolean }>,
): string | null {
  switch (emailRealmProblem(email, realm, domains)) {
    case 'outside-domains':
      return `Your email address, ${email}, is not in one of the domains that are allowed to register for accounts in this organization.`;
    case 'plus':
      return 'Email addresses containing + are not allowed in this organization.';
    case 'disposable':
      return 'Please use your real email address.';
    case null:
      return null;
  }
}

/**
 * Zulip's invitation limits (zerver/actions/invites.py check_invite_limit,
 * settings INVITES_*), docs/architecture/invitations.md:
 * - an organization sends at most `max_invites` invitation mails a day
 *   (INVITES_DEFAULT_REALM_DAILY_MAX, 100, unless the organization's
 *   max_invites says otherwise);
 * - organizations under INVITES_NEW_REALM_DAYS (7) days old whose limit is
 *   the default share INVITES_NEW_REALM_LIMIT_DAYS: 100 mails a day, all
 *   together, against a burst of spam organizations;
 * - when joining needs no invitation, a non-administrator whose account is
 *   under INVITES_MIN_USER_AGE_DAYS (3) days old may not invite.
 */
export const INVITES_DEFAULT_REALM_DAILY_MAX = 100;
export const INVITES_NEW_REALM_DAYS = 7;
export const INVITES_NEW_REALM_LIMIT_DAYS: ReadonlyArray<readonly [days: number, count: number]> = [[1, 100]];
export const INVITES_MIN_USER_AGE_DAYS = 3;
export const DAY_SECONDS = 86400;

export const DAILY_LIMIT_MESSAGE =
  'To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.';

/** The organization's daily limit (Zulip's Realm.max_invites property). */
export const realmMaxInvites = (realm: { max_invites: number | null }) => realm.max_invites ?? INVITES_DEFAULT_REALM_DAILY_MAX;

/** Whether the invitation was usable at `now`: not used, not revoked, not expired. */
export function isEmailInviteUsable(invite: { status: number; expires_at: number | null }, now: number): boolean {
  return invite.status === 0 && (invite.expires_at === null || invite.expires_at > now);
}
