import type { AppContext } from '../context';
import type { Data, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import {
  AVATAR_SIZE,
  AvatarSource,
  MAX_AVATAR_FILE_SIZE_MIB,
  MEDIUM_AVATAR_SIZE,
  avatarHash,
  avatarKey,
  avatarTooLarge,
  notOneAvatar,
  type AvatarVariant,
} from '../domain/avatars';
import { noSuchUser } from '../errors';
import type { RealmRow, UserRow } from '../queries/rows';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { getUserInRealm, updateUser } from '../queries/users';
import { fullAvatarUrl, toApiRealmUserUpdateEvent } from '../serializers/users';
import type { IncomingFile } from './uploads';
import { squarePng } from './avatar-images';
import { checkUploadWithinQuota } from './upload-quota';

/**
 * POST /users/me/avatar: exactly one image of at most 5 MiB becomes the
 * caller's avatar — the original kept, a 100x100 and a 500x500 PNG served —
 * under a new unguessable name; avatar_source 'U', avatar_version + 1, and a
 * realm_user update to everyone who may know the caller.
 */
export async function doUploadAvatar(
  ctx: AppContext,
  caller: UserRow,
  realm: RealmRow,
  files: readonly IncomingFile[],
): Promise<Data<'upload-avatar'>> {
  if (files.length !== 1) throw notOneAvatar();
  const incoming = files[0]!;
  // Also enforced while the body streams in; kept here for any other way a file arrives.
  if (incoming.size > MAX_AVATAR_FILE_SIZE_MIB * 1024 * 1024) throw avatarTooLarge();
  await checkUploadWithinQuota(ctx.db, realm, incoming.size);
  const hash = avatarHash(ctx.secret, caller.id, caller.avatar_version + 1);
  const key = (variant: AvatarVariant) => avatarKey(caller.realm_id, hash, variant);
  // The files first, the record after: a crash in between leaves unnamed
  // files, never a URL without a file. Two concurrent uploads of the same
  // version write the same names; the last one's image is the one served.
  await incoming.file.commit(key('original'));
  try {
    const original = await readAll(ctx, key('original'));
    // One image job (src/actions/image-queue.ts): both sizes, one after the other.
    const [small, medium] = await ctx.images.run(caller.id, async (timeoutSeconds) => [
      await squarePng(original, AVATAR_SIZE, timeoutSeconds),
      await squarePng(original, MEDIUM_AVATAR_SIZE, timeoutSeconds),
    ]);
    await Promise.all([store(ctx, key('small'), small), store(ctx, key('medium'), medium)]);
  } catch (err) {
    await ctx.storage.remove([key('original'), key('small'), key('medium')]);
    throw err;
  }
  const updated = await changeAvatar(ctx, caller, AvatarSource.UPLOADED, hash);
  return { avatar_url: fullAvatarUrl(updated) };
}

/**
 * DELETE /users/me/avatar: back to the Gravatar one. The version goes up and
 * the event goes out even when the avatar already was Gravatar's, as Zulip.
 */
export async function doDeleteAvatar(ctx: AppContext, caller: UserRow): Promise<Data<'delete-avatar'>> {
  const updated = await changeAvatar(ctx, caller, AvatarSource.GRAVATAR, null);
  return { avatar_url: fullAvatarUrl(updated) };
}

/** Records the new avatar, tells everyone who may know the user, and drops the previous upload's files. */
async function changeAvatar(ctx: AppContext, caller: UserRow, source: string, hash: string | null): Promise<UserRow> {
  const { before, after } = await inTransaction(ctx.db, async (tx) => {
    const user = await getUserInRealm(tx.trx, caller.realm_id, caller.id);
    if (!user) throw noSuchUser();
    const changes = { avatar_source: source, avatar_hash: hash, avatar_version: user.avatar_version + 1 };
    await updateUser(tx.trx, user.id, changes);
    const after: UserRow = { ...user, ...changes };
    const audience = await listUsersWhoMayAccess(tx.trx, user.realm_id, user.id, user.is_bot);
    const person: Schema<'RealmUserUpdatePerson'> = {
      user_id: user.id,
      avatar_source: after.avatar_source,
      // Full URLs even for clients that compute Gravatar URLs themselves: the event carries no email.
      avatar_url: fullAvatarUrl(after),
      avatar_url_medium: fullAvatarUrl(after, true),
      avatar_version: after.avatar_version,
    };
    tx.afterCommit(() => ctx.bus.publish({ event: toApiRealmUserUpdateEvent(person), userIds: audience }));
    return { before: user, after };
  });
  if (before.avatar_hash && before.avatar_hash !== after.avatar_hash) {
    const old = (v: AvatarVariant) => avatarKey(before.realm_id, before.avatar_hash!, v);
    // Best effort: an old file left behind is only disk space.
    await ctx.storage.remove([old('original'), old('small'), old('medium')]).catch(() => undefined);
  }
  return after;
}

async function readAll(ctx: AppContext, key: string): Promise<Buffer> {
  const stream = await ctx.storage.read(key);
  if (!stream) throw new Error(`stored avatar ${key} vanished`);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function store(ctx: AppContext, key: string, bytes: Buffer): Promise<void> {
  const file = await ctx.storage.create();
  file.stream.end(bytes);
  await file.commit(key);
}
