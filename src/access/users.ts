import type { AppContext } from '../context';
import type { UserRow } from '../queries/rows';
import { getMaxMessageIdForUser, listProfileValues } from '../queries/users';
import { toApiOwnUser } from '../serializers/users';

/** GET /users/me: the caller's own record. */
export async function getOwnUser(ctx: AppContext, user: UserRow) {
  const [maxMessageId, values] = await Promise.all([
    getMaxMessageIdForUser(ctx.db, user.id),
    user.is_bot ? Promise.resolve([]) : listProfileValues(ctx.db, user.id),
  ]);
  const profileData: Record<string, { value: string; rendered_value?: string | null }> = {};
  for (const v of values) {
    profileData[String(v.field_id)] = v.rendered_value == null ? { value: v.value } : { value: v.value, rendered_value: v.rendered_value };
  }
  return toApiOwnUser(user, maxMessageId, profileData);
}
