import type { AppContext } from '../context';
import { doAcceptEmailInvite } from '../actions/invites';
import { doRequestLinkSignup, type LinkSignupOutcome } from '../actions/link-signup';
import { ApiError } from '../errors';
import type { UserRow } from '../queries/rows';

/** The sign-up form's fields, as posted. */
export interface SignupForm {
  email: string;
  fullName: string;
  password: string;
}

export type SignupResult = { ok: true; user: UserRow } | { ok: false; error: string; expired: boolean };

type Refused = { ok: false; error: string; expired: boolean };

/**
 * A sign-up page's form post (src/http/signup-pages.ts): the account is
 * made by the same actions as the API's (one path for an account from an
 * invitation); a refusal comes back as its message, for the page to show.
 */
export async function acceptInvitationForm(ctx: AppContext, key: string, form: SignupForm): Promise<SignupResult> {
  try {
    return { ok: true, user: await doAcceptEmailInvite(ctx, key, { fullName: form.fullName, password: form.password }) };
  } catch (e) {
    return refused(e);
  }
}

/** A reusable link's page: the address to mail the sign-up link to (doRequestLinkSignup). */
export async function requestLinkSignupForm(
  ctx: AppContext,
  key: string,
  email: string,
  clientAddress: string | undefined,
): Promise<({ ok: true } & LinkSignupOutcome) | Refused> {
  try {
    return { ok: true, ...(await doRequestLinkSignup(ctx, key, { email, clientAddress })) };
  } catch (e) {
    return refused(e);
  }
}

function refused(e: unknown): Refused {
  if (e instanceof ApiError) return { ok: false, error: e.message, expired: e.code === 'INVALID_INVITATION' };
  throw e;
}
