import type { AppContext } from '../context';
import type { Data, Params } from '../contract';
import { checkApnsToken, checkFcmToken, checkHumanUser, PushTokenKind } from '../domain/push-tokens';
import { ApiError } from '../errors';
import { deletePushToken, insertPushToken } from '../queries/push-tokens';
import type { UserRow } from '../queries/rows';

/*
 * Legacy (unencrypted) push registration: APNs tokens of iOS devices and FCM
 * tokens of Android ones. Zulip stores these tokens locally whether or not a
 * push service is configured, and only forwards them when one is; so these
 * endpoints work without one and never answer PUSH_SERVICE_NOT_CONFIGURED
 * (that is the encrypted registration's error). The apps still send them
 * where they cannot use end-to-end encrypted push, and remove them at logout
 * and before switching to it. Parley's relay speaks only the encrypted
 * protocol, so nothing is ever sent to a legacy token; an encrypted
 * registration naming the same token removes it (src/actions/push-register.ts).
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
  await removeToken(ctx, user, PushTokenKind.APNS, p.token);
  return {};
}

/** POST /users/me/android_gcm_reg_id. Registering a token again changes nothing. */
export async function doAddFcmToken(ctx: AppContext, user: UserRow, p: Params<'add-fcm-token'>): Promise<Data<'add-fcm-token'>> {
  checkHumanUser(user);
  checkFcmToken(p.token);
  await insertPushToken(ctx.db, { userId: user.id, kind: PushTokenKind.FCM, token: p.token, iosAppId: null });
  return {};
}

/** DELETE /users/me/android_gcm_reg_id: only the caller's own token. */
export async function doRemoveFcmToken(ctx: AppContext, user: UserRow, p: Params<'remove-fcm-token'>): Promise<Data<'remove-fcm-token'>> {
  checkHumanUser(user);
  checkFcmToken(p.token);
  await removeToken(ctx, user, PushTokenKind.FCM, p.token);
  return {};
}

async function removeToken(ctx: AppContext, user: UserRow, kind: string, token: string): Promise<void> {
  if ((await deletePushToken(ctx.db, user.id, kind, token)) === 0) throw new ApiError('Token does not exist');
}
