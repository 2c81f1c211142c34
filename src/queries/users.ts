import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { invalidates } from '../db/invalidations';
import { dialectOf } from '../db/connection';
import { RecipientType } from '../domain/recipients';
import { Role } from '../domain/roles';
import { inChunks, insertOne } from './ids';
import type { ProfileValueRow } from './profile-fields';
import { mapBools, rawRows, UserRow } from './rows';

type Q = Knex | Knex.Transaction;

const toUser = (row: TableRow<'users'> | undefined) => (row ? mapBools<UserRow>(row) : undefined);

/**
 * The columns a new account is created with; the others keep the table's
 * defaults (active, not imported, avatar source and version, …) and
 * recipient_id is set once the personal recipient exists.
 */
export type NewUserRow = Pick<
  UserRow,
  | 'realm_id'
  | 'email'
  | 'delivery_email'
  | 'email_key'
  | 'full_name'
  | 'role'
  | 'is_bot'
  | 'bot_type'
  | 'bot_owner_id'
  | 'api_key'
  | 'password_hash'
  | 'can_create_users'
  | 'timezone'
  | 'date_joined'
  | 'settings'
> &
  Partial<Pick<UserRow, 'awaiting_first_login'>>;

export async function insertUser(q: Q, row: NewUserRow): Promise<number> {
  const id = await insertOne(q, 'users', row);
  invalidates(q, { kind: 'user', userIds: [id] });
  return id;
}

/** The user's personal recipient (what direct messages to them are addressed to); its id. */
export async function insertPersonalRecipient(q: Q, userId: number): Promise<number> {
  return insertOne(q, 'recipients', { type: RecipientType.PERSONAL, type_id: userId });
}

export async function getUserById(q: Q, id: number): Promise<UserRow | undefined> {
  return toUser(await q('users').where({ id }).first());
}

export async function getUserInRealm(q: Q, realmId: number, id: number): Promise<UserRow | undefined> {
  return toUser(await q('users').where({ id, realm_id: realmId }).first());
}

/** By delivery email, case-insensitively (email_key is the lower-cased address). */
export async function getUserByEmailKey(q: Q, realmId: number, emailKey: string): Promise<UserRow | undefined> {
  return toUser(await q('users').where({ realm_id: realmId, email_key: emailKey }).first());
}

/** By API email (what HTTP Basic auth carries), case-insensitively. */
export async function getUserByApiEmail(q: Q, realmId: number, email: string): Promise<UserRow | undefined> {
  const key = email.toLowerCase();
  const byKey = toUser(await q('users').where({ realm_id: realmId, email_key: key }).first());
  if (byKey && byKey.email.toLowerCase() === key) return byKey;
  // API email differs from delivery email when addresses are hidden.
  return toUser(await q('users').where({ realm_id: realmId, email }).first());
}

/**
 * The first login of an account made through the API: its date_joined
 * becomes `now` and the mark goes, in one statement that only an account
 * still marked matches, so of two logins at once only one counts. Whether
 * this call was that one.
 */
export async function recordFirstLogin(q: Q, id: number, now: number): Promise<boolean> {
  const changed = await q('users').where({ id, awaiting_first_login: true }).update({ date_joined: now, awaiting_first_login: false });
  if (changed > 0) invalidates(q, { kind: 'user', userIds: [id] });
  return changed > 0;
}

export async function updateUser(q: Q, id: number, changes: Partial<Omit<UserRow, 'id'>>): Promise<void> {
  await q('users').where({ id }).update(changes);
  invalidates(q, { kind: 'user', userIds: [id] });
}

/** The organization's users by id, or only those of `ids` (ids of other organizations or of nobody match nothing). */
export async function listRealmUsers(q: Q, realmId: number, ids?: readonly number[]): Promise<UserRow[]> {
  const query = q('users').where({ realm_id: realmId }).orderBy('id');
  if (ids) query.whereIn('id', ids);
  const rows = await query;
  return rows.map((r) => mapBools<UserRow>(r));
}

/**
 * GET /users/me's two lookups in one statement: the user's newest message id
 * (-1 without any) and their custom profile field values (a UNION ALL; the
 * max row is always there, so a user without values still gets the id).
 */
export async function getOwnUserExtras(
  q: Q,
  user: { id: number; realm_id: number },
): Promise<{ maxMessageId: number; values: ProfileValueRow[] }> {
  // Two index reads in one round trip. The form matters on MariaDB: joining the values to
  // the realm's fields (or a derived table with a semi-join) costs it a temporary table per
  // execution, ~400 µs of server CPU against ~90 µs for this. A user's values can only name
  // their own organization's fields, so the user's id alone selects them.
  const result = await q.raw(
    `SELECT 0 AS part, max(message_id) AS field_id, NULL AS value, NULL AS rendered_value FROM user_messages WHERE user_id = ?
     UNION ALL
     SELECT 1, field_id, value, rendered_value FROM custom_profile_values WHERE user_id = ?`,
    [user.id, user.id],
  );
  const rows = rawRows<{ part: unknown; field_id: unknown; value: string | null; rendered_value: string | null }>(result);
  const max = rows.find((r) => Number(r.part) === 0)?.field_id;
  return {
    maxMessageId: max === null || max === undefined ? -1 : Number(max),
    values: rows
      .filter((r) => Number(r.part) === 1)
      .map((r) => ({ user_id: user.id, field_id: Number(r.field_id), value: r.value ?? '', rendered_value: r.rendered_value }))
      .sort((a, b) => a.field_id - b.field_id),
  };
}

/** The newest message the user received (register's max_message_id); -1 when none. */
export async function getMaxMessageIdForUser(q: Q, userId: number): Promise<number> {
  const row = await q('user_messages').where({ user_id: userId }).max({ m: 'message_id' }).first();
  return row?.m == null ? -1 : Number(row.m);
}

/**
 * The organization's active human owners, locked on MySQL until the
 * transaction ends, so two concurrent demotions cannot both see a second
 * owner (SQLite serialises writers already).
 */
export async function lockActiveOwnerIds(trx: Knex.Transaction, realmId: number, ownerRole: number): Promise<number[]> {
  const query = trx('users').where({ realm_id: realmId, role: ownerRole, is_active: true, is_bot: false }).select('id');
  if (dialectOf(trx) === 'mysql') query.forUpdate();
  return (await query).map((r: { id: number }) => Number(r.id));
}

/** Every active user and bot of the organization (the audience of organization-wide events). */
export async function listActiveUserIds(q: Q, realmId: number): Promise<number[]> {
  return (await q('users').where({ realm_id: realmId, is_active: true }).orderBy('id').pluck('id')).map(Number);
}

/** Whether the organization has an active account (a bot counts) other than this user. */
export async function hasOtherActiveUser(q: Q, realmId: number, userId: number): Promise<boolean> {
  return (await q('users').where({ realm_id: realmId, is_active: true }).whereNot('id', userId).first('id')) !== undefined;
}

export async function listUsersByIds(q: Q, realmId: number, ids: number[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  const rows = await inChunks([...new Set(ids)], (slice) => q('users').where({ realm_id: realmId }).whereIn('id', slice));
  return rows.map((r) => mapBools<UserRow>(r));
}

/**
 * Users by API email, several at once (getUserByApiEmail's rule: the real
 * address in any case, or the user<id>@host placeholder of a hidden one).
 * The map is keyed by the address as given.
 */
export async function listUsersByApiEmails(q: Q, realmId: number, emails: readonly string[]): Promise<Map<string, UserRow>> {
  const unique = [...new Set(emails)];
  const keys = [...new Set(unique.map((e) => e.toLowerCase()))];
  const byKey = await inChunks(keys, (slice) => q('users').where({ realm_id: realmId }).whereIn('email_key', slice), 1000);
  const byEmail = await inChunks(unique, (slice) => q('users').where({ realm_id: realmId }).whereIn('email', slice), 1000);
  const keyed = new Map(byKey.map((r) => mapBools<UserRow>(r)).map((u) => [u.email_key, u]));
  const exact = new Map(byEmail.map((r) => mapBools<UserRow>(r)).map((u) => [u.email, u]));
  const out = new Map<string, UserRow>();
  for (const email of unique) {
    const k = keyed.get(email.toLowerCase());
    const user = k && k.email.toLowerCase() === email.toLowerCase() ? k : exact.get(email);
    if (user) out.set(email, user);
  }
  return out;
}

/** The organization's first active human owner (the demo command's owner), if any. */
export async function getFirstActiveOwner(q: Q, realmId: number): Promise<UserRow | undefined> {
  return toUser(await q('users').where({ realm_id: realmId, role: Role.OWNER, is_active: true, is_bot: false }).orderBy('id').first());
}

export async function listActiveBotIdsOwnedBy(q: Q, ownerId: number): Promise<number[]> {
  return (await q('users').where({ bot_owner_id: ownerId, is_bot: true, is_active: true }).pluck('id')).map(Number);
}

/** Activates or deactivates accounts; their subscriptions follow (is_user_active). */
export async function setUsersActive(q: Q, ids: number[], active: boolean): Promise<void> {
  if (ids.length === 0) return;
  await q('users').whereIn('id', ids).update({ is_active: active });
  await q('subscriptions').whereIn('user_id', ids).update({ is_user_active: active });
  // The channels whose active subscriber lists these accounts leave or rejoin.
  invalidates(q, { kind: 'user', userIds: ids }, { kind: 'channel', channelIds: await listChannelIdsSubscribedBy(q, ids) });
}

export async function setRealmUserDefaultsRaw(q: Q, realmId: number, settings: string): Promise<void> {
  await q('realm_user_defaults').where({ realm_id: realmId }).update({ settings });
}

/** The channels these users are active subscribers of (whose cached subscriber lists name them). */
export async function listChannelIdsSubscribedBy(q: Q, userIds: readonly number[]): Promise<number[]> {
  const ids: Array<number | string> = await q('channels as c')
    .join('subscriptions as s', 's.recipient_id', 'c.recipient_id')
    .whereIn('s.user_id', userIds)
    .where('s.active', true)
    .distinct()
    .pluck('c.id');
  return ids.map(Number);
}
