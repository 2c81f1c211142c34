import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import {
  imageTooLarge,
  LogoSource,
  MAX_LOGO_FILE_SIZE_MIB,
  notOneLogo,
  realmImageHash,
  realmImageKey,
  REALM_LOGO_HEIGHT,
  REALM_LOGO_WIDTH,
} from '../domain/realm-images';
import { badImage } from '../domain/avatars';
import { isAdminRole } from '../domain/roles';
import { adminRequired, MissingArgumentError } from '../errors';
import { insertAuditLog } from '../queries/audit';
import { getRealmById, updateRealm } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { listActiveUserIds } from '../queries/users';
import { logoEventData } from '../serializers/realm-images';
import { readStored, storeBytes } from './realm-image-files';
import { sharp } from './sharp';
import type { IncomingFile } from './uploads';

/** Images larger than this many pixels are refused before decoding (a decompression bomb), as avatars. */
const MAX_INPUT_PIXELS = 50_000_000;

/**
 * POST /realm/logo (Zulip's upload_logo): an administrator's one image of at
 * most 5 MiB becomes the wide logo (`night`: the one for dark themes),
 * shrunk to fit 800x100 and stored as a PNG (the original kept, never
 * served). Zulip refuses this on its limited (free Cloud) plans; Parley has
 * no plans and allows it everywhere.
 */
export async function doUploadRealmLogo(
  ctx: AppContext,
  actor: UserRow,
  night: boolean | undefined,
  files: readonly IncomingFile[],
): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  // Optional in the contract only so that it is checked here, after the administrator check, as in Zulip.
  if (night === undefined) throw new MissingArgumentError('night');
  if (files.length !== 1) throw notOneLogo();
  const incoming = files[0]!;
  // Also enforced while the body streams in (src/http/upload-rules.ts).
  if (incoming.size > MAX_LOGO_FILE_SIZE_MIB * 1024 * 1024) throw imageTooLarge(MAX_LOGO_FILE_SIZE_MIB);
  const realm = (await getRealmById(ctx.db, actor.realm_id))!;
  const kind = night ? 'night_logo' : 'logo';
  const original = realmImageKey(realm.id, realmImageHash(realm.id, kind, logoVersion(realm, night) + 1), 'original');
  await incoming.file.commit(original);
  let logo: Buffer;
  try {
    const bytes = await readStored(ctx, original);
    logo = await ctx.images.run(actor.id, (timeoutSeconds) => fittedPng(bytes, timeoutSeconds));
  } catch (err) {
    await ctx.storage.remove([original]);
    throw err;
  }
  await changeLogoSource(ctx, actor, night, LogoSource.UPLOADED, logo);
}

/**
 * DELETE /realm/logo (Zulip's delete_logo_backend): back to the default
 * logo; as in Zulip the version goes up and the event goes out even when it
 * already was the default.
 */
export async function doDeleteRealmLogo(ctx: AppContext, actor: UserRow, night: boolean): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  await changeLogoSource(ctx, actor, night, LogoSource.DEFAULT, null);
}

function logoVersion(realm: RealmRow, night: boolean): number {
  return night ? realm.night_logo_version : realm.logo_version;
}

/**
 * Zulip's resize_logo: shrunk (never enlarged) to fit eight icons wide and
 * one high, keeping its proportions, upright per its EXIF orientation, the
 * first frame of an animation. Anything that does not decode is Zulip's
 * "Could not decode image" refusal.
 */
async function fittedPng(input: Buffer, timeoutSeconds: number): Promise<Buffer> {
  try {
    return await sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate()
      .resize(REALM_LOGO_WIDTH, REALM_LOGO_HEIGHT, { fit: 'inside', withoutEnlargement: true })
      .png()
      .timeout({ seconds: timeoutSeconds })
      .toBuffer();
  } catch {
    throw badImage();
  }
}

/**
 * Zulip's do_change_logo_source: the day or night logo's new source and next
 * version, a REALM_LOGO_CHANGED audit row (Zulip's carries no details), and a
 * `realm` update_dict event (property `logo` or `night_logo`) to every active
 * user after commit. The PNG is stored inside the transaction under the
 * version it writes, as the icon's (src/actions/realm-icon.ts); updateRealm
 * invalidates the organization's cache entry on every node.
 */
async function changeLogoSource(ctx: AppContext, actor: UserRow, night: boolean, source: string, png: Buffer | null): Promise<void> {
  const kind = night ? 'night_logo' : 'logo';
  const before = await inTransaction(ctx.db, async (tx) => {
    const realm = (await getRealmById(tx.trx, actor.realm_id))!;
    const version = logoVersion(realm, night) + 1;
    const columns = night ? { night_logo_source: source, night_logo_version: version } : { logo_source: source, logo_version: version };
    if (png) await storeBytes(ctx, realmImageKey(realm.id, realmImageHash(realm.id, kind, version), 'small'), png);
    await updateRealm(tx.trx, realm.id, columns);
    const after: RealmRow = { ...realm, ...columns };
    await insertAuditLog(tx.trx, [{ realmId: realm.id, actorId: actor.id, eventType: AuditEventType.REALM_LOGO_CHANGED }]);
    const audience = await listActiveUserIds(tx.trx, realm.id);
    const event = { type: 'realm', op: 'update_dict', property: kind, data: logoEventData(after, night) } as const;
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: audience }));
    return realm;
  });
  if ((night ? before.night_logo_source : before.logo_source) === LogoSource.UPLOADED) {
    const old = (variant: 'small' | 'original') =>
      realmImageKey(before.id, realmImageHash(before.id, kind, logoVersion(before, night)), variant);
    // Best effort: an old file left behind is only disk space.
    await ctx.storage.remove([old('original'), old('small')]).catch(() => undefined);
  }
}
