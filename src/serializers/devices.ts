import type { Schema } from '../contract';
import { PUSH_REGISTRATION_LIVENESS_SECONDS, REGISTRATION_EXPIRED } from '../domain/push-devices';
import type { ClientDeviceRow } from '../queries/client-devices';

type DeviceState = Pick<ClientDeviceRow, 'push_key_id' | 'token_id' | 'confirmed_token_id' | 'token_updated_at' | 'registration_error'>;

/** The token a device sent that the relay has not confirmed (it stays after a refusal, as in Zulip). */
export const pendingTokenId = (d: DeviceState): string | null =>
  d.token_id !== null && d.token_id !== d.confirmed_token_id ? d.token_id : null;

/**
 * Why the device's pending token is not registered: the relay's refusal, or
 * REQUEST_EXPIRED once it has been pending a day without an answer (the
 * relay job was lost with its process, or gave up): the app then registers
 * again with a fresh payload, as after Zulip's bouncer worker times out.
 */
export function registrationErrorOf(d: DeviceState, now: number): string | null {
  if (d.registration_error !== null) return d.registration_error;
  const stale = pendingTokenId(d) !== null && d.token_updated_at !== null && now - d.token_updated_at >= PUSH_REGISTRATION_LIVENESS_SECONDS;
  return stale ? REGISTRATION_EXPIRED : null;
}

/** A device as POST /register's `devices` shows it. */
export function toApiClientDevice(d: DeviceState, now: number): Schema<'ClientDevice'> {
  return {
    push_key_id: d.push_key_id,
    push_token_id: d.confirmed_token_id,
    pending_push_token_id: pendingTokenId(d),
    push_token_last_updated_timestamp: d.token_updated_at,
    push_registration_error_code: registrationErrorOf(d, now),
  };
}

/** The user's devices keyed by ID (as a string), as POST /register's `devices`. */
export function toApiClientDevices(devices: readonly ClientDeviceRow[], now: number): Schema<'ClientDevices'> {
  const out: Schema<'ClientDevices'> = {};
  for (const d of devices) out[String(d.id)] = toApiClientDevice(d, now);
  return out;
}
