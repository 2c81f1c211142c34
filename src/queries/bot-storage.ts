import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { dialectOf } from '../db/connection';
import { inChunks, MAX_ROWS_PER_INSERT } from './ids';

type Q = Knex | Knex.Transaction;

/*
 * A bot's key-value store (Zulip's BotStorageData). A key is any text, so a
 * row is found by `key_hash`, the SHA-256 of the key, unique per bot; keys
 * compare exactly (case and all), as in Zulip. Each row carries its `size`
 * (src/domain/bot-storage.ts entrySize), which the storage limit adds up.
 */

/** The hash a key is stored and looked up by. */
export const keyHash = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** One entry as it is written: the key, its value and its size in characters. */
export interface BotStorageEntry {
  key: string;
  value: string;
  size: number;
}

/**
 * Locks the bot's user row until the transaction ends on MySQL, so that two
 * PUTs from one bot add up its storage and write one after the other (the
 * second sees the first's entries, and the limit holds for both together);
 * SQLite's one writer already serialises them.
 */
export async function lockBotStorage(trx: Knex.Transaction, userId: number): Promise<void> {
  if (dialectOf(trx) === 'mysql') await trx('users').where({ id: userId }).forUpdate().first('id');
}

/** The size of the bot's whole storage, in characters. */
export async function getBotStorageSize(q: Q, userId: number): Promise<number> {
  const row = await q('bot_storage').where({ user_id: userId }).sum({ n: 'size' }).first();
  return Number(row?.n ?? 0);
}

/** The sizes of the entries these keys have now (keys the bot does not store are absent). */
export async function listBotStorageSizes(q: Q, userId: number, keys: readonly string[]): Promise<Map<string, number>> {
  const rows = await inChunks(keys.map(keyHash), (hashes) =>
    q('bot_storage').where({ user_id: userId }).whereIn('key_hash', hashes).select('key', 'size'),
  );
  return new Map(rows.map((r) => [String(r.key), Number(r.size)]));
}

/** The bot's entries for these keys, or all of them without keys; a map of key to value. */
export async function listBotStorage(q: Q, userId: number, keys?: readonly string[]): Promise<Map<string, string>> {
  const rows: Array<{ key: string; value: string }> = keys
    ? await inChunks(keys.map(keyHash), (hashes) =>
        q('bot_storage').where({ user_id: userId }).whereIn('key_hash', hashes).select('key', 'value'),
      )
    : await q('bot_storage').where({ user_id: userId }).orderBy('key_hash').select('key', 'value');
  return new Map(rows.map((r) => [String(r.key), String(r.value)]));
}

/** Writes these entries: new keys are added, stored ones get the new value and size. */
export async function upsertBotStorage(q: Q, userId: number, entries: readonly BotStorageEntry[]): Promise<void> {
  for (let i = 0; i < entries.length; i += MAX_ROWS_PER_INSERT) {
    await q('bot_storage')
      .insert(entries.slice(i, i + MAX_ROWS_PER_INSERT).map((e) => ({ user_id: userId, key_hash: keyHash(e.key), ...e })))
      .onConflict(['user_id', 'key_hash'])
      .merge(['value', 'size']);
  }
}

/** Deletes the entries of these keys, or every entry without keys; how many were deleted. */
export async function deleteBotStorage(q: Q, userId: number, keys?: readonly string[]): Promise<number> {
  if (!keys) return q('bot_storage').where({ user_id: userId }).del();
  const counts = await inChunks(keys.map(keyHash), async (hashes) => [
    await q('bot_storage').where({ user_id: userId }).whereIn('key_hash', hashes).del(),
  ]);
  return counts.reduce((a, b) => a + b, 0);
}
