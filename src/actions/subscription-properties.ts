import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { ApiError } from '../errors';
import { canSeeChannel, Viewer } from '../access/viewer';
import { getActiveSubscription, getChannelById } from '../queries/channels';

export interface PropertyChange {
  stream_id: number;
  property: string;
  value: unknown;
}

const BOOLEAN_PROPERTIES = new Set([
  'is_muted',
  'in_home_view',
  'pin_to_top',
  'desktop_notifications',
  'audible_notifications',
  'push_notifications',
  'email_notifications',
  'wildcard_mentions_notify',
]);
const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

/**
 * PATCH /users/me/subscriptions/{id} and POST .../properties: personal
 * settings of channels the caller is subscribed to. in_home_view is the
 * legacy inverse of is_muted; a change to either publishes an event for
 * each of the two (Zulip, feature level 139). All changes or none.
 */
export async function doUpdateSubscriptionProperties(ctx: AppContext, viewer: Viewer, changes: PropertyChange[]): Promise<void> {
  const updates: Array<{ recipientId: number; column: string; value: unknown; events: Array<[string, unknown]>; streamId: number }> = [];
  for (const c of changes) {
    const channel = await getChannelById(ctx.db, viewer.user.realm_id, c.stream_id);
    if (!channel || !canSeeChannel(viewer, channel)) throw new ApiError('Invalid channel ID');
    if (!(await getActiveSubscription(ctx.db, viewer.user.id, channel.recipient_id))) {
      throw new ApiError(`Not subscribed to channel ID ${c.stream_id}`);
    }
    if (c.property === 'color') {
      if (typeof c.value !== 'string' || !HEX_COLOR.test(c.value)) throw new ApiError('color is not a valid hex color code');
      updates.push({
        recipientId: channel.recipient_id,
        column: 'color',
        value: c.value.toLowerCase(),
        events: [['color', c.value.toLowerCase()]],
        streamId: channel.id,
      });
      continue;
    }
    if (!BOOLEAN_PROPERTIES.has(c.property)) throw new ApiError(`Unknown subscription property: ${c.property}`);
    if (typeof c.value !== 'boolean') throw new ApiError(`${c.property} is not a boolean`);
    if (c.property === 'is_muted' || c.property === 'in_home_view') {
      const muted = c.property === 'is_muted' ? c.value : !c.value;
      updates.push({
        recipientId: channel.recipient_id,
        column: 'is_muted',
        value: muted,
        events: [
          ['in_home_view', !muted],
          ['is_muted', muted],
        ],
        streamId: channel.id,
      });
    } else {
      updates.push({
        recipientId: channel.recipient_id,
        column: c.property,
        value: c.value,
        events: [[c.property, c.value]],
        streamId: channel.id,
      });
    }
  }
  await inTransaction(ctx.db, async (tx) => {
    for (const u of updates) {
      await tx
        .trx('subscriptions')
        .where({ user_id: viewer.user.id, recipient_id: u.recipientId })
        .update({ [u.column]: u.value });
      for (const [property, value] of u.events) {
        tx.afterCommit(() =>
          ctx.bus.publish({
            event: { type: 'subscription', op: 'update', stream_id: u.streamId, property, value },
            userIds: [viewer.user.id],
          }),
        );
      }
    }
  });
}
