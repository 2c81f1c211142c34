import type { AppContext } from '../context';
import type { Data } from '../contract';
import { inTransaction } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import {
  IconSource,
  MAX_ICON_FILE_SIZE_MIB,
  REALM_ICON_SIZE,
  imageTooLarge,
  notOneIcon,
  realmImageHash,
  realmImageKey,
} from '../domain/realm-images';
import { isAdminRole } from '../domain/roles';
import { adminRequired } from '../errors';
import { insertAuditLog } from '../queries/audit';
import { getRealmById, updateRealm } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { listActiveUserIds } from '../queries/users';
import { iconEventData, realmIconUrl } from '../serializers/realm-images';
import { squarePng } from './avatar-images';
import { readStored, storeBytes } from './realm-image-files';
import type { IncomingFile } from './uploads';

/**
 * POST /realm/icon (Zulip's upload_icon): an administrator's one image of at
 * most 5 MiB becomes the organization's icon, a 100x100 PNG cropped around
 * the centre (the original kept, never served) under the next version's name.
 */
export async function doUploadRealmIcon(
  ctx: AppContext,
  actor: UserRow,
  files: readonly IncomingFile[],
): Promise<Data<'upload-realm-icon'>> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  if (files.length !== 1) throw notOneIcon();
  const incoming = files[0]!;
  // Also enforced while the body streams in (src/http/upload-rules.ts).
  if (incoming.size > MAX_ICON_FILE_SIZE_MIB * 1024 * 1024) throw imageTooLarge(MAX_ICON_FILE_SIZE_MIB);
  const realm = (await getRealmById(ctx.db, actor.realm_id))!;
  const original = realmImageKey(realm.id, realmImageHash(realm.id, 'icon', realm.icon_version + 1), 'original');
  // The original is kept, as Zulip keeps it, but never served.
  await incoming.file.commit(original);
  let icon: Buffer;
  try {
    const bytes = await readStored(ctx, original);
    icon = await ctx.images.run(actor.id, (timeoutSeconds) => squarePng(bytes, REALM_ICON_SIZE, timeoutSeconds));
  } catch (err) {
    await ctx.storage.remove([original]);
    throw err;
  }
  const after = await changeIconSource(ctx, actor, IconSource.UPLOADED, icon);
  return { icon_url: realmIconUrl(after) };
}

/**
 * DELETE /realm/icon (Zulip's delete_icon_backend): back to the default
 * icon. As in Zulip the version goes up and the event goes out even when the
 * icon already was the default one.
 */
export async function doDeleteRealmIcon(ctx: AppContext, actor: UserRow): Promise<Data<'delete-realm-icon'>> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  const after = await changeIconSource(ctx, actor, IconSource.GRAVATAR, null);
  return { icon_url: realmIconUrl(after) };
}

/**
 * Zulip's do_change_icon_source: the new source and the next version, a
 * REALM_ICON_SOURCE_CHANGED audit row with both, and a `realm` update_dict
 * `icon` event to every active user after commit. updateRealm invalidates the
 * organization's cache entry on every node. An uploaded icon's PNG is stored
 * inside the transaction, under the name of the version the transaction
 * writes: two concurrent uploads each get a version and a file of their own,
 * and a URL never names a file that is not there (a rollback leaves only an
 * unnamed small file).
 */
async function changeIconSource(ctx: AppContext, actor: UserRow, source: string, png: Buffer | null): Promise<RealmRow> {
  const { before, after } = await inTransaction(ctx.db, async (tx) => {
    const realm = (await getRealmById(tx.trx, actor.realm_id))!;
    const columns = { icon_source: source, icon_version: realm.icon_version + 1 };
    if (png) await storeBytes(ctx, realmImageKey(realm.id, realmImageHash(realm.id, 'icon', columns.icon_version), 'small'), png);
    await updateRealm(tx.trx, realm.id, columns);
    const after: RealmRow = { ...realm, ...columns };
    await insertAuditLog(tx.trx, [
      {
        realmId: realm.id,
        actorId: actor.id,
        eventType: AuditEventType.REALM_ICON_SOURCE_CHANGED,
        extra: { icon_source: after.icon_source, icon_version: after.icon_version },
      },
    ]);
    const audience = await listActiveUserIds(tx.trx, realm.id);
    tx.afterCommit(() =>
      ctx.bus.publish({ event: { type: 'realm', op: 'update_dict', property: 'icon', data: iconEventData(after) }, userIds: audience }),
    );
    return { before: realm, after };
  });
  if (before.icon_source === IconSource.UPLOADED) {
    const old = (variant: 'small' | 'original') =>
      realmImageKey(before.id, realmImageHash(before.id, 'icon', before.icon_version), variant);
    // Best effort: an old file left behind is only disk space.
    await ctx.storage.remove([old('original'), old('small')]).catch(() => undefined);
  }
  return after;
}
