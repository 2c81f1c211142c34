import type { Knex } from 'knex';
import { inChunks, nowSeconds } from './ids';

type Q = Knex | Knex.Transaction;

/** A row of push_devices: one E2EE registration of a user's device. */
export interface PushDeviceRow {
  id: number;
  user_id: number;
  device_id: number;
  push_key_id: number | null;
  push_key: string | null;
  token_kind: string | null;
  token_id: string | null;
  bouncer_public_key: string | null;
  encrypted_push_registration: string | null;
  relay_device_id: number | null;
}

const toRow = (r: Record<string, unknown>): PushDeviceRow => ({
  id: Number(r.id),
  user_id: Number(r.user_id),
  device_id: Number(r.device_id),
  push_key_id: r.push_key_id === null ? null : Number(r.push_key_id),
  push_key: (r.push_key as string | null) ?? null,
  token_kind: (r.token_kind as string | null) ?? null,
  token_id: (r.token_id as string | null) ?? null,
  bouncer_public_key: (r.bouncer_public_key as string | null) ?? null,
  encrypted_push_registration: (r.encrypted_push_registration as string | null) ?? null,
  relay_device_id: r.relay_device_id === null || r.relay_device_id === undefined ? null : Number(r.relay_device_id),
});

export async function getPushDevice(q: Q, userId: number, deviceId: number): Promise<PushDeviceRow | null> {
  const r = (await q('push_devices').where({ user_id: userId, device_id: deviceId }).first()) as Record<string, unknown> | undefined;
  return r ? toRow(r) : null;
}

/** A first registration (or a full re-registration): key and token, pending until the relay answers. */
export async function upsertPushDevice(
  q: Q,
  row: Omit<PushDeviceRow, 'id' | 'relay_device_id'> & { push_key_id: number; push_key: string },
): Promise<void> {
  await q('push_devices')
    .insert({ ...row, relay_device_id: null, date_created: nowSeconds() })
    .onConflict(['user_id', 'device_id'])
    .merge(['push_key_id', 'push_key', 'token_kind', 'token_id', 'bouncer_public_key', 'encrypted_push_registration', 'relay_device_id']);
}

export async function updatePushKey(q: Q, userId: number, deviceId: number, pushKeyId: number, pushKey: string): Promise<void> {
  await q('push_devices').where({ user_id: userId, device_id: deviceId }).update({ push_key_id: pushKeyId, push_key: pushKey });
}

/** A token rotation: the device is pending again until the relay confirms the new token. */
export async function updatePushToken(
  q: Q,
  userId: number,
  deviceId: number,
  token: Pick<PushDeviceRow, 'token_kind' | 'token_id' | 'bouncer_public_key' | 'encrypted_push_registration'>,
): Promise<void> {
  await q('push_devices')
    .where({ user_id: userId, device_id: deviceId })
    .update({ ...token, relay_device_id: null });
}

/**
 * Records the relay's id for the device, unless the token changed since the
 * registration was forwarded (a later rotation's answer will set it).
 */
export async function setRelayDeviceId(q: Q, userId: number, deviceId: number, tokenId: string, relayDeviceId: number): Promise<void> {
  await q('push_devices').where({ user_id: userId, device_id: deviceId, token_id: tokenId }).update({ relay_device_id: relayDeviceId });
}

/**
 * Deletes the user's legacy tokens (push_tokens) that are the token a new
 * registration names. The server never sees that token (it is encrypted for
 * the relay), but token_id is the first 8 bytes of its SHA-256 and
 * push_tokens.token_key is the whole SHA-256 in hex (migration 011): a
 * prefix match on the unique (user_id, kind, token_key) index.
 */
export async function deleteLegacyTokensByTokenId(q: Q, userId: number, kind: string, tokenIdHex: string): Promise<number> {
  return q('push_tokens').where({ user_id: userId, kind }).andWhere('token_key', 'like', `${tokenIdHex}%`).delete();
}

/** Users with at least one E2EE registration (the push relay's "may have devices" set). */
export async function listUserIdsWithPushDevices(q: Q): Promise<number[]> {
  const rows = (await q('push_devices').distinct('user_id').whereNotNull('push_key')) as Array<{ user_id: number }>;
  return rows.map((r) => Number(r.user_id));
}

/** A device a notification can go to, with its owner's organization name. */
export interface DeliverableDevice {
  user_id: number;
  device_id: number;
  relay_device_id: number;
  push_key_id: number;
  push_key: string;
  realm_name: string;
}

/** The confirmed devices (relay id known) of these users, with the organization name the payload carries. */
export async function listDeliverableDevices(q: Q, userIds: readonly number[]): Promise<DeliverableDevice[]> {
  return inChunks(userIds, async (slice) => {
    const rows = (await q('push_devices as d')
      .join('users as u', 'u.id', 'd.user_id')
      .join('realms as r', 'r.id', 'u.realm_id')
      .whereIn('d.user_id', slice)
      .whereNotNull('d.relay_device_id')
      .whereNotNull('d.push_key')
      .whereNotNull('d.push_key_id')
      .orderBy('d.id')
      .select('d.user_id', 'd.device_id', 'd.relay_device_id', 'd.push_key_id', 'd.push_key', 'r.name as realm_name')) as Array<
      Record<string, unknown>
    >;
    return rows.map((r) => ({
      user_id: Number(r.user_id),
      device_id: Number(r.device_id),
      relay_device_id: Number(r.relay_device_id),
      push_key_id: Number(r.push_key_id),
      push_key: String(r.push_key),
      realm_name: String(r.realm_name),
    }));
  });
}
