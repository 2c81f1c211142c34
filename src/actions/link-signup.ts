import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { signupEmailProblem } from '../domain/invitations';
import { emailInviteUrl, isInviteLinkUsable } from '../domain/invite-links';
import { clientAddressKey, RateLimitNotes } from '../domain/rate-limits';
import { realmUrl } from '../domain/realm-address';
import { randomInviteKey } from '../domain/secrets';
import { emailKey, isSystemBotEmail, isValidEmail } from '../domain/users';
import { confirmRegistrationEmail } from '../emails/confirm-registration';
import { ApiError } from '../errors';
import { insertEmailInvite } from '../queries/email-invites';
import { nowSeconds } from '../queries/ids';
import { getInviteByKey, getInviteChannelIds, getInviteGroupIds } from '../queries/invites';
import { listRealmDomains } from '../queries/realm-domains';
import { getRealmById } from '../queries/realms';
import { getUserByEmailKey } from '../queries/users';
import { queueEmail } from './email-queue';
import { expired } from './invites';

/** How long the mailed link of an address given on a reusable link's page works (Zulip's confirmation links: a day). */
export const LINK_SIGNUP_CONFIRMATION_SECONDS = 24 * 3600;

export type LinkSignupOutcome = { result: 'mailed'; email: string } | { result: 'rate-limited'; retryAfterSeconds: number };

/**
 * The first step of joining with a reusable invitation link (Zulip's
 * accounts_home_from_multiuse_invite): the person gives an address, and a
 * link to finish signing up is mailed to it, so nobody makes an account
 * with an address that is not theirs (nor, by joining, revokes the real
 * invitations to it). The address is checked as Zulip's form checks it
 * (valid, the organization's domains, "+", disposable, no account yet);
 * the mailed link is an email invitation made from the reusable one (its
 * role, channels and groups; `multiuse_invite_id` names the link, whose use
 * is counted when the account is made: src/actions/invites.ts). Mails are
 * limited per client address as the password reset's are.
 */
export async function doRequestLinkSignup(
  ctx: AppContext,
  key: string,
  input: { email: string; clientAddress: string | undefined },
): Promise<LinkSignupOutcome> {
  const email = input.email.trim();
  if (!isValidEmail(email)) throw new ApiError('Enter a valid email address.');
  if (isSystemBotEmail(email)) throw new ApiError(`${email} is reserved for system bots`);
  const notes = new RateLimitNotes();
  try {
    await ctx.rateLimits.consume('sendsEmailByIp', clientAddressKey(input.clientAddress), notes);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'RATE_LIMIT_HIT') throw err;
    return { result: 'rate-limited', retryAfterSeconds: Math.ceil(Math.max(...notes.applied.map((r) => r.secondsToFreedom))) };
  }
  const now = nowSeconds();
  await inTransaction(ctx.db, async (tx) => {
    const link = await getInviteByKey(tx.trx, key);
    if (!link || !isInviteLinkUsable(link, now)) throw expired();
    const realm = await getRealmById(tx.trx, link.realm_id);
    if (!realm || realm.deactivated) throw expired();
    const problem = signupEmailProblem(email, realm, await listRealmDomains(tx.trx, realm.id));
    if (problem !== null) throw new ApiError(problem);
    // Zulip's validate_email_not_already_in_realm, in its words.
    const existing = await getUserByEmailKey(tx.trx, realm.id, emailKey(email));
    if (existing?.is_active) throw new ApiError(`${email} already has an account.`);
    if (existing) throw new ApiError(`The account for ${email} has been deactivated.`);
    const confirmationKey = randomInviteKey();
    await insertEmailInvite(
      tx.trx,
      {
        realm_id: realm.id,
        referred_by_id: link.referred_by_id,
        email,
        invited_as: link.invited_as,
        invited_at: now,
        expires_at: now + LINK_SIGNUP_CONFIRMATION_SECONDS,
        notify_referrer_on_join: false,
        include_realm_default_subscriptions: link.include_realm_default_subscriptions,
        welcome_message_custom_text: link.welcome_message_custom_text,
        confirmation_key: confirmationKey,
        multiuse_invite_id: link.id,
      },
      await getInviteChannelIds(tx.trx, link.id),
      await getInviteGroupIds(tx.trx, link.id),
    );
    const url = realmUrl(ctx.config.externalUrl, realm.string_id);
    await queueEmail(ctx, tx, {
      template: confirmRegistrationEmail,
      data: {
        email,
        realmName: realm.name,
        realmUrl: url,
        link: emailInviteUrl(ctx.config.externalUrl, realm.string_id, confirmationKey),
        validHours: LINK_SIGNUP_CONFIRMATION_SECONDS / 3600,
      },
      to: email,
      language: realm.default_language,
      realmId: realm.id,
      fromName: realm.name,
    });
  });
  return { result: 'mailed', email };
}
