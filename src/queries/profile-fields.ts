import type { Knex } from 'knex';
import { invalidates } from '../db/invalidations';
import type { ProfileFieldDef } from '../domain/profile-fields';

type Q = Knex | Knex.Transaction;

export interface ProfileValueRow {
  user_id: number;
  field_id: number;
  value: string;
  rendered_value: string | null;
}

/** The realm's fields among `ids` (other organizations' fields are not found). */
export async function getProfileFields(q: Q, realmId: number, ids: number[]): Promise<Map<number, ProfileFieldDef>> {
  if (ids.length === 0) return new Map();
  const rows: ProfileFieldDef[] = await q('custom_profile_fields')
    .where({ realm_id: realmId })
    .whereIn('id', [...new Set(ids)])
    .select('id', 'name', 'field_type', 'field_data');
  return new Map(rows.map((r) => [Number(r.id), { ...r, id: Number(r.id), field_type: Number(r.field_type) }]));
}

/** Profile field values of the organization's users (all of them when `userIds` is null), by field ID. */
export async function listProfileValuesOf(q: Q, realmId: number, userIds: number[] | null): Promise<ProfileValueRow[]> {
  const query = q('custom_profile_values as v')
    .join('custom_profile_fields as f', 'f.id', 'v.field_id')
    .where('f.realm_id', realmId)
    .orderBy(['v.user_id', 'v.field_id'])
    .select('v.user_id', 'v.field_id', 'v.value', 'v.rendered_value');
  if (userIds) query.whereIn('v.user_id', userIds);
  return query;
}

export async function getProfileValue(q: Q, userId: number, fieldId: number): Promise<ProfileValueRow | undefined> {
  return q('custom_profile_values').where({ user_id: userId, field_id: fieldId }).first();
}

export async function setProfileValue(q: Q, row: ProfileValueRow): Promise<void> {
  const { user_id, field_id, value, rendered_value } = row;
  await q('custom_profile_values')
    .insert({ user_id, field_id, value, rendered_value })
    .onConflict(['user_id', 'field_id'])
    .merge(['value', 'rendered_value']);
  // GET /users/me's cached extras hold the user's values (src/cache/own-users.ts).
  invalidates(q, { kind: 'user', userIds: [user_id] });
}

/** Removes a value; whether there was one. */
export async function deleteProfileValue(q: Q, userId: number, fieldId: number): Promise<boolean> {
  const deleted = (await q('custom_profile_values').where({ user_id: userId, field_id: fieldId }).delete()) > 0;
  if (deleted) invalidates(q, { kind: 'user', userIds: [userId] });
  return deleted;
}
