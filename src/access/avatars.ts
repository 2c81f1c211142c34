import type { AppContext } from '../context';
import { getUserByApiEmail, getUserInRealm } from '../queries/users';
import { fullAvatarUrl, gravatarUrlOf } from '../serializers/users';
import { findInaccessibleUsers } from './user-access';
import { inGroup, type Caller } from './viewer';

/**
 * GET /avatar/{user_id_or_email}: where the avatar of that user (by ID when
 * the string is a number, by API email otherwise) is. A string naming nobody
 * in the organization gets the Gravatar URL of the string itself at version
 * 1, as Zulip does for an address it does not know; so does a user the
 * viewer may not know about (Zulip points those at a generic image Parley
 * does not serve), so that the answer never tells whether the user exists.
 * The request's query string is kept on the target, as Zulip.
 */
export async function getAvatarRedirect(
  ctx: AppContext,
  viewer: Caller,
  userIdOrEmail: string,
  medium: boolean,
  query: string,
): Promise<string> {
  const realmId = viewer.user.realm_id;
  const target = /^[0-9]{1,10}$/.test(userIdOrEmail)
    ? await getUserInRealm(ctx.db, realmId, Number(userIdOrEmail))
    : await getUserByApiEmail(ctx.db, realmId, userIdOrEmail);
  let url: string;
  if (target && !(await isHidden(ctx, viewer, target))) url = fullAvatarUrl(target, medium);
  else url = gravatarUrlOf(userIdOrEmail, 1, medium);
  return query ? `${url}${url.includes('?') ? '&' : '?'}${query}` : url;
}

async function isHidden(ctx: AppContext, viewer: Caller, target: { id: number; is_bot: boolean }): Promise<boolean> {
  const realm = viewer.realm;
  const mayAccessAll = inGroup(viewer, realm.can_access_all_users_group);
  return (await findInaccessibleUsers(ctx.db, viewer, [target], mayAccessAll)).size > 0;
}
