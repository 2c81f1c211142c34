import type { AppContext } from '../context';
import type { Data, Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { invalidDeviceId, MAX_CLIENT_DEVICES_PER_USER } from '../domain/push-devices';
import { ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { countClientDevices, deleteClientDevice, insertClientDevice, lockDeviceOwner } from '../queries/client-devices';
import type { UserRow } from '../queries/rows';

/**
 * The device registry (Zulip's feature levels 468 and 470): a device the
 * user is logged in on, registered by its app at login and removed at
 * logout. Its end-to-end encrypted push registration lives on it
 * (src/actions/push-register.ts). Every device event goes to its owner's
 * queues alone. Bots may register devices too, as in Zulip (they cannot
 * register them for push).
 */

/** POST /register_client_device: a new device, with its push fields empty. */
export async function doRegisterClientDevice(ctx: AppContext, user: UserRow): Promise<Data<'register-client-device'>> {
  const deviceId = await inTransaction(ctx.db, async (tx) => {
    // Two registrations at once count one after the other, so the limit holds.
    await lockDeviceOwner(tx.trx, user.id);
    if ((await countClientDevices(tx.trx, user.id)) >= MAX_CLIENT_DEVICES_PER_USER) {
      throw new ApiError(`Too many devices registered (the limit is ${MAX_CLIENT_DEVICES_PER_USER}); remove one first.`);
    }
    const id = await insertClientDevice(tx.trx, user.id);
    queueDeviceEvent(ctx, tx, user.id, { type: 'device', op: 'add', device_id: id });
    return id;
  });
  return { device_id: deviceId };
}

/** POST /remove_client_device: the caller's device and its push registration. */
export async function doRemoveClientDevice(ctx: AppContext, user: UserRow, deviceId: number): Promise<Data<'remove-client-device'>> {
  await inTransaction(ctx.db, async (tx) => {
    if (!(await deleteClientDevice(tx.trx, user.id, deviceId))) throw invalidDeviceId();
    queueDeviceEvent(ctx, tx, user.id, { type: 'device', op: 'remove', device_id: deviceId });
  });
  return {};
}

type DeviceEvent = EventBody<Schema<'DeviceAddEvent'> | Schema<'DeviceRemoveEvent'> | Schema<'DeviceUpdateEvent'>>;

/** A device event for its owner, published once the transaction commits. */
export function queueDeviceEvent(ctx: AppContext, tx: Tx, userId: number, event: DeviceEvent): void {
  tx.afterCommit(() => ctx.bus.publish({ event, userIds: [userId] }));
}
