import type { AppContext } from '../context';
import { doFetchApiKey } from '../actions/login';
import { RateLimitNotes } from '../domain/rate-limits';
import { ApiError } from '../errors';

export type LoginPageOutcome =
  { result: 'logged-in'; email: string; userId: number } | { result: 'refused'; message: string; status: 200 | 429 };

/**
 * POST /login/ (src/http/login-page.ts renders the answer): the password
 * check of POST /fetch_api_key, the same action, so the same per-username
 * limit, the same timing and the same order of refusals; its errors become
 * the form's messages.
 */
export async function loginPage(ctx: AppContext, username: string, password: string, host: string | undefined): Promise<LoginPageOutcome> {
  try {
    const credentials = await doFetchApiKey(ctx, { username, password }, host, new RateLimitNotes());
    return { result: 'logged-in', email: credentials.email, userId: credentials.user_id };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { result: 'refused', message: loginRefusal(err), status: err.code === 'RATE_LIMIT_HIT' ? 429 : 200 };
  }
}

function loginRefusal(err: ApiError): string {
  switch (err.code) {
    case 'RATE_LIMIT_HIT': {
      const wait = Math.ceil(Number((err.data as { 'retry-after'?: number })['retry-after'] ?? 0));
      return `Too many attempts to log in with this address. Try again in ${wait} seconds, or reset your password.`;
    }
    case 'USER_DEACTIVATED':
      return 'This account has been deactivated. An administrator of the organization can reactivate it.';
    case 'REALM_DEACTIVATED':
      return 'This organization has been deactivated.';
    case 'PASSWORD_AUTH_DISABLED':
      return 'This organization does not take passwords.';
    case 'AUTHENTICATION_FAILED':
      return 'Wrong email address or password.';
    default:
      return err.message;
  }
}
