import type { AppContext } from '../context';
import type { Data, Params } from '../contract';
import { inTransaction } from '../db/transaction';
import { checkPushKey, checkRelayBlob, checkTokenId, classifyRegistration, pushServiceNotConfigured } from '../domain/push-devices';
import { checkHumanUser } from '../domain/push-tokens';
import { ApiError } from '../errors';
import { deleteLegacyTokensByTokenId, getPushDevice, updatePushKey, updatePushToken, upsertPushDevice } from '../queries/push-devices';
import type { UserRow } from '../queries/rows';
import type { RegistrationToForward } from './push-relay';

/**
 * POST /mobile_push/register: registers a device for end-to-end encrypted
 * push notifications, or rotates its key or its token (Zulip's
 * register_push_device). Every check runs before anything is written; the
 * row, the removal of the legacy token and nothing else commit together, and
 * the registration goes to the relay after the commit (src/actions/push-relay.ts).
 *
 * Parley has no device registry (Zulip's POST /register_client_device): a
 * device_id names the caller's own registration and is created by its first
 * complete registration. Rotating the key or the token of a device never
 * registered is Zulip's "No push registration exists…" error.
 */
export async function doRegisterPushDevice(
  ctx: AppContext,
  user: UserRow,
  p: Params<'register-push-device'>,
): Promise<Data<'register-push-device'>> {
  checkHumanUser(user);
  const relay = ctx.push;
  if (!relay) throw pushServiceNotConfigured();
  const kind = classifyRegistration(p);
  const key = p.push_key !== undefined ? checkPushKey(p.push_key) : null;
  let tokenIdHex: string | null = null;
  if (p.token_id !== undefined) tokenIdHex = checkTokenId(p.token_id).toString('hex');
  if (p.bouncer_public_key !== undefined) checkRelayBlob('bouncer_public_key', p.bouncer_public_key);
  if (p.encrypted_push_registration !== undefined) checkRelayBlob('encrypted_push_registration', p.encrypted_push_registration);

  const forward = await inTransaction(ctx.db, async (tx): Promise<RegistrationToForward | null> => {
    const existing = await getPushDevice(tx.trx, user.id, p.device_id);
    if (kind === 'rotate-key') {
      if (!existing || existing.push_key_id === null) throw new ApiError('No push registration exists to rotate key for.');
      await updatePushKey(tx.trx, user.id, p.device_id, p.push_key_id!, key!.encoded);
      return null;
    }
    const token = {
      token_kind: p.token_kind!,
      token_id: p.token_id!,
      bouncer_public_key: p.bouncer_public_key!,
      encrypted_push_registration: p.encrypted_push_registration!,
    };
    if (kind === 'rotate-token') {
      if (!existing || existing.push_key_id === null) throw new ApiError('No push registration exists to rotate token for.');
      // The same token again changes nothing (Zulip answers success at once) —
      // unless the relay never confirmed it: then it is forwarded again, as
      // Zulip retries a registration its bouncer failed.
      const confirmed = existing.relay_device_id !== null;
      if (confirmed && existing.token_id === token.token_id && existing.token_kind === token.token_kind) return null;
      await updatePushToken(tx.trx, user.id, p.device_id, token);
    } else {
      const same =
        existing !== null &&
        existing.relay_device_id !== null &&
        existing.push_key_id === p.push_key_id &&
        existing.push_key === key!.encoded &&
        existing.token_id === token.token_id &&
        existing.token_kind === token.token_kind;
      // Repeating an identical, confirmed registration is a success without change (Zulip: idempotent).
      if (same) return null;
      await upsertPushDevice(tx.trx, {
        user_id: user.id,
        device_id: p.device_id,
        push_key_id: p.push_key_id!,
        push_key: key!.encoded,
        ...token,
      });
    }
    // From feature level 483 the new registration replaces the legacy one of the same token.
    await deleteLegacyTokensByTokenId(tx.trx, user.id, token.token_kind, tokenIdHex!);
    return {
      userId: user.id,
      deviceId: p.device_id,
      tokenKind: token.token_kind,
      tokenId: token.token_id,
      bouncerPublicKey: token.bouncer_public_key,
      encryptedPushRegistration: token.encrypted_push_registration,
    };
  });
  relay.noteDevice(user.id);
  if (forward) relay.forwardRegistration(forward);
  return {};
}
