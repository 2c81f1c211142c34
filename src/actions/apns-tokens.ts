import type { AppContext } from '../context';
import type { Data, Params } from '../contract';
import { checkApnsToken, checkHumanUser, PushTokenKind } from '../domain/push-tokens';
import { ApiError } from '../errors';
import { deletePushToken, insertPushToken } from '../queries/push-tokens';
import type { UserRow } from '../queries/rows';

/*
 * Legacy (unencrypted) APNs registration. Zulip stores these tokens locally
 * whether or not a push service is configured, and only forwards them when
 * one is; so these endpoints work without one and never answer
 * PUSH_SERVICE_NOT_CONFIGURED (that is the encrypted registration's error).
 */

/** POST /users/me/apns_device_token. Registering a token again changes nothing. */
export async function doAddApnsToken(ctx: AppContext, user: UserRow, p: Params<'add-apns-token'>): Promise<Data<'add-apns-token'>> {
  checkHumanUser(user);
  checkApnsToken(p.token);
  await insertPushToken(ctx.db, { userId: user.id, kind: PushTokenKind.APNS, token: p.token, iosAppId: p.appid });
  return {};
}

/** DELETE /users/me/apns_device_token: only the caller's own token. */
export async function doRemoveApnsToken(
  ctx: AppContext,
  user: UserRow,
  p: Params<'remove-apns-token'>,
): Promise<Data<'remove-apns-token'>> {
  checkHumanUser(user);
  checkApnsToken(p.token);
  if ((await deletePushToken(ctx.db, user.id, PushTokenKind.APNS, p.token)) === 0) throw new ApiError('Token does not exist');
  return {};
}
