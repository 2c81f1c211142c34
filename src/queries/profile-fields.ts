import type { Knex } from 'knex';
import { invalidates } from '../db/invalidations';
import type { FieldTypeCode, ProfileFieldDef } from '../domain/profile-fields';
import { insertOne } from './ids';
import type { CustomProfileFieldRow } from './register';
import { mapBools } from './rows';

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
    .select('id', 'name', 'field_type', 'field_data', 'editable_by_user');
  return new Map(
    rows.map((r) => [
      Number(r.id),
      { ...r, id: Number(r.id), field_type: Number(r.field_type), editable_by_user: Boolean(r.editable_by_user) },
    ]),
  );
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

// ---------------------------------------------------------------------------
// Field definitions (the administration operations).
// ---------------------------------------------------------------------------

export type { CustomProfileFieldRow };

/** The columns of a field definition as read for the API (one CustomProfileFieldRow). */
export const CUSTOM_PROFILE_FIELD_COLUMNS = [
  'id',
  'name',
  'hint',
  'field_type',
  'field_data',
  'order',
  'display_in_profile_summary',
  'required',
  'editable_by_user',
  'use_for_user_matching',
] as const;

/** One of the organization's fields (another organization's is not found). */
export async function getCustomProfileField(q: Q, realmId: number, id: number): Promise<CustomProfileFieldRow | undefined> {
  const row = await q('custom_profile_fields')
    .where({ realm_id: realmId, id })
    .first(...CUSTOM_PROFILE_FIELD_COLUMNS);
  return row ? mapBools<CustomProfileFieldRow>(row) : undefined;
}

/** How many of the organization's fields are shown in the profile summary, leaving out `exceptId`. */
export async function countSummaryFields(q: Q, realmId: number, exceptId: number | null): Promise<number> {
  const query = q('custom_profile_fields').where({ realm_id: realmId, display_in_profile_summary: true });
  if (exceptId !== null) query.whereNot('id', exceptId);
  const row = (await query.count({ n: '*' }).first()) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** Whether another field of the organization has this label (compared exactly, as Zulip's unique key). */
export async function isFieldNameTaken(q: Q, realmId: number, name: string, exceptId: number | null): Promise<boolean> {
  const rows: Array<{ id: number; name: string }> = await q('custom_profile_fields')
    .where({ realm_id: realmId, name })
    .select('id', 'name');
  // MariaDB's collation compares without case: the exact comparison is made here, on every engine alike.
  return rows.some((r) => r.name === name && Number(r.id) !== exceptId);
}

export interface NewCustomProfileField {
  realm_id: number;
  name: string;
  hint: string;
  field_type: FieldTypeCode;
  field_data: string;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
  use_for_user_matching: boolean;
}

/** Adds a field at the end of the order (Zulip sets a new field's order to its id). */
export async function insertCustomProfileField(q: Q, row: NewCustomProfileField): Promise<number> {
  const id = await insertOne(q, 'custom_profile_fields', { ...row, order: 0 });
  await q('custom_profile_fields').where({ id }).update({ order: id });
  return id;
}

export type CustomProfileFieldChange = Partial<
  Pick<
    CustomProfileFieldRow,
    'name' | 'hint' | 'field_data' | 'display_in_profile_summary' | 'required' | 'editable_by_user' | 'use_for_user_matching'
  >
>;

export async function updateCustomProfileField(q: Q, id: number, change: CustomProfileFieldChange): Promise<void> {
  if (Object.keys(change).length > 0) await q('custom_profile_fields').where({ id }).update(change);
}

/** Sets each field's `order`. */
export async function setCustomProfileFieldOrders(q: Q, realmId: number, orders: ReadonlyMap<number, number>): Promise<void> {
  for (const [id, order] of orders) await q('custom_profile_fields').where({ realm_id: realmId, id }).update({ order });
}

/**
 * Deletes a field and every value of it (explicitly: the engines' cascades
 * are not relied on). The users whose values went have their cached extras
 * dropped (src/cache/own-users.ts).
 */
export async function deleteCustomProfileField(q: Q, id: number): Promise<void> {
  const userIds = await usersWithValues(q, id, null);
  await q('custom_profile_values').where({ field_id: id }).delete();
  await q('custom_profile_fields').where({ id }).delete();
  if (userIds.length > 0) invalidates(q, { kind: 'user', userIds });
}

/** Removes the values of a list-of-options field that name one of `keys` (choices that no longer exist). */
export async function deleteProfileValuesIn(q: Q, fieldId: number, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  const userIds = await usersWithValues(q, fieldId, keys);
  if (userIds.length === 0) return;
  await q('custom_profile_values').where({ field_id: fieldId }).whereIn('value', keys).delete();
  invalidates(q, { kind: 'user', userIds });
}

async function usersWithValues(q: Q, fieldId: number, values: readonly string[] | null): Promise<number[]> {
  const query = q('custom_profile_values').where({ field_id: fieldId });
  if (values) query.whereIn('value', values);
  return (await query.pluck('user_id')).map(Number);
}
