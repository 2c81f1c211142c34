import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { nowSeconds } from './ids';

type Q = Knex | Knex.Transaction;

/** The unique key of a token (migration 011): tokens may be longer than an index can hold. */
const tokenKey = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** Stores a legacy push token; one the user already registered for this kind is left as it is. */
export async function insertPushToken(q: Q, row: { userId: number; kind: string; token: string; iosAppId: string | null }): Promise<void> {
  await q('push_tokens')
    .insert({
      user_id: row.userId,
      kind: row.kind,
      token: row.token,
      token_key: tokenKey(row.token),
      ios_app_id: row.iosAppId,
      date_created: nowSeconds(),
    })
    .onConflict(['user_id', 'kind', 'token_key'])
    .ignore();
}

/** Deletes the user's token of this kind; the number of rows deleted. */
export async function deletePushToken(q: Q, userId: number, kind: string, token: string): Promise<number> {
  return q('push_tokens')
    .where({ user_id: userId, kind, token_key: tokenKey(token) })
    .delete();
}
