import type { Knex } from 'knex';
import { mapBools, UserRow } from './rows';

/** Users with this address in any organization, with their organization's state (one indexed lookup). */
export async function findUsersForLogin(
  db: Knex,
  email: string,
): Promise<Array<UserRow & { realm_deactivated: boolean; realm_string_id: string }>> {
  const rows = await db('users as u')
    .join('realms as r', 'r.id', 'u.realm_id')
    // Log in with the real address or with the API email (a user<id>@host placeholder when hidden).
    .where((b) => b.where('u.email_key', email.trim().toLowerCase()).orWhere('u.email', email.trim()))
    .select('u.*', 'r.deactivated as realm_deactivated', 'r.string_id as realm_string_id');
  return rows.map((r: Record<string, unknown>) => {
    const user = mapBools<UserRow & { realm_deactivated: boolean; realm_string_id: string }>(r);
    user.realm_deactivated = Boolean(r.realm_deactivated);
    return user;
  });
}
