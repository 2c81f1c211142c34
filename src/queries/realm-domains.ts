import type { Knex } from 'knex';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

export interface RealmDomainRow {
  id: number;
  domain: string;
  allow_subdomains: boolean;
}

/** The organization's domains in the order they were added (Zulip's get_realm_domains). */
export async function listRealmDomains(q: Q, realmId: number): Promise<RealmDomainRow[]> {
  const rows = await q('realm_domains').where({ realm_id: realmId }).orderBy('id').select('id', 'domain', 'allow_subdomains');
  return rows.map((r) => ({ id: Number(r.id), domain: r.domain, allow_subdomains: Boolean(r.allow_subdomains) }));
}

export async function getRealmDomain(q: Q, realmId: number, domain: string): Promise<RealmDomainRow | undefined> {
  const r = await q('realm_domains').where({ realm_id: realmId, domain }).first('id', 'domain', 'allow_subdomains');
  return r ? { id: Number(r.id), domain: r.domain, allow_subdomains: Boolean(r.allow_subdomains) } : undefined;
}

export async function insertRealmDomain(q: Q, realmId: number, domain: string, allowSubdomains: boolean): Promise<number> {
  return insertOne(q, 'realm_domains', { realm_id: realmId, domain, allow_subdomains: allowSubdomains });
}

export async function setRealmDomainSubdomains(q: Q, id: number, allowSubdomains: boolean): Promise<void> {
  await q('realm_domains').where({ id }).update({ allow_subdomains: allowSubdomains });
}

export async function deleteRealmDomain(q: Q, id: number): Promise<void> {
  await q('realm_domains').where({ id }).delete();
}
