import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction, Tx } from '../db/transaction';
import { channelNameKey, checkChannelName, isHexColor, MAX_CHANNEL_DESCRIPTION_LENGTH } from '../domain/channels';
import { isAdminRole, isGuestRole } from '../domain/roles';
import { boundedList } from '../domain/bounded';
import { ApiError } from '../errors';
import { canSeeChannel, inGroup, isAdminViewer, Caller, Viewer } from '../access/viewer';
import { ChannelRow, getChannelById, getChannelByName, getChannelsByNames } from '../queries/channels';
import type { RealmRow, UserRow } from '../queries/rows';
import { listUsersByApiEmails, listUsersByIds } from '../queries/users';
import { channelSettingsFromParams, checkCanCreateChannel, createChannelInTx, subscribeInTx, unsubscribeInTx } from './channels';
import { queueChannelCreated, queueDefaultStreams, queueSubscribed, queueUnsubscribed } from './channel-events';
import { announceNewChannelInTx, notifySubscribedInTx } from './notifications';

/** Principals: user ids or API emails of active users of the realm ("No such user" otherwise, 400 since feature level 208). */
export async function resolvePrincipals(ctx: AppContext, viewer: Viewer, given: Schema<'Principals'> | undefined): Promise<UserRow[]> {
  if (given === undefined) return [viewer.user];
  const principals: ReadonlyArray<number | string> = given;
  const realmId = viewer.user.realm_id;
  const ids = principals.filter((p): p is number => typeof p === 'number');
  const emails = principals.filter((p): p is string => typeof p === 'string');
  const byId = new Map((await listUsersByIds(ctx.db, realmId, ids)).map((u) => [u.id, u]));
  const byEmail = await listUsersByApiEmails(ctx.db, realmId, emails);
  const users = new Map<number, UserRow>();
  for (const p of principals) {
    const user = typeof p === 'number' ? byId.get(p) : byEmail.get(p);
    if (!user || !user.is_active) throw new ApiError('No such user');
    users.set(user.id, user);
  }
  return [...users.values()];
}

/**
 * Whether the viewer may subscribe these users to an existing channel
 * (Zulip's rules since feature levels 342-357): themselves to a public
 * channel (not guests) or to one whose can_subscribe_group they are in;
 * others when in the realm's or the channel's can_add_subscribers_group or
 * administering it — for a private channel only with content access.
 */
export function canSubscribe(viewer: Viewer, realm: RealmRow, c: ChannelRow, users: UserRow[]): boolean {
  const others = users.some((u) => u.id !== viewer.user.id);
  const subscribed = viewer.subscribedRecipients.has(c.recipient_id);
  const admin = isAdminViewer(viewer);
  if (!canSeeChannel(viewer, c)) return false;
  if (others) {
    if (c.invite_only && !subscribed && !admin && !inGroup(viewer, c.can_administer_channel_group)) return false;
    if (isGuestRole(viewer.user.role)) return false;
    return (
      admin ||
      inGroup(viewer, realm.can_add_subscribers_group) ||
      inGroup(viewer, c.can_add_subscribers_group) ||
      inGroup(viewer, c.can_administer_channel_group)
    );
  }
  if (subscribed) return true;
  if (inGroup(viewer, c.can_subscribe_group)) return true;
  // Joining a private channel takes an invitation or can_subscribe_group, even for administrators.
  if (c.invite_only) return false;
  return !isGuestRole(viewer.user.role);
}

/**
 * POST /users/me/subscriptions: subscribes the principals to each named
 * channel, creating missing ones with the request's settings. Everything is
 * checked before anything is written, and it all happens in one transaction:
 * a failed request subscribes to none.
 */
export async function doSubscribe(ctx: AppContext, viewer: Caller, p: Params<'subscribe'>): Promise<Data<'subscribe'>> {
  const realm = viewer.realm;
  const users = await resolvePrincipals(ctx, viewer, p.principals);
  const fatal = p.authorization_errors_fatal;
  const items: Array<Schema<'SubscriptionRequestItem'> & { channel?: ChannelRow }> = [];
  const unauthorized: string[] = [];
  const seen = new Set<string>();
  const existing = await getChannelsByNames(
    ctx.db,
    realm.id,
    p.subscriptions.map((i) => i.name),
  );
  for (const item of p.subscriptions) {
    const name = checkChannelName(item.name);
    if (seen.has(channelNameKey(name))) continue;
    seen.add(channelNameKey(name));
    if (item.description !== undefined && [...item.description].length > MAX_CHANNEL_DESCRIPTION_LENGTH) {
      throw new ApiError(`Channel description too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters).`);
    }
    if (item.color !== undefined && !isHexColor(item.color)) throw new ApiError(`${item.color} is not a valid hex color code`);
    const channel = existing.get(channelNameKey(name));
    if (channel && !canSubscribe(viewer, realm, channel, users)) {
      if (fatal) {
        throw new ApiError(
          channel.invite_only && !canSeeChannel(viewer, channel) ? `Unable to access channel (${name}).` : 'Insufficient permission',
        );
      }
      unauthorized.push(channel.name);
      continue;
    }
    items.push({ name, description: item.description, color: item.color, channel });
  }
  const creation = channelSettingsFromParams(p);
  const toCreate = items.filter((i) => !i.channel);
  if (toCreate.length) {
    checkCanCreateChannel(viewer, realm, { ...creation, name: toCreate[0]!.name, subscriberIds: [] }, ctx.config.webPublicStreamsEnabled);
    if (users.some((u) => u.id !== viewer.user.id) && !isAdminRole(viewer.user.role) && !inGroup(viewer, realm.can_add_subscribers_group)) {
      throw new ApiError('Insufficient permission');
    }
  }

  const subscribed: Record<string, string[]> = {};
  const already: Record<string, string[]> = {};
  const result = await inTransaction(ctx.db, async (tx) => {
    for (const item of items) {
      // Someone may have created it since the checks above (a retried transaction sees it).
      let channel = item.channel ?? (await getChannelByName(tx.trx, realm.id, item.name));
      if (channel && !item.channel && !canSubscribe(viewer, realm, channel, users)) throw new ApiError('Insufficient permission');
      if (!channel) {
        const id = await createChannelInTx(tx, viewer.user, {
          ...creation,
          name: item.name,
          description: item.description,
          subscriberIds: [],
        });
        channel = (await getChannelById(tx.trx, realm.id, id))!;
        await queueChannelCreated(tx, ctx.bus, realm.id, id);
        if (creation.isDefault) await queueDefaultStreams(tx, ctx.bus, realm.id);
        if (p.announce) await announceNewChannelInTx(tx, ctx.bus, realm, viewer.user, item.name);
      }
      const colors = new Map(item.color ? users.map((u) => [u.id, item.color!]) : []);
      const by = { realmId: realm.id, actorId: viewer.user.id, channelId: channel.id };
      const added = await subscribeInTx(
        tx,
        channel.recipient_id,
        users.map((u) => u.id),
        colors,
        by,
      );
      await queueSubscribed(tx, ctx.bus, realm.id, channel.id, added);
      for (const u of users) {
        const bucket = added.includes(u.id) ? subscribed : already;
        (bucket[String(u.id)] ??= []).push(channel.name);
      }
    }
    let sent = false;
    if (p.send_new_subscription_messages) sent = await notifySubscribedInTx(tx, ctx.bus, realm, viewer.user, subscribed);
    return { sent };
  });
  const out: Data<'subscribe'> = { subscribed, already_subscribed: already };
  if (!fatal && unauthorized.length) out.unauthorized = unauthorized;
  if (users.some((u) => u.id !== viewer.user.id)) out.new_subscription_messages_sent = result.sent;
  return out;
}

/** The named channels, each once, all of which the viewer may know exist; else Zulip's error naming the others. */
async function channelsToLeave(ctx: AppContext, viewer: Viewer, names: readonly string[]): Promise<ChannelRow[]> {
  const channels: ChannelRow[] = [];
  const missing: string[] = [];
  const byName = await getChannelsByNames(ctx.db, viewer.user.realm_id, names);
  for (const name of names) {
    const c = byName.get(name.trim().toLowerCase());
    if (!c || !canSeeChannel(viewer, c)) missing.push(name);
    else if (!channels.includes(c)) channels.push(c);
  }
  if (missing.length) throw new ApiError(`Channel(s) (${boundedList(missing)}) do not exist`);
  return channels;
}

/**
 * PATCH /users/me/subscriptions: Zulip's update_subscriptions_backend, the
 * caller joining the `add` channels (created when missing, with Zulip's
 * defaults) and leaving the `delete` ones, answered with both answers
 * merged. Zulip runs the two in one transaction; here the channels to
 * leave are checked before anything is joined, so a request whose `delete`
 * names a channel the caller may not know fails before it changes
 * anything.
 */
export async function doUpdateSubscriptions(
  ctx: AppContext,
  viewer: Caller,
  p: Params<'update-subscriptions'>,
): Promise<Data<'update-subscriptions'>> {
  const add = p.add ?? [];
  const remove = p.delete ?? [];
  if (add.length === 0 && remove.length === 0) throw new ApiError('Nothing to do. Specify at least one of "add" or "delete".');
  if (remove.length) await channelsToLeave(ctx, viewer, remove);
  const added = add.length
    ? await doSubscribe(ctx, viewer, {
        subscriptions: add,
        // POST /users/me/subscriptions' defaults (the contract's), as Zulip's composed view uses them.
        authorization_errors_fatal: true,
        announce: false,
        invite_only: false,
        is_web_public: false,
        is_default_stream: false,
        topics_policy: 'inherit',
        default_push_notifications: false,
        send_new_subscription_messages: true,
      })
    : { subscribed: {}, already_subscribed: {} };
  const removed = remove.length ? await doUnsubscribe(ctx, viewer, { subscriptions: remove }) : { removed: [], not_removed: [] };
  return { ...added, ...removed };
}

/**
 * DELETE /users/me/subscriptions. Removing others needs the channel's
 * can_remove_subscribers_group (administrators by default).
 */
export async function doUnsubscribe(ctx: AppContext, viewer: Viewer, p: Params<'unsubscribe'>): Promise<Data<'unsubscribe'>> {
  const users = await resolvePrincipals(ctx, viewer, p.principals);
  const channels = await channelsToLeave(ctx, viewer, p.subscriptions);
  const others = users.some((u) => u.id !== viewer.user.id);
  for (const c of channels) {
    if (
      others &&
      !isAdminRole(viewer.user.role) &&
      !inGroup(viewer, c.can_remove_subscribers_group) &&
      !inGroup(viewer, c.can_administer_channel_group)
    ) {
      throw new ApiError('Insufficient permission');
    }
  }
  const removed: string[] = [];
  const notRemoved: string[] = [];
  await inTransaction(ctx.db, async (tx: Tx) => {
    for (const c of channels) {
      const was = await unsubscribeInTx(
        tx,
        c.recipient_id,
        users.map((u) => u.id),
        { realmId: c.realm_id, actorId: viewer.user.id, channelId: c.id },
      );
      await queueUnsubscribed(tx, ctx.bus, c, was);
      for (const u of users) (was.includes(u.id) ? removed : notRemoved).push(c.name);
    }
  });
  return { removed, not_removed: notRemoved };
}
