import type { Knex } from 'knex';
import { invalidates } from '../db/invalidations';
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

// Every write below drops the organization's cached domains (src/cache/realm-domains.ts) on every node.
export async function insertRealmDomain(q: Q, realmId: number, domain: string, allowSubdomains: boolean): Promise<number> {
  invalidates(q, { kind: 'realm_domains', realmId });
  return insertOne(q, 'realm_domains', { realm_id: realmId, domain, allow_subdomains: allowSubdomains });
}

export async function setRealmDomainSubdomains(q: Q, realmId: number, id: number, allowSubdomains: boolean): Promise<void> {
  invalidates(q, { kind: 'realm_domains', realmId });
  await q('realm_domains').where({ realm_id: realmId, id }).update({ allow_subdomains: allowSubdomains });
}

export async function deleteRealmDomain(q: Q, realmId: number, id: number): Promise<void> {
  invalidates(q, { kind: 'realm_domains', realmId });
  await q('realm_domains').where({ realm_id: realmId, id }).delete();
}
