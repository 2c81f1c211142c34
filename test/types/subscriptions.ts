/**
 * Compile-time checks (`tsc --noEmit`, part of `make test`; jest does not
 * run this file): the channel serializers and actions are typed by the
 * contract, so a wire object missing a required field, or an action taking
 * a request shape the contract does not send, does not compile. Each
 * `@ts-expect-error` fails the type check if the error it expects goes away.
 */
import type { Data, Params, Schema } from '../../src/contract';
import type { ChannelCreationSettings } from '../../src/actions/channels';
import type { ChannelGroupSetting } from '../../src/domain/group-settings';
import type { ChannelRow, SubscriptionRow } from '../../src/queries/channels';
import {
  ChannelViewOptions,
  toApiBasicChannel,
  toApiSubscription,
  toApiSubscriptionPeerEvent,
  toApiSubscriptionRemoveEvent,
  Unnumbered,
} from '../../src/serializers/subscriptions';

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

// The serializers return the contract's objects, not a loose record.
export const subscriptionIsContract: Equals<ReturnType<typeof toApiSubscription>, Schema<'Subscription'>> = true;
export const basicChannelIsContract: Equals<ReturnType<typeof toApiBasicChannel>, Schema<'BasicChannel'>> = true;

// The channel permission settings Parley stores are exactly those the contract's channel objects carry.
export const sameGroupSettings: Equals<ChannelGroupSetting, Extract<keyof Schema<'BasicChannel'>, `can_${string}`>> = true;

// A subscription without a required field is not a Subscription.
export function withoutColor(c: ChannelRow, sub: SubscriptionRow, o: ChannelViewOptions): Schema<'Subscription'> {
  const { color: _color, ...rest } = toApiSubscription(c, sub, o);
  // @ts-expect-error color is required by the contract
  return rest;
}

// Nor a channel without its permission settings.
export function withoutSettings(c: ChannelRow, o: ChannelViewOptions): Schema<'BasicChannel'> {
  const { can_send_message_group: _setting, ...rest } = toApiBasicChannel(c, o);
  // @ts-expect-error can_send_message_group is required by the contract
  return rest;
}

// A field the contract does not have is refused (additionalProperties: false).
export function withExtra(c: ChannelRow, o: ChannelViewOptions): Schema<'BasicChannel'> {
  const channel = toApiBasicChannel(c, o);
  // @ts-expect-error the contract has no stream_name
  return { ...channel, stream_name: channel.name } satisfies Schema<'BasicChannel'>;
}

// Events: ops and fields as the contract names them.
export const peerOps: Equals<Parameters<typeof toApiSubscriptionPeerEvent>[0], 'peer_add' | 'peer_remove'> = true;
export const removeEvent: Equals<ReturnType<typeof toApiSubscriptionRemoveEvent>, Unnumbered<Schema<'SubscriptionRemoveEvent'>>> = true;
// @ts-expect-error a remove event names each channel by stream_id and name
export const badRemove: Unnumbered<Schema<'SubscriptionRemoveEvent'>> = { type: 'subscription', op: 'remove', subscriptions: [{ id: 1 }] };

// Both channel-creating requests carry the creation settings the action maps.
export const fromCreate = (p: Params<'create-channel'>): ChannelCreationSettings => p;
export const fromSubscribe = (p: Params<'subscribe'>): ChannelCreationSettings => p;

// The subscribe response: the maps are required, unauthorized optional.
export const subscribeBody: Data<'subscribe'> = { subscribed: { '10': ['design'] }, already_subscribed: {} };
// @ts-expect-error already_subscribed is required
export const partialBody: Data<'subscribe'> = { subscribed: {} };
