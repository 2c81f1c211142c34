import type { Knex } from 'knex';
import { invalidates } from '../db/invalidations';
import { dialectOf } from '../db/connection';
import { insertOne } from './ids';
import { mapBools, RealmRow } from './rows';

type Q = Knex | Knex.Transaction;

/** A new organization's columns; the rest keep the table's defaults until its system groups exist. */
export type NewRealmRow = Pick<RealmRow, 'string_id' | 'name' | 'description' | 'date_created'> &
  Partial<Omit<RealmRow, 'id' | 'string_id' | 'name' | 'description' | 'date_created'>>;

export async function insertRealm(q: Q, row: NewRealmRow): Promise<number> {
  const id = await insertOne(q, 'realms', row);
  // A new organization changes which one a host name addresses.
  invalidates(q, { kind: 'realm', realmId: id });
  return id;
}

export async function getRealmById(q: Q, id: number): Promise<RealmRow | undefined> {
  const row = await q('realms').where({ id }).first();
  return row ? mapBools<RealmRow>(row) : undefined;
}

/**
 * The organization's upload quota, read under a lock of its row on MariaDB,
 * so that concurrent uploads into one organization with a quota take turns
 * between the check of the space used and the new attachment's insert (else
 * two could each pass the check and together exceed it). SQLite's one writer
 * serializes them already.
 */
export async function getUploadQuotaForUpdate(trx: Knex.Transaction, realmId: number): Promise<number | null> {
  const query = trx('realms').where({ id: realmId }).first('upload_quota_mib');
  if (dialectOf(trx) === 'mysql') query.forUpdate();
  const row = (await query) as { upload_quota_mib: number | null } | undefined;
  return row?.upload_quota_mib ?? null;
}

export async function getRealmByStringId(q: Q, stringId: string): Promise<RealmRow | undefined> {
  const row = await q('realms').where({ string_id: stringId }).first();
  return row ? mapBools<RealmRow>(row) : undefined;
}

export async function listRealms(q: Q): Promise<RealmRow[]> {
  const rows = await q('realms').orderBy('id');
  return rows.map((r) => mapBools<RealmRow>(r));
}

export async function updateRealm(q: Q, id: number, changes: Partial<Omit<RealmRow, 'id'>>): Promise<void> {
  await q('realms').where({ id }).update(changes);
  invalidates(q, { kind: 'realm', realmId: id });
}

export async function getRealmUserDefaultsRaw(q: Q, realmId: number): Promise<string | undefined> {
  const row = await q('realm_user_defaults').where({ realm_id: realmId }).first('settings');
  return row?.settings;
}

export async function insertRealmUserDefaults(q: Q, realmId: number, settings: string): Promise<void> {
  await q('realm_user_defaults').insert({ realm_id: realmId, settings });
}

/** Every organization's subdomain ("" for the root organization). */
export async function listRealmStringIds(q: Q): Promise<string[]> {
  return q('realms').pluck('string_id');
}
