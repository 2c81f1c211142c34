import type { AppContext } from '../context';
import { doRequestPasswordReset, doResetPassword, type ResetPasswordOutcome, type ResetRequestOutcome } from '../actions/password-reset';

export type { ResetPasswordOutcome, ResetRequestOutcome };

/** POST /accounts/password/reset/ (src/http/password-reset-pages.ts reads the form and renders the answer). */
export function requestPasswordReset(
  ctx: AppContext,
  input: { email: string; host: string | undefined; clientAddress: string | undefined },
): Promise<ResetRequestOutcome> {
  return doRequestPasswordReset(ctx, input);
}

/** POST /accounts/password/reset/<token>/. */
export function resetPassword(
  ctx: AppContext,
  input: { token: string; password: string; confirmation: string },
): Promise<ResetPasswordOutcome> {
  return doResetPassword(ctx, input);
}
