import type { Knex } from 'knex';
import { invalidates } from '../db/invalidations';

type Q = Knex | Knex.Transaction;

/**
 * Deletes an anonymous group (one backing a {direct_members,
 * direct_subgroups} setting value) once no setting holds it: Zulip deletes
 * the old one when a realm setting changes. Named groups are never touched.
 */
export async function deleteAnonymousGroup(q: Q, realmId: number, groupId: number): Promise<void> {
  const group = await q('user_groups').where({ id: groupId, realm_id: realmId }).whereNull('name').first('id');
  if (!group) return;
  await q('group_members').where({ group_id: groupId }).delete();
  await q('group_subgroups').where({ supergroup_id: groupId }).delete();
  await q('user_groups').where({ id: groupId }).delete();
  // Its members' sets of groups change: coarse, as for any change of nesting.
  invalidates(q, { kind: 'realm', realmId });
}
