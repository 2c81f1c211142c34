import type { Schema } from '../contract';
import { registrationErrorOf } from '../domain/push-devices';
import type { ClientDeviceRow } from '../queries/client-devices';

type DeviceState = Pick<
  ClientDeviceRow,
  'push_key_id' | 'confirmed_token_id' | 'pending_token_id' | 'token_updated_at' | 'registration_error'
>;

/** A device as POST /register's `devices` shows it. */
export function toApiClientDevice(d: DeviceState, now: number): Schema<'ClientDevice'> {
  return {
    push_key_id: d.push_key_id,
    push_token_id: d.confirmed_token_id,
    pending_push_token_id: d.pending_token_id,
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
