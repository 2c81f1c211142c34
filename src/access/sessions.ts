import type { Knex } from 'knex';
import { listUserSessions, type SessionRow } from '../queries/sessions';

/** GET /users/me/sessions: the caller's sessions that have not expired, the newest first. */
export async function getOwnSessions(db: Knex, userId: number, now: number): Promise<SessionRow[]> {
  return listUserSessions(db, userId, now);
}
