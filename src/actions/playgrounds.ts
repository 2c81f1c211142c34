import type { AppContext } from '../context';
import type { Data, Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { checkPlayground, checkPygmentsLanguageParam, type Playground } from '../domain/playgrounds';
import { pythonStrip } from '../domain/linkifiers';
import { isAdminRole } from '../domain/roles';
import { adminRequired, ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import type { Caller } from '../access/viewer';
import { insertAuditLog } from '../queries/audit';
import { deletePlayground, getPlayground, insertPlayground, listPlaygrounds, playgroundTaken } from '../queries/playgrounds';
import { listActiveUserIds } from '../queries/users';

type RealmPlaygroundsEvent = EventBody<Schema<'RealmPlaygroundsEvent'>>;

/**
 * POST /realm/playgrounds (Zulip's add_realm_playground and
 * check_add_realm_playground): the administrator check, the language as
 * sent, then the stripped values through the model's validation; one audit
 * row with the whole new list, and the event.
 */
export async function doAddPlayground(
  ctx: AppContext,
  caller: Caller,
  p: { name: string; pygments_language: string; url_template: string },
): Promise<Data<'add-code-playground'>> {
  if (!isAdminRole(caller.user.role)) throw adminRequired();
  checkPygmentsLanguageParam(p.pygments_language);
  const values = {
    name: pythonStrip(p.name),
    pygments_language: pythonStrip(p.pygments_language),
    url_template: pythonStrip(p.url_template),
  };
  const realmId = caller.realm.id;
  const id = await inTransaction(ctx.db, async (tx) => {
    checkPlayground(values, await playgroundTaken(tx.trx, realmId, values.pygments_language, values.name));
    const newId = await insertPlayground(tx.trx, realmId, values);
    await afterChange(ctx, tx, caller, AuditEventType.REALM_PLAYGROUND_ADDED, (list) => ({
      realm_playgrounds: list,
      added_playground: { id: newId, ...values },
    }));
    return newId;
  });
  return { id };
}

/** DELETE /realm/playgrounds/{playground_id} (access_playground_by_id, do_remove_realm_playground). */
export async function doRemovePlayground(ctx: AppContext, caller: Caller, id: number): Promise<Data<'remove-code-playground'>> {
  if (!isAdminRole(caller.user.role)) throw adminRequired();
  const realmId = caller.realm.id;
  await inTransaction(ctx.db, async (tx) => {
    const old = await getPlayground(tx.trx, realmId, id);
    if (!old || (await deletePlayground(tx.trx, realmId, id)) === 0) throw new ApiError('Invalid playground');
    await afterChange(ctx, tx, caller, AuditEventType.REALM_PLAYGROUND_REMOVED, (list) => ({
      realm_playgrounds: list,
      removed_playground: { name: old.name, pygments_language: old.pygments_language, url_template: old.url_template },
    }));
  });
  return {};
}

/** Zulip's audit row and its realm_playgrounds event (the whole list) to the organization's active users. */
async function afterChange(
  ctx: AppContext,
  tx: Tx,
  caller: Caller,
  eventType: (typeof AuditEventType)['REALM_PLAYGROUND_ADDED' | 'REALM_PLAYGROUND_REMOVED'],
  extra: (list: Playground[]) => Record<string, unknown>,
): Promise<void> {
  const realmId = caller.realm.id;
  const [list, userIds] = await Promise.all([listPlaygrounds(tx.trx, realmId), listActiveUserIds(tx.trx, realmId)]);
  await insertAuditLog(tx.trx, { realmId, actorId: caller.user.id, eventType, extra: extra(list) });
  const event: RealmPlaygroundsEvent = { type: 'realm_playgrounds', realm_playgrounds: list };
  tx.afterCommit(() => ctx.bus.publish({ event, userIds }));
}
