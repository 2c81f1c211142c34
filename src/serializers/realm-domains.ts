import type { Schema } from '../contract';
import type { RealmDomainRow } from '../queries/realm-domains';

/** A domain of the organization on the wire (GET /realm/domains, register's realm_domains, realm_domains events). */
export const toApiRealmDomain = (d: Pick<RealmDomainRow, 'domain' | 'allow_subdomains'>): Schema<'RealmDomain'> => ({
  domain: d.domain,
  allow_subdomains: d.allow_subdomains,
});
