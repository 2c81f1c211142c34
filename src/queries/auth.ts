import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { viewerGroupsCte, viewerSubscriptionsFrom } from './groups';
import { mapBools, RealmRow, rawRows, UserRow } from './rows';

export type LoginCandidate = UserRow & {
  realm_deactivated: boolean;
  realm_string_id: string;
  /** Whether an organization has the request host's subdomain, has the root (empty) subdomain; how many there are. */
  host_realm_exists: boolean;
  root_realm_exists: boolean;
  realm_count: number;
};

/** The account an address names in an organization: its real address (any case) or its API email (a user<id>@host placeholder when hidden). */
export async function getUserForLogin(db: Knex, realmId: number, email: string): Promise<UserRow | undefined> {
  const row = await db('users')
    .where('realm_id', realmId)
    .where((b) => b.where('email_key', email.trim().toLowerCase()).orWhere('email', email.trim()))
    .first();
  return row ? mapBools<UserRow>(row) : undefined;
}

/** The realms table's columns, read once per database handle (the API-key lookup selects them by name). */
const realmColumns = new WeakMap<Knex, Promise<string[]>>();
function columnsOfRealms(db: Knex): Promise<string[]> {
  let cols = realmColumns.get(db);
  if (!cols) {
    cols = db('realms')
      .columnInfo()
      .then((info) => Object.keys(info));
    cols.catch(() => realmColumns.delete(db));
    realmColumns.set(db, cols);
  }
  return cols;
}

/** A row of the API-key lookup: the user's columns, the organization's prefixed, and the counts and lists beside them. */
type LookupRow = TableRow<'users'> & { [K in keyof TableRow<'realms'> as `realm__${K}`]: TableRow<'realms'>[K] } & {
  host_realm_exists: number;
  root_realm_exists: number;
  realm_count: number;
  /** With memberships: group_concat's lists of ids (NULL: none). */
  viewer_groups?: string | number | null;
  viewer_subscriptions?: string | number | null;
};

const KEY = '\u0000api-key';
const HOST = '\u0000host-label';

/**
 * The lookup's SQL, compiled once per database handle and shape (knex spent
 * about 0.08 ms of CPU per request building its 70 aliased columns); the key
 * and host label are placed by recording where two marker values landed
 * among the bindings.
 */
const compiledLookups = new WeakMap<Knex, Map<boolean, Promise<{ sql: string; slots: string[] }>>>();
function compiledLookup(db: Knex, withMemberships: boolean): Promise<{ sql: string; slots: string[] }> {
  let byShape = compiledLookups.get(db);
  if (!byShape) compiledLookups.set(db, (byShape = new Map()));
  let compiled = byShape.get(withMemberships);
  if (!compiled) {
    compiled = columnsOfRealms(db).then((cols) => {
      const native = lookupQuery(db, cols, withMemberships).toSQL().toNative();
      const slots = native.bindings.map((b) => {
        if (b !== KEY && b !== HOST) throw new Error('unexpected binding in the API-key lookup');
        return b as string;
      });
      return { sql: native.sql, slots };
    });
    compiled.catch(() => byShape!.delete(withMemberships));
    byShape.set(withMemberships, compiled);
  }
  return compiled;
}

function lookupQuery(db: Knex, cols: string[], withMemberships: boolean): Knex.QueryBuilder {
  const qb = db('users as u')
    .join('realms as r', 'r.id', 'u.realm_id')
    .where('u.api_key', KEY)
    .select(
      'u.*',
      ...cols.map((c) => `r.${c} as realm__${c}`),
      db('realms').count('*').where('string_id', HOST).as('host_realm_exists'),
      db.raw("(SELECT count(*) FROM realms WHERE string_id = '') as root_realm_exists"),
      db.raw('(SELECT count(*) FROM realms) as realm_count'),
    );
  if (withMemberships) {
    // The viewer's groups (recursively) and subscribed channels, as
    // getViewerMemberships reads them, in the same round trip.
    qb.select(
      db.raw(`(${viewerGroupsCte('(SELECT id FROM users WHERE api_key = ?)')} SELECT group_concat(id) FROM g) as viewer_groups`, [KEY]),
      db.raw(`(SELECT group_concat(s.recipient_id) ${viewerSubscriptionsFrom('u.id', 'u.realm_id')}) as viewer_subscriptions`),
    );
  }
  return qb;
}

export interface ApiKeyCandidate {
  user: Omit<LoginCandidate, 'realm_deactivated'>;
  realm: RealmRow;
  /** With `withMemberships`: what loadViewer would read (null if not asked). */
  memberships: { groups: Set<number>; subscribedRecipients: Set<number> } | null;
}

/**
 * The account holding this API key, with its whole organization row (so the
 * request does not fetch it again) and what the host's subdomain addresses —
 * one indexed statement. Zulip also finds API callers by key and then
 * compares the address.
 */
export async function findUserByApiKey(
  db: Knex,
  apiKey: string,
  hostLabel: string,
  withMemberships = false,
): Promise<ApiKeyCandidate | undefined> {
  const statement = await compiledLookup(db, withMemberships);
  const result = await db.raw(
    statement.sql,
    statement.slots.map((slot) => (slot === KEY ? apiKey : hostLabel)),
  );
  const rows = rawRows<LookupRow>(result);
  // The stored key exactly (on MySQL the column compares case-insensitively before migration 004's collation).
  const row = rows.find((r) => r.api_key === apiKey);
  if (!row) return undefined;
  // Split into two fresh objects built by Object.fromEntries: deleting keys, or
  // adding dozens one by one by computed name, leaves an object in V8's slow
  // dictionary mode (copying such a user row took 11 µs against 0.1 µs, measured).
  const entries = Object.entries(row);
  const realm = Object.fromEntries(entries.filter(([k]) => k.startsWith('realm__')).map(([k, v]) => [k.slice(7), v]));
  const userFields = Object.fromEntries(entries.filter(([k]) => !k.startsWith('realm__') && !EXTRA_COLUMNS.has(k)));
  const user = mapBools<ApiKeyCandidate['user']>(userFields);
  const realmRow = mapBools<RealmRow>(realm);
  user.realm_string_id = realmRow.string_id;
  user.host_realm_exists = Number(row.host_realm_exists) > 0;
  user.root_realm_exists = Number(row.root_realm_exists) > 0;
  user.realm_count = Number(row.realm_count);
  return { user, realm: realmRow, memberships: withMemberships ? parseMemberships(row) : null };
}

const EXTRA_COLUMNS = new Set(['host_realm_exists', 'root_realm_exists', 'realm_count', 'viewer_groups', 'viewer_subscriptions']);

function parseMemberships(row: LookupRow): ApiKeyCandidate['memberships'] {
  // Whole lists: MySQL sessions raise group_concat_max_len (src/db/connection.ts); SQLite has no limit.
  const lists = [row.viewer_groups, row.viewer_subscriptions].map((v) => (v === null || v === undefined ? '' : String(v)));
  const [groups, subscribedRecipients] = lists.map((l) => new Set(l ? l.split(',').map(Number) : []));
  return { groups: groups!, subscribedRecipients: subscribedRecipients! };
}
