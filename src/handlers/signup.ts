import type { AppContext } from '../context';
import { doAcceptEmailInvite, doAcceptMultiuseInvite } from '../actions/invites';
import { ApiError } from '../errors';
import type { UserRow } from '../queries/rows';

/** The sign-up form's fields, as posted. */
export interface SignupForm {
  email: string;
  fullName: string;
  password: string;
}

export type SignupResult = { ok: true; user: UserRow } | { ok: false; error: string; expired: boolean };

/**
 * A sign-up page's form post (src/http/signup-pages.ts): the account is
 * made by the same actions as the API's (one path for an account from an
 * invitation); a refusal comes back as its message, for the page to show.
 */
export async function acceptInvitationForm(ctx: AppContext, kind: 'email' | 'link', key: string, form: SignupForm): Promise<SignupResult> {
  try {
    const user =
      kind === 'email'
        ? await doAcceptEmailInvite(ctx, key, { fullName: form.fullName, password: form.password })
        : await doAcceptMultiuseInvite(ctx, key, { email: form.email, full_name: form.fullName, password: form.password });
    return { ok: true, user };
  } catch (e) {
    if (e instanceof ApiError) return { ok: false, error: e.message, expired: e.code === 'INVALID_INVITATION' };
    throw e;
  }
}
