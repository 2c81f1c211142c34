import type { AppContext } from '../context';
import type { Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { isHexColor } from '../domain/channels';
import { ApiError } from '../errors';
import { canSeeChannel, Viewer } from '../access/viewer';
import { getActiveSubscription, getChannelById, SubscriptionSettingColumns, updateSubscriptionSettings } from '../queries/channels';
import { toApiSubscriptionUpdateEvent } from '../serializers/subscriptions';

const BOOLEAN_PROPERTIES = [
  'is_muted',
  'in_home_view',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
] as const;
type BooleanProperty = (typeof BOOLEAN_PROPERTIES)[number];
const isBooleanProperty = (property: string): property is BooleanProperty => (BOOLEAN_PROPERTIES as readonly string[]).includes(property);

/** One checked change: what the row gets, and the (property, value) pairs its events announce. */
interface SettingUpdate {
  recipientId: number;
  streamId: number;
  changes: Partial<SubscriptionSettingColumns>;
  events: Array<[property: string, value: boolean | string]>;
}

/**
 * PATCH /users/me/subscriptions/{id} and POST .../properties: personal
 * settings of channels the caller is subscribed to. in_home_view is the
 * legacy inverse of is_muted; a change to either publishes an event for
 * each of the two (Zulip, feature level 139). All changes or none.
 */
export async function doUpdateSubscriptionProperties(
  ctx: AppContext,
  viewer: Viewer,
  changes: ReadonlyArray<Schema<'SubscriptionPropertyChange'>>,
): Promise<void> {
  const updates: SettingUpdate[] = [];
  for (const c of changes) {
    const channel = await getChannelById(ctx.db, viewer.user.realm_id, c.stream_id);
    if (!channel || !canSeeChannel(viewer, channel)) throw new ApiError('Invalid channel ID');
    if (!(await getActiveSubscription(ctx.db, viewer.user.id, channel.recipient_id))) {
      throw new ApiError(`Not subscribed to channel ID ${c.stream_id}`);
    }
    const target = { recipientId: channel.recipient_id, streamId: channel.id };
    if (c.property === 'color') {
      if (typeof c.value !== 'string' || !isHexColor(c.value)) throw new ApiError('color is not a valid hex color code');
      const color = c.value.toLowerCase();
      updates.push({ ...target, changes: { color }, events: [['color', color]] });
      continue;
    }
    if (!isBooleanProperty(c.property)) throw new ApiError(`Unknown subscription property: ${c.property}`);
    if (typeof c.value !== 'boolean') throw new ApiError(`${c.property} is not a boolean`);
    if (c.property === 'is_muted' || c.property === 'in_home_view') {
      const muted = c.property === 'is_muted' ? c.value : !c.value;
      updates.push({
        ...target,
        changes: { is_muted: muted },
        events: [
          ['in_home_view', !muted],
          ['is_muted', muted],
        ],
      });
    } else {
      updates.push({ ...target, changes: { [c.property]: c.value }, events: [[c.property, c.value]] });
    }
  }
  await inTransaction(ctx.db, async (tx) => {
    for (const u of updates) {
      await updateSubscriptionSettings(tx.trx, viewer.user.id, u.recipientId, u.changes);
      for (const [property, value] of u.events) {
        const event = toApiSubscriptionUpdateEvent(u.streamId, property, value);
        tx.afterCommit(() => ctx.bus.publish({ event, userIds: [viewer.user.id] }));
      }
    }
  });
}
