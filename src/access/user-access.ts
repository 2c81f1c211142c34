import type { Knex } from 'knex';
import { ApiError } from '../errors';
import { listUserIdsSharingRecipients } from '../queries/register';
import type { UserRow } from '../queries/rows';
import { inGroup, Caller, Viewer } from './viewer';

/**
 * Of these users, the ones the viewer may not know about (Zulip's
 * get_inaccessible_user_ids): nobody for members of the realm's
 * can_access_all_users_group; for anyone else (guests, when an
 * organization limits them), everyone but themselves, bots (known to
 * all), and the people they share a channel or a conversation with.
 * One statement at most. The rule behind addressing people (below) and
 * resolving mentions (src/actions/render.ts).
 */
export async function findInaccessibleUsers(
  db: Knex | Knex.Transaction,
  viewer: Viewer,
  users: ReadonlyArray<{ id: number; is_bot: boolean }>,
  mayAccessAllUsers: boolean,
): Promise<Set<number>> {
  const people = mayAccessAllUsers ? [] : users.filter((u) => !u.is_bot && u.id !== viewer.user.id);
  if (people.length === 0) return new Set();
  const near = new Set(await listUserIdsSharingRecipients(db, viewer.user.id));
  return new Set(people.filter((u) => !near.has(u.id)).map((u) => u.id));
}

/** Users outside can_access_all_users_group may only address people they may know about; Zulip's message for the rest. */
export async function checkCanAccessUsers(db: Knex | Knex.Transaction, viewer: Caller, users: UserRow[]): Promise<void> {
  const realm = viewer.realm;
  const mayAccessAll = inGroup(viewer, realm.can_access_all_users_group);
  if ((await findInaccessibleUsers(db, viewer, users, mayAccessAll)).size > 0) {
    throw new ApiError('You do not have permission to access some of the recipients.');
  }
}
