import type { AppContext } from '../context';
import type { Data, Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { checkLinkifier, pythonStrip, type Linkifier, type LinkifierFields } from '../domain/linkifiers';
import { isAdminRole } from '../domain/roles';
import { adminRequired, ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import type { Caller } from '../access/viewer';
import { insertAuditLog } from '../queries/audit';
import {
  deleteLinkifier,
  getLinkifier,
  insertLinkifier,
  linkifierPatternTaken,
  listLinkifierIds,
  listLinkifiers,
  reorderLinkifiers,
  updateLinkifier,
} from '../queries/linkifiers';
import { listActiveUserIds } from '../queries/users';

type RealmLinkifiersEvent = EventBody<Schema<'RealmLinkifiersEvent'>>;

const notFound = () => new ApiError('Linkifier not found.');

/** What POST and PATCH /realm/filters take; the reverse-linkifier fields are optional (feature levels 471 and 478). */
export interface LinkifierParams {
  pattern: string;
  url_template: string;
  example_input?: string;
  reverse_template?: string;
  alternative_url_templates?: string[];
}

/**
 * The values as the view trims them. An optional value left out, or blank,
 * is unset (null; the empty list): PATCH replaces the whole linkifier, as
 * its pattern and template are required there too.
 */
function fieldsOf(p: LinkifierParams): LinkifierFields {
  const optional = (v: string | undefined) => (v === undefined || pythonStrip(v) === '' ? null : pythonStrip(v));
  return {
    pattern: pythonStrip(p.pattern),
    url_template: pythonStrip(p.url_template),
    example_input: optional(p.example_input),
    reverse_template: optional(p.reverse_template),
    alternative_url_templates: (p.alternative_url_templates ?? []).map(pythonStrip),
  };
}

function requireAdmin(caller: Caller): void {
  if (!isAdminRole(caller.user.role)) throw adminRequired();
}

/** GET /realm/linkifiers: every user of the organization may read them (they render its messages). */
export async function getLinkifiers(ctx: AppContext, caller: Caller): Promise<Data<'get-linkifiers'>> {
  return { linkifiers: await listLinkifiers(ctx.db, caller.realm.id) };
}

/**
 * POST /realm/filters (Zulip's do_add_linkifier): checked as Zulip's model
 * validation checks it, written after the organization's last linkifier,
 * one audit row with the whole new list, then the event.
 */
export async function doAddLinkifier(ctx: AppContext, caller: Caller, p: LinkifierParams): Promise<Data<'add-linkifier'>> {
  requireAdmin(caller);
  const fields = fieldsOf(p);
  const realmId = caller.realm.id;
  const id = await inTransaction(ctx.db, async (tx) => {
    checkLinkifier(fields, await linkifierPatternTaken(tx.trx, realmId, fields.pattern));
    const newId = await insertLinkifier(tx.trx, realmId, fields);
    await afterChange(ctx, tx, caller, caller.user.id, AuditEventType.REALM_LINKIFIER_ADDED, (list) => ({
      realm_linkifiers: list,
      added_linkifier: { ...fields, id: newId },
    }));
    return newId;
  });
  return { id };
}

/** PATCH /realm/filters/{filter_id} (do_update_linkifier): the same checks; the linkifier keeps its place. */
export async function doUpdateLinkifier(
  ctx: AppContext,
  caller: Caller,
  id: number,
  p: LinkifierParams,
): Promise<Data<'update-linkifier'>> {
  requireAdmin(caller);
  const fields = fieldsOf(p);
  const realmId = caller.realm.id;
  await inTransaction(ctx.db, async (tx) => {
    if (!(await getLinkifier(tx.trx, realmId, id))) throw notFound();
    checkLinkifier(fields, await linkifierPatternTaken(tx.trx, realmId, fields.pattern, id));
    await updateLinkifier(tx.trx, realmId, id, fields);
    await afterChange(ctx, tx, caller, caller.user.id, AuditEventType.REALM_LINKIFIER_CHANGED, (list) => ({
      realm_linkifiers: list,
      changed_linkifier: { ...fields, id },
    }));
  });
  return {};
}

/** DELETE /realm/filters/{filter_id} (do_remove_linkifier). */
export async function doRemoveLinkifier(ctx: AppContext, caller: Caller, id: number): Promise<Data<'remove-linkifier'>> {
  requireAdmin(caller);
  const realmId = caller.realm.id;
  await inTransaction(ctx.db, async (tx) => {
    const old = await getLinkifier(tx.trx, realmId, id);
    if (!old || (await deleteLinkifier(tx.trx, realmId, id)) === 0) throw notFound();
    // Zulip's audit row for a removal names the pattern and template, not the id, and its view
    // records no acting user for it (delete_linkifier passes acting_user=None).
    await afterChange(ctx, tx, caller, null, AuditEventType.REALM_LINKIFIER_REMOVED, (list) => ({
      realm_linkifiers: list,
      removed_linkifier: { pattern: old.pattern, url_template: old.url_template },
    }));
  });
  return {};
}

/**
 * PATCH /realm/linkifiers (check_reorder_linkifiers): duplicates are refused
 * first, then a list that is not exactly the organization's linkifiers. An
 * organization without linkifiers accepts the empty list and, as in Zulip,
 * writes no audit row and sends no event.
 */
export async function doReorderLinkifiers(ctx: AppContext, caller: Caller, ids: number[]): Promise<Data<'reorder-linkifiers'>> {
  requireAdmin(caller);
  const realmId = caller.realm.id;
  const wanted = new Set(ids);
  if (wanted.size < ids.length) throw new ApiError('The ordered list must not contain duplicated linkifiers');
  await inTransaction(ctx.db, async (tx) => {
    const existing = await listLinkifierIds(tx.trx, realmId);
    if (existing.length !== wanted.size || existing.some((id) => !wanted.has(id))) {
      throw new ApiError('The ordered list must enumerate all existing linkifiers exactly once');
    }
    if (existing.length === 0) return;
    await reorderLinkifiers(tx.trx, realmId, ids);
    await afterChange(ctx, tx, caller, caller.user.id, AuditEventType.REALM_LINKIFIERS_REORDERED, (list) => ({ realm_linkifiers: list }));
  });
  return {};
}

/**
 * Zulip's audit row (the organization's whole list after the change, and
 * what changed) and its realm_linkifiers event with the whole list, to the
 * organization's active users after commit. The compiled linkifiers of
 * every node are dropped by the queries' invalidation, before the event.
 */
async function afterChange(
  ctx: AppContext,
  tx: Tx,
  caller: Caller,
  actorId: number | null,
  eventType: (typeof AuditEventType)[
    'REALM_LINKIFIER_ADDED' | 'REALM_LINKIFIER_CHANGED' | 'REALM_LINKIFIER_REMOVED' | 'REALM_LINKIFIERS_REORDERED'],
  extra: (list: Linkifier[]) => Record<string, unknown>,
): Promise<void> {
  const realmId = caller.realm.id;
  const [list, userIds] = await Promise.all([listLinkifiers(tx.trx, realmId), listActiveUserIds(tx.trx, realmId)]);
  await insertAuditLog(tx.trx, { realmId, actorId, eventType, extra: extra(list) });
  const event: RealmLinkifiersEvent = { type: 'realm_linkifiers', realm_linkifiers: list };
  tx.afterCommit(() => ctx.bus.publish({ event, userIds }));
}
