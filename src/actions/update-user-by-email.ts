import { findUserByEmail } from '../access/users';
import type { Caller } from '../access/viewer';
import type { Params } from '../contract';
import type { AppContext } from '../context';
import { realmHost } from '../domain/realm-address';
import { isAdminRole } from '../domain/roles';
import { adminRequired } from '../errors';
import { doUpdateUser } from './update-user';

/**
 * PATCH /users/{email}: PATCH /users/{id} for the user the address names.
 * As in Zulip, the caller must be an administrator before the address is
 * looked up, so it cannot be used to probe addresses.
 */
export async function doUpdateUserByEmail(ctx: AppContext, actor: Caller, changes: Params<'update-user-by-email'>): Promise<void> {
  if (!isAdminRole(actor.user.role)) throw adminRequired();
  const { email, ...rest } = changes;
  const target = await findUserByEmail(ctx.db, actor, email, realmHost(ctx.config.externalUrl, actor.realm.string_id));
  await doUpdateUser(ctx, actor.user, actor.realm, { ...rest, user_id: target.id });
}
