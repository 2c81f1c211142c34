import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { invalidates } from '../db/invalidations';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

export type SessionRow = TableRow<'sessions'>;

/** What a request's session cookie finds: the session and the API key of its user (the caller cache's key). */
export type SessionLookup = Pick<SessionRow, 'id' | 'user_id' | 'realm_id' | 'csrf_token' | 'expires_at' | 'last_active_at'> & {
  api_key: string;
};

/*
 * Sessions are cached by key hash (src/cache/sessions.ts): every delete below
 * declares a `user` invalidation of the sessions' users, which drops them from
 * every node's cache. The cached entries carry the user's API key, which a
 * `user` invalidation also covers (a regenerated key).
 */

export async function insertSession(q: Q, row: Omit<SessionRow, 'id'>): Promise<number> {
  return insertOne(q, 'sessions', row);
}

/** The session whose key has this SHA-256, with its user's API key: one indexed read per /json request. */
export async function findSessionByKeyHash(q: Q, keyHash: string): Promise<SessionLookup | undefined> {
  return q('sessions')
    .join('users', 'users.id', 'sessions.user_id')
    .where('sessions.key_hash', keyHash)
    .first(
      'sessions.id',
      'sessions.user_id',
      'sessions.realm_id',
      'sessions.csrf_token',
      'sessions.expires_at',
      'sessions.last_active_at',
      'users.api_key',
    ) as Promise<SessionLookup | undefined>;
}

/**
 * Records a session's activity, at most once a minute: the update only
 * touches a row whose last record is older than `staleBefore`, so requests
 * of the same minute on several nodes write once between them. Outside any
 * transaction, like the users' last_active_time (src/queries/activity.ts).
 */
export async function touchSession(q: Q, id: number, now: number, staleBefore: number): Promise<void> {
  await q('sessions').where({ id }).where('last_active_at', '<', staleBefore).update({ last_active_at: now });
}

/** A user's sessions still valid at `now`, the newest first. */
export async function listUserSessions(q: Q, userId: number, now: number): Promise<SessionRow[]> {
  return q('sessions').where({ user_id: userId }).where('expires_at', '>', now).orderBy('id', 'desc');
}

/** Deletes one session of this user; returns whether there was one. */
export async function deleteUserSession(q: Q, userId: number, sessionId: number): Promise<boolean> {
  const deleted = await q('sessions').where({ id: sessionId, user_id: userId }).delete();
  if (deleted > 0) invalidates(q, { kind: 'user', userIds: [userId] });
  return deleted > 0;
}

/** Deletes the session of this key hash (logout); returns its user, if there was one. */
export async function deleteSessionByKeyHash(q: Q, keyHash: string): Promise<number | undefined> {
  const row: Pick<SessionRow, 'id' | 'user_id'> | undefined = await q('sessions').where({ key_hash: keyHash }).first('id', 'user_id');
  if (!row) return undefined;
  await q('sessions').where({ id: row.id }).delete();
  invalidates(q, { kind: 'user', userIds: [row.user_id] });
  return row.user_id;
}

/** Deletes every session of these users, except `keepId` (the session changing its own password). */
export async function deleteSessionsOfUsers(q: Q, userIds: readonly number[], keepId: number | null = null): Promise<number> {
  if (userIds.length === 0) return 0;
  const query = q('sessions').whereIn('user_id', userIds);
  if (keepId !== null) void query.whereNot('id', keepId);
  const deleted = await query.delete();
  if (deleted > 0) invalidates(q, { kind: 'user', userIds: [...userIds] });
  return deleted;
}

/** Deletes a user's sessions that expired by `now` (pruned when they log in again; a cached copy is refused by its expiry). */
export async function deleteExpiredUserSessions(q: Q, userId: number, now: number): Promise<number> {
  return q('sessions').where({ user_id: userId }).where('expires_at', '<=', now).delete();
}
