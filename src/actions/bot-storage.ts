import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { checkBotCaller, checkBotStorageSize, entrySize, keyDoesNotExist } from '../domain/bot-storage';
import {
  deleteBotStorage,
  getBotStorageSize,
  listBotStorage,
  listBotStorageSizes,
  lockBotStorage,
  upsertBotStorage,
} from '../queries/bot-storage';
import type { UserRow } from '../queries/rows';

/*
 * A bot's storage (GET, PUT and DELETE /bot_storage, Zulip's
 * zerver/views/storage.py): string keys to string values, private to the
 * bot that calls, with no events (nothing but the bot reads it).
 */

/**
 * GET /bot_storage: the values of the keys named, in their order, or the
 * whole storage when no keys (or an empty list, as Zulip's `keys or ...`)
 * are given. One key the bot does not store refuses the whole request.
 */
export async function getBotStorage(ctx: AppContext, user: UserRow, keys: readonly string[] | undefined): Promise<Record<string, string>> {
  checkBotCaller(user);
  const named = keys?.length ? keys : undefined;
  const found = await listBotStorage(ctx.db, user.id, named);
  if (!named) return Object.fromEntries(found);
  // Object.fromEntries defines own properties: a key such as __proto__ is a key like any other.
  return Object.fromEntries(
    named.map((key) => {
      const value = found.get(key);
      if (value === undefined) throw keyDoesNotExist();
      return [key, value];
    }),
  );
}

/**
 * PUT /bot_storage: sets each key to its value, adding the keys the bot does
 * not store yet. As Zulip's set_bot_storage, the limit is on the storage as
 * it would be afterwards: its size now, less the entries replaced, plus the
 * entries given. Over it, nothing is written. The bot's row is locked first
 * (lockBotStorage), so two concurrent PUTs cannot both pass the check on the
 * size before either.
 */
export async function doUpdateBotStorage(ctx: AppContext, user: UserRow, storage: Readonly<Record<string, string>>): Promise<void> {
  checkBotCaller(user);
  const entries = Object.entries(storage).map(([key, value]) => ({ key, value, size: entrySize(key, value) }));
  if (entries.length === 0) return;
  await inTransaction(ctx.db, async (tx) => {
    await lockBotStorage(tx.trx, user.id);
    const current = await getBotStorageSize(tx.trx, user.id);
    const replaced = await listBotStorageSizes(
      tx.trx,
      user.id,
      entries.map((e) => e.key),
    );
    let size = current;
    for (const e of entries) size += e.size - (replaced.get(e.key) ?? 0);
    checkBotStorageSize(size);
    await upsertBotStorage(tx.trx, user.id, entries);
  });
}

/**
 * DELETE /bot_storage: removes the keys named, or everything when no keys
 * (or an empty list) are given. If any key named is not stored, nothing is
 * removed. As in Zulip, which compares the number of entries found with the
 * number of keys named, a key named twice is refused too.
 */
export async function doRemoveBotStorage(ctx: AppContext, user: UserRow, keys: readonly string[] | undefined): Promise<void> {
  checkBotCaller(user);
  const named = keys?.length ? keys : undefined;
  await inTransaction(ctx.db, async (tx) => {
    const removed = await deleteBotStorage(tx.trx, user.id, named);
    // Thrown inside the transaction: its rollback restores what was deleted.
    if (named && removed < named.length) throw keyDoesNotExist();
  });
}
