import type { Knex } from 'knex';
import type { TableRow } from '../../generated/tables';
import { dialectOf } from '../db/connection';
import { inChunks, insertOne, nowSeconds } from './ids';

type Q = Knex | Knex.Transaction;

/**
 * A row of client_devices (migration 027): a device a user registered, and
 * its end-to-end encrypted push registration once it has one.
 */
export interface ClientDeviceRow {
  id: number;
  user_id: number;
  push_key_id: number | null;
  push_key: string | null;
  token_kind: string | null;
  /** The token the device last sent (standard Base64 of 8 bytes), with the fields the relay needs for it. */
  token_id: string | null;
  bouncer_public_key: string | null;
  encrypted_push_registration: string | null;
  /** The relay's id for the device under its confirmed token; notifications need it. */
  relay_device_id: number | null;
  /** The token the relay last confirmed (Zulip's push_token_id): notifications go to it. */
  confirmed_token_id: string | null;
  /** A token sent to the relay that it has not confirmed (Zulip's pending_push_token_id). */
  pending_token_id: string | null;
  /** When a token was last sent (Zulip's push_token_last_updated_timestamp). */
  token_updated_at: number | null;
  /** The relay's refusal of the pending token, as a Zulip error code (Zulip's push_registration_error_code). */
  registration_error: string | null;
}

const nullableNumber = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const nullableString = (v: unknown) => (v === null || v === undefined ? null : String(v));

const toRow = (r: TableRow<'client_devices'>): ClientDeviceRow => ({
  id: Number(r.id),
  user_id: Number(r.user_id),
  push_key_id: nullableNumber(r.push_key_id),
  push_key: nullableString(r.push_key),
  token_kind: nullableString(r.token_kind),
  token_id: nullableString(r.token_id),
  bouncer_public_key: nullableString(r.bouncer_public_key),
  encrypted_push_registration: nullableString(r.encrypted_push_registration),
  relay_device_id: nullableNumber(r.relay_device_id),
  confirmed_token_id: nullableString(r.confirmed_token_id),
  pending_token_id: nullableString(r.pending_token_id),
  token_updated_at: nullableNumber(r.token_updated_at),
  registration_error: nullableString(r.registration_error),
});

/** A new device of the user, without a push registration; its id. */
export async function insertClientDevice(q: Q, userId: number): Promise<number> {
  return insertOne(q, 'client_devices', { user_id: userId, date_created: nowSeconds() });
}

export async function countClientDevices(q: Q, userId: number): Promise<number> {
  const row = (await q('client_devices').where({ user_id: userId }).count({ n: '*' }).first()) as { n: unknown } | undefined;
  return Number(row?.n ?? 0);
}

/**
 * The user's device of this id, locked until the transaction ends on MySQL
 * (SQLite's one writer holds the database); another user's device is not
 * found.
 */
export async function getClientDeviceForUpdate(trx: Knex.Transaction, userId: number, deviceId: number): Promise<ClientDeviceRow | null> {
  const query = trx('client_devices').where({ id: deviceId, user_id: userId }).first();
  if (dialectOf(trx) === 'mysql') query.forUpdate();
  const r = await query;
  return r ? toRow(r) : null;
}

/**
 * Locks the user's row until the transaction ends on MySQL, so that two
 * registrations of devices of one user count the devices one after the
 * other (the limit holds under concurrency); SQLite's one writer already
 * serialises them.
 */
export async function lockDeviceOwner(trx: Knex.Transaction, userId: number): Promise<void> {
  if (dialectOf(trx) === 'mysql') await trx('users').where({ id: userId }).forUpdate().first('id');
}

/** The user's devices, oldest first (POST /register's `devices`). */
export async function listClientDevices(q: Q, userId: number): Promise<ClientDeviceRow[]> {
  const rows = await q('client_devices').where({ user_id: userId }).orderBy('id');
  return rows.map(toRow);
}

/** Deletes the user's device, and with it its push registration; whether there was one. */
export async function deleteClientDevice(q: Q, userId: number, deviceId: number): Promise<boolean> {
  return (await q('client_devices').where({ id: deviceId, user_id: userId }).delete()) > 0;
}

/** Clears every push registration of the user (their devices stay registered). */
export async function clearPushRegistrations(q: Q, userId: number): Promise<number> {
  return q('client_devices').where({ user_id: userId }).whereNotNull('push_key').update(NO_REGISTRATION);
}

const NO_REGISTRATION = {
  push_key_id: null,
  push_key: null,
  token_kind: null,
  token_id: null,
  bouncer_public_key: null,
  encrypted_push_registration: null,
  relay_device_id: null,
  confirmed_token_id: null,
  pending_token_id: null,
  token_updated_at: null,
  registration_error: null,
};

/** The key of a registration (a first registration, or a key rotation). */
export async function setPushKey(q: Q, deviceId: number, pushKeyId: number, pushKey: string): Promise<void> {
  await q('client_devices').where({ id: deviceId }).update({ push_key_id: pushKeyId, push_key: pushKey });
}

export type PushToken = Pick<ClientDeviceRow, 'token_kind' | 'token_id' | 'bouncer_public_key' | 'encrypted_push_registration'>;

/**
 * A new token (a first registration, or a token rotation): pending until
 * the relay confirms it. Meanwhile notifications still go to the token
 * confirmed before, if any (its relay id is kept), as in Zulip.
 */
export async function setPushToken(q: Q, deviceId: number, token: PushToken, now: number): Promise<void> {
  await q('client_devices')
    .where({ id: deviceId })
    .update({ ...token, pending_token_id: token.token_id, token_updated_at: now, registration_error: null });
}

/**
 * The relay confirmed the pending token: notifications go to it under the
 * relay's id from now on — unless the device sent another token since (that
 * one's answer will do it) or is gone. Whether the row took it.
 */
export async function confirmPushToken(q: Q, deviceId: number, tokenId: string, relayDeviceId: number): Promise<boolean> {
  const n = await q('client_devices')
    .where({ id: deviceId, pending_token_id: tokenId })
    .update({ relay_device_id: relayDeviceId, confirmed_token_id: tokenId, pending_token_id: null, registration_error: null });
  return n > 0;
}

/**
 * The relay refused the pending token (a Zulip error code), or it was never
 * answered: the token stays pending with the refusal beside it, so the app
 * registers again, and notifications keep going to the token confirmed
 * before. Unless the device sent another token since. Whether the row took it.
 */
export async function refusePushToken(q: Q, deviceId: number, tokenId: string, code: string): Promise<boolean> {
  const n = await q('client_devices').where({ id: deviceId, pending_token_id: tokenId }).update({ registration_error: code });
  return n > 0;
}

/** Registrations the relay has not answered (pending, not refused), oldest token first: those a lost job left behind. */
export async function listUnansweredRegistrations(q: Q, sentSince: number): Promise<Array<ClientDeviceRow & { realm_string_id: string }>> {
  const rows = (await q('client_devices as d')
    .join('users as u', 'u.id', 'd.user_id')
    .join('realms as r', 'r.id', 'u.realm_id')
    .whereNotNull('d.pending_token_id')
    .whereNull('d.registration_error')
    .where('d.token_updated_at', '>=', sentSince)
    .orderBy('d.token_updated_at')
    .select('d.*', 'r.string_id as realm_string_id')) as Array<TableRow<'client_devices'> & { realm_string_id: string }>;
  return rows.map((r) => ({ ...toRow(r), realm_string_id: String(r.realm_string_id) }));
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
  const rows = (await q('client_devices').distinct('user_id').whereNotNull('push_key')) as Array<{ user_id: number }>;
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
  /** The organization's subdomain, for its URL. */
  realm_string_id: string;
}

/** The confirmed devices (relay id known) of these users, with the organization name and subdomain the payload carries. */
export async function listDeliverableDevices(q: Q, userIds: readonly number[]): Promise<DeliverableDevice[]> {
  return inChunks(userIds, async (slice) => {
    const rows = (await q('client_devices as d')
      .join('users as u', 'u.id', 'd.user_id')
      .join('realms as r', 'r.id', 'u.realm_id')
      .whereIn('d.user_id', slice)
      .whereNotNull('d.relay_device_id')
      .whereNotNull('d.push_key')
      .whereNotNull('d.push_key_id')
      .orderBy('d.id')
      .select(
        'd.user_id',
        'd.id as device_id',
        'd.relay_device_id',
        'd.push_key_id',
        'd.push_key',
        'r.name as realm_name',
        'r.string_id as realm_string_id',
      )) as Array<
      Pick<TableRow<'client_devices'>, 'user_id' | 'relay_device_id' | 'push_key_id' | 'push_key'> & {
        device_id: number;
        realm_name: string;
        realm_string_id: string;
      }
    >;
    return rows.map((r) => ({
      user_id: Number(r.user_id),
      device_id: Number(r.device_id),
      relay_device_id: Number(r.relay_device_id),
      push_key_id: Number(r.push_key_id),
      push_key: String(r.push_key),
      realm_name: String(r.realm_name),
      realm_string_id: String(r.realm_string_id),
    }));
  });
}
