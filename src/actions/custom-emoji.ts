import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context';
import type { Data, Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import {
  checkValidEmojiName,
  EMOJI_IMAGE_TYPES,
  emojiKey,
  emojiOriginalKey,
  emojiStillKey,
  badImage,
  MAX_EMOJI_FILE_SIZE_MIB,
  normalizeEmojiName,
} from '../domain/custom-emoji';
import { isAdminRole } from '../domain/roles';
import { ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { inGroup, type Caller } from '../access/viewer';
import { emojiCodeForName } from '../markdown/emoji';
import { deactivateRealmEmoji, getActiveEmojiByName, insertRealmEmoji } from '../queries/custom-emoji';
import { listRealmEmoji } from '../queries/register';
import type { UserRow } from '../queries/rows';
import { listActiveUserIds } from '../queries/users';
import { toApiRealmEmojiMap } from '../serializers/custom-emoji';
import type { FileStore } from '../storage/files';
import { resizeEmoji } from './emoji-images';
import { checkUploadWithinQuota } from './upload-quota';
import type { IncomingFile } from './uploads';

type RealmEmojiEvent = EventBody<Schema<'RealmEmojiEvent'>>;

const nameTaken = () => new ApiError('A custom emoji with this name already exists.');

/** GET /realm/emoji: every custom emoji of the caller's organization (the list is public to its users, as in Zulip). */
export async function listCustomEmoji(ctx: AppContext, user: UserRow): Promise<Data<'get-custom-emoji'>> {
  return { emoji: toApiRealmEmojiMap(user.realm_id, await listRealmEmoji(ctx.db, user.realm_id)) };
}

/**
 * POST /realm/emoji/{emoji_name}, Zulip's checks in Zulip's order: the
 * name, the permission, a name in use, one file, a built-in name (for
 * administrators only), the size, the type; then the image is shrunk and
 * stored (the original beside it, as Zulip keeps it) before the row is
 * written, so no client ever sees an emoji without its image.
 */
export async function doUploadCustomEmoji(
  ctx: AppContext,
  caller: Caller,
  rawName: string,
  files: readonly IncomingFile[],
): Promise<Data<'upload-custom-emoji'>> {
  const { user, realm } = caller;
  const name = normalizeEmojiName(rawName);
  checkValidEmojiName(name);
  if (!inGroup(caller, realm.can_add_custom_emoji_group)) throw new ApiError('Insufficient permission');
  if (await getActiveEmojiByName(ctx.db, realm.id, name)) throw nameTaken();
  // Several file parts are refused while the body streams in (src/http/body.ts), in the upload endpoint's words.
  if (files.length !== 1) throw new ApiError('You must upload exactly one file.');
  if (emojiCodeForName(name) !== undefined && !isAdminRole(user.role))
    throw new ApiError('Only administrators can override default emoji.');
  const file = files[0]!;
  if (file.size > MAX_EMOJI_FILE_SIZE_MIB * 1024 * 1024) {
    throw new ApiError(`Uploaded file is larger than the allowed limit of ${MAX_EMOJI_FILE_SIZE_MIB} MiB`);
  }
  // As Zulip, the declared type decides the format (and the extension); the bytes must then decode as an image.
  const ext = EMOJI_IMAGE_TYPES.get(file.mimetype.toLowerCase());
  if (!ext) throw badImage('Invalid image format');
  await checkUploadWithinQuota(ctx.db, realm, file.size);

  const fileName = `${randomBytes(8).toString('hex')}.${ext}`;
  const keys = [emojiOriginalKey(realm.id, fileName), emojiKey(realm.id, fileName), emojiStillKey(realm.id, fileName)];
  await file.file.commit(keys[0]!);
  try {
    const original = await readAll(ctx.storage, keys[0]!);
    const images = await ctx.images.run(user.id, (timeoutSeconds) => resizeEmoji(original, ext, timeoutSeconds));
    await writeBytes(ctx.storage, keys[1]!, images.image);
    if (images.still) await writeBytes(ctx.storage, keys[2]!, images.still);
    await inTransaction(ctx.db, async (tx) => {
      // Checked again inside the transaction: two uploads of one name may race.
      if (await getActiveEmojiByName(tx.trx, realm.id, name)) throw nameTaken();
      await insertRealmEmoji(tx.trx, {
        realm_id: realm.id,
        name,
        file_name: fileName,
        author_id: user.id,
        is_animated: images.still !== null,
      });
      await queueRealmEmojiEvent(ctx, tx, realm.id);
    });
  } catch (err) {
    await ctx.storage.remove(keys);
    throw err;
  }
  return {};
}

/**
 * DELETE /realm/emoji/{emoji_name}: the active emoji of that name is
 * deactivated, never deleted (messages and reactions keep showing it), by
 * an administrator or its author (Zulip's check_remove_custom_emoji).
 */
export async function doDeactivateCustomEmoji(ctx: AppContext, user: UserRow, name: string): Promise<Data<'deactivate-custom-emoji'>> {
  await inTransaction(ctx.db, async (tx) => {
    const emoji = await getActiveEmojiByName(tx.trx, user.realm_id, name);
    if (!emoji) throw new ApiError(`Emoji '${name}' does not exist`);
    if (!isAdminRole(user.role) && emoji.author_id !== user.id) throw new ApiError('Must be an organization administrator or emoji author');
    await deactivateRealmEmoji(tx.trx, emoji.id);
    await queueRealmEmojiEvent(ctx, tx, user.realm_id);
  });
  return {};
}

/** Zulip's notify_realm_emoji: the whole map, active and deactivated, to the organization's active users. */
async function queueRealmEmojiEvent(ctx: AppContext, tx: Tx, realmId: number): Promise<void> {
  const [rows, userIds] = await Promise.all([listRealmEmoji(tx.trx, realmId), listActiveUserIds(tx.trx, realmId)]);
  const event: RealmEmojiEvent = { type: 'realm_emoji', op: 'update', realm_emoji: toApiRealmEmojiMap(realmId, rows) };
  tx.afterCommit(() => ctx.bus.publish({ event, userIds }));
}

async function readAll(store: FileStore, key: string): Promise<Buffer> {
  const stream = await store.read(key);
  // Not an ApiError: a stored file gone missing is the server's fault, a 500 that is logged.
  if (!stream) throw new Error(`stored emoji file missing: ${key}`);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function writeBytes(store: FileStore, key: string, bytes: Buffer): Promise<void> {
  const file = await store.create();
  file.stream.end(bytes);
  await file.commit(key);
}
