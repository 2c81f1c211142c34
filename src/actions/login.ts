import type { Data, Params } from '../contract';
import type { AppContext } from '../context';
import { verifyPassword } from '../domain/secrets';
import { isValidEmail } from '../domain/users';
import { ApiError } from '../errors';
import { getUserAtAddressedRealm } from '../access/addressed-realm';
import { getPasswordAuthEnabled } from '../queries/realms';
import { toApiCredentials } from '../serializers/users';

// Unlike authenticated endpoints, these 401s carry a specific code and no Basic challenge.
const unauthorized = (msg: string, code: string) => new ApiError(msg, code, 401);

/**
 * POST /fetch_api_key: email + password → the user's API key. A wrong
 * address and a wrong password get the same answer; the account's state
 * (deactivated) is only revealed to someone who knows the password.
 */
export async function doFetchApiKey(
  ctx: AppContext,
  { username, password }: Params<'fetch-api-key'>,
  host: string | undefined,
): Promise<Data<'fetch-api-key'>> {
  const key = username.trim().toLowerCase();
  if (!isValidEmail(key)) throw new ApiError('Enter a valid email address.');
  const retryAfter = ctx.loginFailures.retryAfter(key);
  if (retryAfter > 0) {
    throw new ApiError(
      'API usage exceeded rate limit',
      'RATE_LIMIT_HIT',
      429,
      { 'retry-after': retryAfter },
      {
        'Retry-After': String(Math.ceil(retryAfter)),
      },
    );
  }
  const user = await getUserAtAddressedRealm(ctx.db, username, host);
  if (user?.realm_deactivated) throw unauthorized('This organization has been deactivated', 'REALM_DEACTIVATED');
  if (user && !(await getPasswordAuthEnabled(ctx.db, user.realm_id))) {
    throw unauthorized('Password authentication is disabled in this organization', 'PASSWORD_AUTH_DISABLED');
  }
  const ok = user !== undefined && (await verifyPassword(password, user.password_hash));
  if (!ok || !user) {
    ctx.loginFailures.fail(key);
    throw unauthorized('Your username or password is incorrect', 'AUTHENTICATION_FAILED');
  }
  if (!user.is_active) throw unauthorized('Account is deactivated', 'USER_DEACTIVATED');
  ctx.loginFailures.reset(key);
  return toApiCredentials(user);
}
