import type { Knex } from 'knex';
import { mapBools, RealmRow, UserRow } from './rows';

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

/** The realms table's columns, read once per database handle (the API-key lookup selects them by name). */
const realmColumns = new WeakMap<Knex, Promise<string[]>>();
function columnsOfRealms(db: Knex): Promise<string[]> {
  let cols = realmColumns.get(db);
  if (!cols) {
    cols = db('realms').columnInfo().then((info) => Object.keys(info));
    cols.catch(() => realmColumns.delete(db));
    realmColumns.set(db, cols);
  }
  return cols;
}

export interface ApiKeyCandidate {
  user: Omit<LoginCandidate, 'realm_deactivated'>;
  realm: RealmRow;
}

/**
 * The account holding this API key, with its whole organization row (so the
 * request does not fetch it again) and what the host's subdomain addresses —
 * one indexed statement. Zulip also finds API callers by key and then
 * compares the address.
 */
export async function findUserByApiKey(db: Knex, apiKey: string, hostLabel: string): Promise<ApiKeyCandidate | undefined> {
  const cols = await columnsOfRealms(db);
  const row: Record<string, unknown> | undefined = await db('users as u')
    .join('realms as r', 'r.id', 'u.realm_id')
    .where('u.api_key', apiKey)
    .select(
      'u.*',
      ...cols.map((c) => `r.${c} as realm__${c}`),
      db('realms').count('*').where('string_id', hostLabel).as('host_realm_exists'),
      db('realms').count('*').where('string_id', '').as('root_realm_exists'),
      db('realms').count('*').as('realm_count'),
    )
    .first();
  if (!row) return undefined;
  const realm: Record<string, unknown> = {};
  for (const c of cols) {
    realm[c] = row[`realm__${c}`];
    delete row[`realm__${c}`];
  }
  const host = { host: Number(row.host_realm_exists) > 0, root: Number(row.root_realm_exists) > 0, count: Number(row.realm_count) };
  delete row.host_realm_exists;
  delete row.root_realm_exists;
  delete row.realm_count;
  const user = mapBools<ApiKeyCandidate['user']>(row);
  const realmRow = mapBools<RealmRow>(realm);
  user.realm_string_id = realmRow.string_id;
  user.host_realm_exists = host.host;
  user.root_realm_exists = host.root;
  user.realm_count = host.count;
  return { user, realm: realmRow };
}
