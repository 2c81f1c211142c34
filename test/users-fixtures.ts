/* Helpers shared by the users, user-groups and realm-defaults suites. */
import { doCreateRealm } from '../src/actions/realms';
import { createUserInTx, doDeactivateUser } from '../src/actions/users';
import type { Delivery } from '../src/events/bus';
import { inTransaction } from '../src/db/transaction';
import { Role } from '../src/domain/roles';
import type { UserRow } from '../src/queries/rows';
import { getUserById } from '../src/queries/users';
import type { ApiResponse, CastName, TestServer } from './support/server';

export const CAST_NAMES: CastName[] = ['owner', 'admin', 'moderator', 'member', 'guest', 'bot', 'deactivated'];

let serial = 0;

/** A new account of the test realm (unique email), optionally deactivated at once. */
export async function freshUser(
  t: TestServer,
  opts: { role?: number; isBot?: boolean; botOwnerId?: number; deactivated?: boolean; name?: string } = {},
): Promise<UserRow> {
  const n = ++serial;
  const user = await inTransaction(t.ctx.db, (tx) =>
    createUserInTx(tx, null, {
      realmId: t.realmId,
      email: `fresh${n}-${Date.now().toString(36)}@example.com`,
      fullName: opts.name ?? `Fresh Person ${n}`,
      role: opts.role ?? Role.MEMBER,
      isBot: opts.isBot,
      botType: opts.isBot ? 1 : null,
      botOwnerId: opts.botOwnerId ?? null,
    }),
  );
  if (opts.deactivated) await doDeactivateUser(t.ctx, user.id);
  return (await getUserById(t.ctx.db, user.id))!;
}

/** Everything the users endpoints may write, to assert that a refused request changed nothing. */
export async function snapshot(t: TestServer): Promise<string> {
  const db = t.ctx.db;
  const [users, members, values, defaults, subs] = await Promise.all([
    db('users').orderBy('id').select('id', 'email', 'delivery_email', 'email_key', 'full_name', 'role', 'is_active', 'api_key', 'settings'),
    db('group_members').orderBy(['group_id', 'user_id']).select('group_id', 'user_id'),
    db('custom_profile_values').orderBy(['user_id', 'field_id']).select('user_id', 'field_id', 'value', 'rendered_value'),
    db('realm_user_defaults').orderBy('realm_id').select('realm_id', 'settings'),
    db('subscriptions').orderBy('id').select('id', 'active', 'is_user_active'),
  ]);
  return JSON.stringify({ users, members, values, defaults, subs });
}

/** The deliveries the bus saw while `work` ran. */
export async function captureEvents<T>(t: TestServer, work: () => Promise<T>): Promise<{ result: T; deliveries: Delivery[] }> {
  const deliveries: Delivery[] = [];
  const off = t.ctx.bus.subscribe((d) => deliveries.push(d));
  try {
    return { result: await work(), deliveries };
  } finally {
    off();
  }
}

/** A custom profile field of the test realm (there is no API to create one yet). */
export async function createProfileField(t: TestServer, name: string, fieldType: number, fieldData: unknown = ''): Promise<number> {
  const [id] = await t.ctx.db('custom_profile_fields').insert({
    realm_id: t.realmId,
    name,
    field_type: fieldType,
    field_data: typeof fieldData === 'string' ? fieldData : JSON.stringify(fieldData),
  });
  return Number(id);
}

/** Names of the system groups a user is a direct member of. */
export async function systemGroupsOf(t: TestServer, userId: number): Promise<string[]> {
  const names: string[] = await t.ctx
    .db('group_members as gm')
    .join('user_groups as g', 'g.id', 'gm.group_id')
    .where({ 'gm.user_id': userId, 'g.is_system_group': true })
    .pluck('g.name');
  return names.sort();
}

export async function systemGroupId(t: TestServer, name: string): Promise<number> {
  return Number((await t.ctx.db('user_groups').where({ realm_id: t.realmId, name }).first('id')).id);
}

/** A refused request: exactly this Zulip error, nothing written, nothing published. */
export async function expectRefusal(t: TestServer, request: () => Promise<ApiResponse>, msg: string, code = 'BAD_REQUEST'): Promise<void> {
  const before = await snapshot(t);
  const { result: res, deliveries } = await captureEvents(t, request);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ result: 'error', msg, code });
  expect(await snapshot(t)).toBe(before);
  expect(deliveries).toEqual([]);
}

/** A user of another organization (a new one, named by `stringId`). */
export async function userOfAnotherRealm(t: TestServer, stringId: string): Promise<UserRow> {
  const realmId = await doCreateRealm(t.ctx.db, { stringId, name: 'Elsewhere' });
  return inTransaction(t.ctx.db, (tx) =>
    createUserInTx(tx, null, { realmId, email: `${stringId}@example.com`, fullName: 'Some Stranger' }),
  );
}
