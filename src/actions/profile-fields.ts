import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType, type AuditExtra } from '../domain/audit';
import {
  checkFieldDataShape,
  checkFieldDefinition,
  choiceKeys,
  defaultExternalAccount,
  FieldType,
  MAX_SUMMARY_FIELDS,
  parsedFieldData,
  storedFieldData,
  type FieldDataInput,
  type FieldTypeCode,
} from '../domain/profile-fields';
import { isAdminRole } from '../domain/roles';
import { adminRequired, ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { insertAuditLog } from '../queries/audit';
import {
  countSummaryFields,
  deleteCustomProfileField,
  deleteProfileValuesIn,
  getCustomProfileField,
  insertCustomProfileField,
  isFieldNameTaken,
  setCustomProfileFieldOrders,
  updateCustomProfileField,
  type CustomProfileFieldChange,
  type CustomProfileFieldRow,
} from '../queries/profile-fields';
import { listCustomProfileFields } from '../queries/register';
import type { UserRow } from '../queries/rows';
import { listActiveUserIds } from '../queries/users';
import { toApiCustomProfileField } from '../serializers/users';
import { announceProfileChangesInTx, removeProfileValuesInTx, setProfileValuesInTx } from './profile-data';

type CustomProfileFieldsEvent = EventBody<Schema<'CustomProfileFieldsEvent'>>;

const fieldNotFound = (id: number) => new ApiError(`Field id ${id} not found.`);
const labelTaken = () => new ApiError('A field with that label already exists.');
const summaryFull = () => new ApiError(`Only ${MAX_SUMMARY_FIELDS} custom profile fields can be displayed in the profile summary.`);

/** GET /realm/profile_fields: the organization's fields in display order, for every user (as Zulip). */
export async function listProfileFields(ctx: AppContext, user: UserRow): Promise<Data<'get-custom-profile-fields'>> {
  return { custom_fields: (await listCustomProfileFields(ctx.db, user.realm_id)).map(toApiCustomProfileField) };
}

/**
 * POST /realm/profile_fields, Zulip's create_realm_custom_profile_field:
 * the summary limit, then the definition (validate_custom_profile_field),
 * then the label's uniqueness. A default external account field takes its
 * label and hint from the kind, whatever the request said, and stores only
 * its subtype.
 */
export async function doCreateProfileField(
  ctx: AppContext,
  actor: UserRow,
  p: Params<'create-custom-profile-field'>,
): Promise<Data<'create-custom-profile-field'>> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  const fieldData: FieldDataInput = p.field_data ?? {};
  checkFieldDataShape(fieldData);
  const display = p.display_in_profile_summary ?? false;
  return inTransaction(ctx.db, async (tx) => {
    if (display && (await countSummaryFields(tx.trx, actor.realm_id, null)) >= MAX_SUMMARY_FIELDS) throw summaryFull();
    const name = (p.name ?? '').trim();
    const hint = p.hint ?? '';
    const useForUserMatching = p.use_for_user_matching ?? false;
    checkFieldDefinition({ name, hint, fieldType: p.field_type, fieldData, displayInProfileSummary: display, useForUserMatching });
    const kind = defaultExternalAccount(p.field_type, fieldData);
    const row = {
      realm_id: actor.realm_id,
      name: kind ? kind.name : name,
      hint: kind ? kind.hint : hint,
      // checkFieldDefinition refused any other code.
      field_type: p.field_type as FieldTypeCode,
      field_data: kind ? JSON.stringify({ subtype: fieldData.subtype }) : (storedFieldData(p.field_type, fieldData) ?? ''),
      display_in_profile_summary: display,
      required: p.required ?? false,
      editable_by_user: p.editable_by_user ?? true,
      use_for_user_matching: useForUserMatching,
    };
    if (await isFieldNameTaken(tx.trx, actor.realm_id, row.name, null)) throw labelTaken();
    const id = await insertCustomProfileField(tx.trx, row);
    await audit(tx, actor, AuditEventType.CUSTOM_PROFILE_FIELD_CREATED, { field_id: id, name: row.name, field_type: row.field_type });
    await queueFieldsEvent(ctx, tx, actor.realm_id);
    return { id };
  });
}

/**
 * PATCH /realm/profile_fields/{field_id}, Zulip's
 * update_realm_custom_profile_field: the field, the summary limit, a
 * default external account field's fixed label, hint and field_data (only
 * its flags may change), then the definition as it would become. The type
 * never changes; field_data is kept only by the two types that have any.
 * Narrowing a list of options removes the values that named a dropped
 * choice. Zulip announces the field list even when nothing changed.
 */
export async function doUpdateProfileField(ctx: AppContext, actor: UserRow, p: Params<'update-custom-profile-field'>): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  if (p.field_data) checkFieldDataShape(p.field_data);
  await inTransaction(ctx.db, async (tx) => {
    const field = await getCustomProfileField(tx.trx, actor.realm_id, p.field_id);
    if (!field) throw fieldNotFound(p.field_id);
    if (p.display_in_profile_summary && (await countSummaryFields(tx.trx, actor.realm_id, field.id)) >= MAX_SUMMARY_FIELDS)
      throw summaryFull();
    const name = p.name === undefined ? undefined : p.name.trim();
    const storedData = parsedFieldData(field.field_data);
    if (defaultExternalAccount(field.field_type, storedData) && changesDefinition(field, storedData, name, p.hint, p.field_data)) {
      throw new ApiError('Default custom field cannot be updated.');
    }
    checkFieldDefinition({
      name: name ?? field.name,
      hint: p.hint ?? field.hint,
      fieldType: field.field_type,
      fieldData: p.field_data ?? storedData,
      displayInProfileSummary: p.display_in_profile_summary ?? field.display_in_profile_summary,
      useForUserMatching: p.use_for_user_matching ?? field.use_for_user_matching,
    });
    const change: CustomProfileFieldChange = {};
    if (name !== undefined) change.name = name;
    if (p.hint !== undefined) change.hint = p.hint;
    if (p.required !== undefined) change.required = p.required;
    if (p.display_in_profile_summary !== undefined) change.display_in_profile_summary = p.display_in_profile_summary;
    if (p.editable_by_user !== undefined) change.editable_by_user = p.editable_by_user;
    if (p.use_for_user_matching !== undefined) change.use_for_user_matching = p.use_for_user_matching;
    const data = p.field_data ? storedFieldData(field.field_type, p.field_data) : null;
    if (data !== null) {
      change.field_data = data;
      if (field.field_type === FieldType.SELECT) {
        const kept = new Set(Object.keys(p.field_data!));
        await deleteProfileValuesIn(
          tx.trx,
          field.id,
          choiceKeys(field.field_data).filter((k) => !kept.has(k)),
        );
      }
    }
    if (change.name !== undefined && (await isFieldNameTaken(tx.trx, actor.realm_id, change.name, field.id))) throw labelTaken();
    await updateCustomProfileField(tx.trx, field.id, change);
    await audit(tx, actor, AuditEventType.CUSTOM_PROFILE_FIELD_UPDATED, { field_id: field.id, ...changedFrom(field, change) });
    await queueFieldsEvent(ctx, tx, actor.realm_id);
  });
}

/** Whether an update would change a default external account field's label, hint or field_data (Zulip's update_only_display_in_profile_summary). */
function changesDefinition(
  field: CustomProfileFieldRow,
  storedData: FieldDataInput,
  name: string | undefined,
  hint: string | undefined,
  fieldData: FieldDataInput | undefined,
): boolean {
  return (
    (name !== undefined && name !== field.name) ||
    (hint !== undefined && hint !== field.hint) ||
    (fieldData !== undefined && !sameJson(fieldData, storedData))
  );
}

/** Two field_data objects alike, whatever the order of their keys. */
function sameJson(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b;
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return (
    ka.length === kb.length &&
    ka.every((k, i) => k === kb[i] && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/** The audit row's extra_data of an update: each changed attribute's old and new value. */
function changedFrom(field: CustomProfileFieldRow, change: CustomProfileFieldChange): AuditExtra {
  const out: Record<string, { old_value: unknown; new_value: unknown }> = {};
  for (const [key, value] of Object.entries(change)) {
    const old = field[key as keyof CustomProfileFieldChange];
    if (old !== value) out[key] = { old_value: old, new_value: value };
  }
  return { changes: out };
}

/** DELETE /realm/profile_fields/{field_id}: the field and every user's value of it. */
export async function doDeleteProfileField(ctx: AppContext, actor: UserRow, fieldId: number): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  await inTransaction(ctx.db, async (tx) => {
    const field = await getCustomProfileField(tx.trx, actor.realm_id, fieldId);
    if (!field) throw fieldNotFound(fieldId);
    await deleteCustomProfileField(tx.trx, field.id);
    await audit(tx, actor, AuditEventType.CUSTOM_PROFILE_FIELD_DELETED, {
      field_id: field.id,
      name: field.name,
      field_type: field.field_type,
    });
    await queueFieldsEvent(ctx, tx, actor.realm_id);
  });
}

/**
 * PATCH /realm/profile_fields: `order` must name every field of the
 * organization (IDs of no field are ignored); each field's order becomes
 * its position, the last one winning for an ID named twice, as Zulip's
 * try_reorder_realm_custom_profile_fields.
 */
export async function doReorderProfileFields(ctx: AppContext, actor: UserRow, order: readonly number[]): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  await inTransaction(ctx.db, async (tx) => {
    const fields = await listCustomProfileFields(tx.trx, actor.realm_id);
    const position = new Map(order.map((id, i) => [id, i]));
    if (fields.some((f) => !position.has(f.id))) throw new ApiError('Invalid order mapping.');
    const orders = new Map(fields.map((f) => [f.id, position.get(f.id)!]));
    await setCustomProfileFieldOrders(tx.trx, actor.realm_id, orders);
    await audit(tx, actor, AuditEventType.CUSTOM_PROFILE_FIELDS_REORDERED, {
      order: fields.map((f) => f.id).sort((a, b) => orders.get(a)! - orders.get(b)!),
    });
    await queueFieldsEvent(ctx, tx, actor.realm_id);
  });
}

/** Zulip's human_users_only decorator, first of the two own-profile operations' checks. */
function checkHuman(user: UserRow): void {
  if (user.is_bot) throw new ApiError('This endpoint does not accept bot requests.');
}

/** PATCH /users/me/profile_data: the caller's own values; "" and [] are stored as values, not removals (unlike PATCH /users/{id}). */
export async function doUpdateOwnProfileData(
  ctx: AppContext,
  user: UserRow,
  data: Params<'update-own-profile-data'>['data'],
): Promise<void> {
  checkHuman(user);
  await inTransaction(ctx.db, async (tx) => {
    await announceProfileChangesInTx(ctx, tx, user, user, await setProfileValuesInTx(tx, user, user, data));
  });
}

/** DELETE /users/me/profile_data: removes the caller's values of these fields. */
export async function doRemoveOwnProfileData(ctx: AppContext, user: UserRow, fieldIds: readonly number[]): Promise<void> {
  checkHuman(user);
  await inTransaction(ctx.db, async (tx) => {
    await announceProfileChangesInTx(ctx, tx, user, user, await removeProfileValuesInTx(tx, user, user, fieldIds));
  });
}

async function audit(
  tx: Tx,
  actor: UserRow,
  eventType: (typeof AuditEventType)[keyof typeof AuditEventType],
  extra: AuditExtra,
): Promise<void> {
  await insertAuditLog(tx.trx, { realmId: actor.realm_id, actorId: actor.id, eventType, extra });
}

/** Zulip's notify_realm_custom_profile_fields: the whole list, to every active user of the organization. */
async function queueFieldsEvent(ctx: AppContext, tx: Tx, realmId: number): Promise<void> {
  const [fields, userIds] = await Promise.all([listCustomProfileFields(tx.trx, realmId), listActiveUserIds(tx.trx, realmId)]);
  const event: CustomProfileFieldsEvent = { type: 'custom_profile_fields', fields: fields.map(toApiCustomProfileField) };
  tx.afterCommit(() => ctx.bus.publish({ event, userIds }));
}
