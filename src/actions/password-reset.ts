import type { AppContext } from '../context';
import { getResetLinkAccount } from '../access/password-reset';
import { getSitePageRealm } from '../access/site-pages';
import { inTransaction } from '../db/transaction';
import { passwordResetEmail } from '../emails/password-reset';
import { checkNewPassword, hashResetToken, PASSWORD_RESET_LINK_SECONDS, resetLinkHours } from '../domain/password-reset';
import { clientAddressKey, RateLimitNotes, type RateLimitKind } from '../domain/rate-limits';
import { realmUrl } from '../domain/realm-address';
import { hashPassword, randomToken } from '../domain/secrets';
import { parseSettings } from '../domain/user-settings';
import { emailKey, isValidEmail } from '../domain/users';
import { ApiError } from '../errors';
import { insertPasswordResetToken, listOtherRealmsWithActiveAccount, markPasswordResetTokensUsed } from '../queries/password-reset-tokens';
import type { RealmRow } from '../queries/rows';
import { getUserByEmailKey } from '../queries/users';
import { queueEmail } from './email-queue';
import { setPasswordInTx } from './passwords';

/** What the "forgot password" form answers: the same `sent` whether or not the address has an account. */
export type ResetRequestOutcome =
  | { result: 'sent' }
  | { result: 'invalid-email'; realmName: string }
  | { result: 'no-organization' }
  | { result: 'rate-limited'; retryAfterSeconds: number };

const seconds = (ctx: AppContext) => Math.floor(ctx.clock.now() / 1000);

/** Where a reset link points: the organization's own site, as Zulip's links do. */
const resetLinkUrl = (base: string, token: string) => `${base.replace(/\/+$/, '')}/accounts/password/reset/${token}/`;

/**
 * The "forgot password" form's POST, as Zulip's ZulipPasswordResetForm:
 * - no mail at all when the organization does not take passwords (the
 *   answer is still `sent`, as Zulip's);
 * - the limits on reset mail per address and per client address count
 *   every request, whatever the address (Zulip's order: before the lookup);
 * - an active account gets a one-time link, valid for
 *   PASSWORD_RESET_LINK_SECONDS; any other address (no account, a
 *   deactivated one, a bot's) gets a mail saying there is no account here
 *   and naming the organizations where it has one. Either mail is queued in
 *   the transaction that stores the token, in the recipient's language.
 * The answer never says which happened.
 */
export async function doRequestPasswordReset(
  ctx: AppContext,
  input: { email: string; host: string | undefined; clientAddress: string | undefined },
): Promise<ResetRequestOutcome> {
  const realm = await getSitePageRealm(ctx.db, input.host, ctx.config.externalUrl);
  if (!realm) return { result: 'no-organization' };
  const email = input.email.trim();
  if (!isValidEmail(email)) return { result: 'invalid-email', realmName: realm.name };
  if (!realm.password_auth_enabled) return { result: 'sent' };
  const key = emailKey(email);
  const limited = await consumeResetLimits(ctx, key, clientAddressKey(input.clientAddress));
  if (limited !== null) return { result: 'rate-limited', retryAfterSeconds: limited };

  const now = seconds(ctx);
  const found = await getUserByEmailKey(ctx.db, realm.id, key);
  const user = found && found.is_active && !found.is_bot && !found.is_mirror_dummy ? found : undefined;
  const url = realmUrl(ctx.config.externalUrl, realm.string_id);
  await inTransaction(ctx.db, async (tx) => {
    if (user) {
      const token = randomToken(24);
      await insertPasswordResetToken(tx.trx, {
        user_id: user.id,
        token_hash: hashResetToken(token),
        created_at: now,
        expires_at: now + PASSWORD_RESET_LINK_SECONDS,
      });
      await queueEmail(ctx, tx, {
        template: passwordResetEmail,
        data: {
          kind: 'reset',
          email,
          realmName: realm.name,
          realmUrl: url,
          resetUrl: resetLinkUrl(url, token),
          validHours: resetLinkHours(),
        },
        to: user.delivery_email,
        language: parseSettings(user.settings).default_language,
        realmId: realm.id,
        fromName: realm.name,
      });
      return;
    }
    const others = await listOtherRealmsWithActiveAccount(tx.trx, key, realm.id);
    await queueEmail(ctx, tx, {
      template: passwordResetEmail,
      data: {
        kind: 'no-account',
        email,
        realmName: realm.name,
        realmUrl: url,
        deactivated: found !== undefined && !found.is_active && !found.is_bot,
        otherRealmUrls: others.map((stringId) => realmUrl(ctx.config.externalUrl, stringId)),
      },
      to: email,
      // No account to read a language from: the organization's default, as for an invitee.
      language: realm.default_language,
      realmId: realm.id,
      fromName: realm.name,
    });
  });
  return { result: 'sent' };
}

/**
 * Counts the request against the address's two windows and the client's
 * daily limit; the seconds until the request would be allowed when one is
 * over, null when none is.
 */
async function consumeResetLimits(ctx: AppContext, key: string, client: string): Promise<number | null> {
  const notes = new RateLimitNotes();
  const kinds: Array<[RateLimitKind, string]> = [
    ['passwordResetByEmailHour', key],
    ['passwordResetByEmailDay', key],
    ['sendsEmailByIp', client],
  ];
  for (const [kind, k] of kinds) {
    try {
      await ctx.rateLimits.consume(kind, k, notes);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'RATE_LIMIT_HIT') throw err;
      return Math.ceil(Math.max(...notes.applied.filter((r) => r.limited).map((r) => r.secondsToFreedom)));
    }
  }
  return null;
}

export type ResetPasswordOutcome =
  | { result: 'invalid-link' }
  | { result: 'invalid-password'; message: string; email: string }
  | { result: 'changed'; email: string; realm: RealmRow; realmUrl: string };

/**
 * A reset link's form POST: the new password checked as Zulip's
 * set-password form does, then set through the one password path
 * (setPasswordInTx: audited, the user's other links retired, the API key and
 * every logged-in client untouched). The token is marked used by a
 * conditional update in the same transaction, so a link sets one password
 * even when posted twice at once.
 */
export async function doResetPassword(
  ctx: AppContext,
  input: { token: string; password: string; confirmation: string },
): Promise<ResetPasswordOutcome> {
  const account = await getResetLinkAccount(ctx.db, input.token, seconds(ctx));
  if (!account) return { result: 'invalid-link' };
  const { user, realm, token } = account;
  const problem = checkNewPassword(input.password, input.confirmation);
  if (problem) return { result: 'invalid-password', message: problem, email: user.delivery_email };
  const passwordHash = await hashPassword(input.password);
  const now = seconds(ctx);
  const changed = await inTransaction(ctx.db, async (tx) => {
    if ((await markPasswordResetTokensUsed(tx.trx, user.id, now, token.id)) === 0) return false;
    await setPasswordInTx(tx, user, passwordHash, user.id, now);
    return true;
  });
  if (!changed) return { result: 'invalid-link' };
  return { result: 'changed', email: user.delivery_email, realm, realmUrl: realmUrl(ctx.config.externalUrl, realm.string_id) };
}
