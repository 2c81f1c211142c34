import type { Knex } from 'knex';
import { ApiError } from '../errors';
import { getRealmOfUser } from '../queries/realms';
import { listUserIdsSharingRecipients } from '../queries/register';
import type { UserRow } from '../queries/rows';
import { inGroup, Viewer } from './viewer';

/**
 * Users outside can_access_all_users_group (guests, when an organization
 * limits them) may only address people they share a channel or a
 * conversation with, and bots; Zulip's message for the rest.
 */
export async function checkCanAccessUsers(db: Knex | Knex.Transaction, viewer: Viewer, users: UserRow[]): Promise<void> {
  const realm = await getRealmOfUser(db, viewer.user);
  if (inGroup(viewer, realm?.can_access_all_users_group as number | null)) return;
  const near = new Set<number>([viewer.user.id, ...(await listUserIdsSharingRecipients(db, viewer.user.id))]);
  if (users.some((u) => !u.is_bot && !near.has(u.id))) {
    throw new ApiError('You do not have permission to access some of the recipients.');
  }
}
