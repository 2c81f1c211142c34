import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';
import { ApiError } from '../errors';

/** Zulip's limit on a domain's length (validate_domain). */
export const MAX_REALM_DOMAIN_LENGTH = 255;

/**
 * Why a domain is not one an organization may name, in Zulip's words and
 * order (zerver/lib/domains.py validate_domain), or null when it is fine.
 * The domain arrives trimmed and lower-cased.
 */
export function realmDomainProblem(domain: string): string | null {
  if (domain.length === 0) return "Domain can't be empty.";
  if (!domain.includes('.')) return 'Domain must have at least one dot (.)';
  if (domain.length > MAX_REALM_DOMAIN_LENGTH) return 'Domain is too long';
  if (domain.startsWith('.') || domain.endsWith('.')) return 'Domain cannot start or end with a dot (.)';
  for (const label of domain.split('.')) {
    if (!label) return "Consecutive '.' are not allowed.";
    if (label.startsWith('-') || label.endsWith('-')) return "Subdomains cannot start or end with a '-'.";
    if (!/^[a-z0-9-]*$/.test(label)) return "Domain can only have letters, numbers, '.' and '-'s.";
  }
  return null;
}

/** A domain as POST /realm/domains takes it: trimmed, lower-cased, then checked ("Invalid domain: ..."). */
export function checkRealmDomain(raw: string): string {
  const domain = raw.trim().toLowerCase();
  const problem = realmDomainProblem(domain);
  if (problem) throw new ApiError(`Invalid domain: ${problem}`);
  return domain;
}

/**
 * Whether an address's domain is one of the organization's (Zulip's
 * email_allowed_for_realm): the domain itself, or, for an entry that allows
 * subdomains, any name ending in "." and the entry.
 */
export function emailDomainAllowed(email: string, domains: ReadonlyArray<{ domain: string; allow_subdomains: boolean }>): boolean {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1).toLowerCase();
  return domains.some((d) => d.domain === domain || (d.allow_subdomains && domain.endsWith(`.${d.domain}`)));
}

/** Why an address may not belong to an organization (Zulip's email_allowed_for_realm), or null. */
export type EmailRealmProblem = 'outside-domains' | 'plus' | 'disposable';

/**
 * Zulip's email_allowed_for_realm: an organization restricted to its domains
 * takes only their addresses, and none with "+" before the "@" (its domains
 * are a small allow-list already, so no disposable check); any other
 * organization refuses disposable-mail domains when its
 * disallow_disposable_email_addresses says so (the default).
 */
export function emailRealmProblem(
  email: string,
  realm: { emails_restricted_to_domains: boolean; disallow_disposable_email_addresses: boolean },
  domains: ReadonlyArray<{ domain: string; allow_subdomains: boolean }>,
): EmailRealmProblem | null {
  const at = email.lastIndexOf('@');
  if (!realm.emails_restricted_to_domains) {
    return realm.disallow_disposable_email_addresses && isDisposableDomain(email.slice(at + 1)) ? 'disposable' : null;
  }
  if (email.slice(0, at).includes('+')) return 'plus';
  return emailDomainAllowed(email, domains) ? null : 'outside-domains';
}

let disposable: ReadonlySet<string> | undefined;

/**
 * The list Zulip checks too (the disposable-email-domains project), read on
 * first use: a Set of some 9,000 names, built once, not per address.
 */
export function isDisposableDomain(domain: string): boolean {
  disposable ??= disposableEmailBlocklistSet();
  return disposable.has(domain.trim().toLowerCase());
}
