import type { Data, Params } from '../contract';
import type { AppContext } from '../context';
import { verifyPassword } from '../domain/secrets';
import { isValidEmail } from '../domain/users';
import { ApiError, type CodeWithStatus } from '../errors';
import type { RateLimitNotes } from '../domain/rate-limits';
import { getLoginAtAddressedRealm } from '../access/addressed-realm';
import { inTransaction } from '../db/transaction';
import { nowSeconds } from '../queries/ids';
import type { UserRow } from '../queries/rows';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { recordFirstLogin } from '../queries/users';
import { isoFromSeconds, toApiCredentials, toApiRealmUserUpdateEvent } from '../serializers/users';

// Unlike authenticated endpoints, these 401s carry a specific code and no Basic challenge.
const unauthorized = (msg: string, code: CodeWithStatus<401>) => new ApiError(msg, code, 401);

/**
 * POST /fetch_api_key: email + password → the user's API key. A wrong
 * address and a wrong password get the same answer, in the same time (one
 * scrypt run either way, ADR 0004): what does not need the password is
 * decided from the organization alone, and the account's state (deactivated)
 * is only revealed to someone who knows the password.
 *
 * Every attempt counts against its username's limit before the password is
 * looked at, and a success clears the count, as Zulip's authentication
 * backends do: after 5 failures in 30 minutes even the right password is
 * refused with 429 until the window ends (and concurrent guesses cannot
 * slip past the count).
 */
export async function doFetchApiKey(
  ctx: AppContext,
  { username, password }: Params<'fetch-api-key'>,
  host: string | undefined,
  limits: RateLimitNotes,
): Promise<Data<'fetch-api-key'>> {
  const key = username.trim().toLowerCase();
  if (!isValidEmail(key)) throw new ApiError('Enter a valid email address.');
  await ctx.rateLimits.consume('authByUsername', key, limits);
  const { realm, user } = await getLoginAtAddressedRealm(ctx.db, username, host, ctx.config.externalUrl);
  if (realm?.deactivated) throw unauthorized('This organization has been deactivated', 'REALM_DEACTIVATED');
  if (realm && !realm.password_auth_enabled) {
    throw unauthorized('Password authentication is disabled in this organization', 'PASSWORD_AUTH_DISABLED');
  }
  const passwordMatches = await verifyPassword(password, user?.password_hash);
  if (!user || !passwordMatches) throw unauthorized('Your username or password is incorrect', 'AUTHENTICATION_FAILED');
  if (!user.is_active) throw unauthorized('Account is deactivated', 'USER_DEACTIVATED');
  await ctx.rateLimits.reset('authByUsername', key);
  if (user.awaiting_first_login) await doFirstLogin(ctx, user);
  return toApiCredentials(user);
}

/**
 * The first login of an account made through POST /users (Zulip's
 * tos_version TOS_VERSION_BEFORE_FIRST_LOGIN): from feature level 475 its
 * date_joined, the creation time until now, becomes the login time, and
 * everyone who may know the user gets a realm_user update carrying the new
 * date_joined. Zulip's own first login is its web app's; Parley's login is
 * POST /fetch_api_key, which every client with a password goes through.
 */
async function doFirstLogin(ctx: AppContext, user: UserRow): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    const now = nowSeconds();
    if (!(await recordFirstLogin(tx.trx, user.id, now))) return;
    const audience = await listUsersWhoMayAccess(tx.trx, user.realm_id, user.id, user.is_bot);
    const event = toApiRealmUserUpdateEvent({ user_id: user.id, date_joined: isoFromSeconds(now) });
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: audience }));
  });
}
