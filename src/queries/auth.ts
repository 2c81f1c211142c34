import type { Knex } from 'knex';
import { mapBools, UserRow } from './rows';

export type LoginCandidate = UserRow & {
  realm_deactivated: boolean;
  realm_string_id: string;
  /** Whether an organization has the request host's subdomain, has the root (empty) subdomain; how many there are. */
  host_realm_exists: boolean;
  root_realm_exists: boolean;
  realm_count: number;
};

/**
 * Users with this address in any organization, with their organization's
 * state and what the host's subdomain addresses — one statement, so
 * authentication costs the same query every time.
 */
export async function findUsersForLogin(db: Knex, email: string, hostLabel: string): Promise<LoginCandidate[]> {
  const rows = await db('users as u')
    .join('realms as r', 'r.id', 'u.realm_id')
    // Log in with the real address or with the API email (a user<id>@host placeholder when hidden).
    .where((b) => b.where('u.email_key', email.trim().toLowerCase()).orWhere('u.email', email.trim()))
    .select(
      'u.*',
      'r.deactivated as realm_deactivated',
      'r.string_id as realm_string_id',
      db('realms').count('*').where('string_id', hostLabel).as('host_realm_exists'),
      db('realms').count('*').where('string_id', '').as('root_realm_exists'),
      db('realms').count('*').as('realm_count'),
    );
  return rows.map((r: Record<string, unknown>) => {
    const user = mapBools<LoginCandidate>(r);
    user.realm_deactivated = Boolean(r.realm_deactivated);
    user.host_realm_exists = Number(r.host_realm_exists) > 0;
    user.root_realm_exists = Number(r.root_realm_exists) > 0;
    user.realm_count = Number(r.realm_count);
    return user;
  });
}
