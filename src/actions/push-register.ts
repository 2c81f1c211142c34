import type { AppContext } from '../context';
import type { Data, Params } from '../contract';
import { inTransaction } from '../db/transaction';
import {
  canonicalTokenId,
  checkPushKey,
  checkRelayBlob,
  checkTokenId,
  classifyRegistration,
  invalidDeviceId,
  pushServiceNotConfigured,
  registrationInProgress,
} from '../domain/push-devices';
import { checkHumanUser } from '../domain/push-tokens';
import { ApiError } from '../errors';
import { nowSeconds } from '../queries/ids';
import {
  deleteLegacyTokensByTokenId,
  getClientDeviceForUpdate,
  setPushKey,
  setPushToken,
  type ClientDeviceRow,
  type PushToken,
} from '../queries/client-devices';
import type { RealmRow, UserRow } from '../queries/rows';
import { queueDeviceEvent } from './client-devices';
import type { RegistrationToForward } from './push-relay';

/**
 * POST /mobile_push/register: registers a device (one POST
 * /register_client_device gave the caller) for end-to-end encrypted push
 * notifications, or rotates its key or its token (Zulip's
 * register_push_device, feature level 468). Zulip's checks in Zulip's order,
 * which decides the error a request with several faults gets: bots, the
 * relay, the device, the groups of fields, a key rotation, a token still
 * pending, the token id, a token rotation, a registration. Nothing is written
 * before every check passed; the device's row, the removal of the legacy
 * token and nothing else commit together; the registration goes to the relay
 * after the commit (src/actions/push-relay.ts), whose answer arrives as a
 * device update event.
 */
export async function doRegisterPushDevice(
  ctx: AppContext,
  user: UserRow,
  realm: RealmRow,
  p: Params<'register-push-device'>,
): Promise<Data<'register-push-device'>> {
  checkHumanUser(user);
  const relay = ctx.push;
  if (!relay) throw pushServiceNotConfigured();

  const forward = await inTransaction(ctx.db, async (tx): Promise<RegistrationToForward | null> => {
    const device = await getClientDeviceForUpdate(tx.trx, user.id, p.device_id);
    if (!device) throw invalidDeviceId();
    const kind = classifyRegistration(p);
    const now = nowSeconds();

    if (kind === 'rotate-key') {
      if (device.push_key_id === null) throw new ApiError('No push registration exists to rotate key for.');
      const key = checkPushKey(p.push_key!);
      // The same key again changes nothing and tells nobody.
      if (device.push_key_id === p.push_key_id && device.push_key === key.encoded) return null;
      await setPushKey(tx.trx, device.id, p.push_key_id!, key.encoded);
      queueDeviceEvent(ctx, tx, user.id, { type: 'device', op: 'update', device_id: device.id, push_key_id: p.push_key_id! });
      return null;
    }

    // One token at a time: the relay's answer to the pending one comes
    // first, unless it refused it or a day went by without an answer.
    if (registrationInProgress(device, now)) throw new ApiError('A registration for the device already in progress.');
    const tokenId = checkTokenId(p.token_id!);
    if (kind === 'rotate-token' && device.push_key_id === null) throw new ApiError('No push registration exists to rotate token for.');
    const key = kind === 'register' ? checkPushKey(p.push_key!) : null;
    // Zulip's relay refuses these; Parley checks them before storing anything, so a malformed one
    // fails the request instead of the registration in the background.
    checkRelayBlob('bouncer_public_key', p.bouncer_public_key!);
    checkRelayBlob('encrypted_push_registration', p.encrypted_push_registration!);
    const token: PushToken = {
      token_kind: p.token_kind!,
      token_id: canonicalTokenId(tokenId),
      bouncer_public_key: p.bouncer_public_key!,
      encrypted_push_registration: p.encrypted_push_registration!,
    };
    const sameKey = key === null || (device.push_key_id === p.push_key_id && device.push_key === key.encoded);
    // The confirmed token again (with the same key): nothing to do (Zulip answers success at once).
    if (isConfirmed(device, token) && sameKey) return null;
    if (key && !sameKey) await setPushKey(tx.trx, device.id, p.push_key_id!, key.encoded);
    await setPushToken(tx.trx, device.id, token, now);
    queueDeviceEvent(ctx, tx, user.id, {
      type: 'device',
      op: 'update',
      device_id: device.id,
      ...(key ? { push_key_id: p.push_key_id! } : {}),
      pending_push_token_id: token.token_id,
      push_token_last_updated_timestamp: now,
      push_registration_error_code: null,
    });
    // From feature level 483 the new registration replaces the legacy one of the same token.
    await deleteLegacyTokensByTokenId(tx.trx, user.id, token.token_kind!, tokenId.toString('hex'));
    return {
      userId: user.id,
      // The relay is told which organization the device belongs to (its URL).
      realmStringId: realm.string_id,
      deviceId: device.id,
      tokenKind: token.token_kind!,
      tokenId: token.token_id!,
      bouncerPublicKey: token.bouncer_public_key!,
      encryptedPushRegistration: token.encrypted_push_registration!,
    };
  });
  relay.noteDevice(user.id);
  if (forward) relay.forwardRegistration(forward);
  return {};
}

/** Whether the device's confirmed, unrefused token is this one, of this kind. */
function isConfirmed(device: ClientDeviceRow, token: PushToken): boolean {
  return (
    device.registration_error === null &&
    device.relay_device_id !== null &&
    device.confirmed_token_id === token.token_id &&
    device.token_kind === token.token_kind
  );
}
