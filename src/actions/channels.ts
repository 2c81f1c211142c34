import type { Params, Schema } from '../contract';
import type { Tx } from '../db/transaction';
import { AuditEntry, AuditEventType } from '../domain/audit';
import { channelNameKey, checkChannelName, MAX_CHANNEL_DESCRIPTION_LENGTH, SUBSCRIPTION_COLORS } from '../domain/channels';
import { CHANNEL_GROUP_SETTINGS, CHANNEL_SETTING_RULES, ChannelGroupSetting, GroupSettingValue } from '../domain/group-settings';
import { isAdminRole, isGuestRole, isOwnerRole } from '../domain/roles';
import { adminRequired, ApiError, ownerRequired } from '../errors';
import { renderMarkdown } from '../markdown/render';
import { canCreateChannelKind } from '../access/channels';
import { inGroup, Viewer } from '../access/viewer';
import { insertAuditLog } from '../queries/audit';
import {
  deactivateSubscriptions,
  getActiveChannelFolderId,
  getChannelByName,
  getSubscriptionStatus,
  insertChannel,
  insertChannelRecipient,
  insertSubscription,
  listActiveSubscriberIdsAmong,
  listSubscriptionColors,
  reactivateSubscription,
  updateSubscriberCount,
} from '../queries/channels';
import { addGroupMembers, getSystemGroupIds, insertGroup } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import type { RealmRow, UserRow } from '../queries/rows';
import { storeGroupSettingInTx } from './group-settings';
import { noteIdleSubscribeInTx, noteIdleUnsubscribeInTx } from './idle-subscriptions';

/**
 * The creation settings POST /channels/create and POST /users/me/subscriptions
 * share, as the contract types them (both requests are assignable to it).
 */
export type ChannelCreationSettings = Pick<
  Params<'create-channel'>,
  | 'invite_only'
  | 'is_web_public'
  | 'is_default_stream'
  | 'history_public_to_subscribers'
  | 'message_retention_days'
  | 'topics_policy'
  | 'folder_id'
  | ChannelGroupSetting
>;

/**
 * What createChannelInTx makes: internal, for the two endpoints
 * (channelSettingsFromParams), the demo organization, the benchmark
 * dataset and tests. Each setting is typed by the contract's field; unset
 * ones take Zulip's defaults.
 */
export interface NewChannel {
  name: string;
  description?: string;
  inviteOnly?: ChannelCreationSettings['invite_only'];
  isWebPublic?: ChannelCreationSettings['is_web_public'];
  historyPublicToSubscribers?: ChannelCreationSettings['history_public_to_subscribers'];
  isDefault?: ChannelCreationSettings['is_default_stream'];
  /** 'realm_default' (inherit), 'unlimited' (-1), or a positive number of days. */
  messageRetentionDays?: ChannelCreationSettings['message_retention_days'];
  topicsPolicy?: ChannelCreationSettings['topics_policy'];
  folderId?: ChannelCreationSettings['folder_id'];
  groupSettings?: Partial<Pick<ChannelCreationSettings, ChannelGroupSetting>>;
  /** Resolved user ids (the requests name users by id or email). */
  subscriberIds: number[];
}

/** Maps creation parameters (POST /channels/create, POST /users/me/subscriptions) to a NewChannel's settings. */
export function channelSettingsFromParams(p: ChannelCreationSettings): Omit<NewChannel, 'name' | 'subscriberIds'> {
  const groupSettings: Partial<Record<ChannelGroupSetting, GroupSettingValue>> = {};
  for (const setting of CHANNEL_GROUP_SETTINGS) {
    const value = p[setting];
    if (value !== undefined) groupSettings[setting] = value;
  }
  return {
    inviteOnly: p.invite_only,
    isWebPublic: p.is_web_public,
    isDefault: p.is_default_stream,
    historyPublicToSubscribers: p.history_public_to_subscribers,
    messageRetentionDays: p.message_retention_days,
    topicsPolicy: p.topics_policy,
    folderId: p.folder_id,
    groupSettings,
  };
}

/** message_retention_days as stored: NULL inherits the organization's, -1 keeps forever. */
export function parseRetentionDays(value: Schema<'MessageRetentionDaysValue'> | undefined): number | null {
  if (value === undefined || value === 'realm_default') return null;
  if (value === 'unlimited') return -1;
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  throw new ApiError(`Bad value for 'message_retention_days': ${value}`);
}

/**
 * Who may create a channel like this, as Zulip decides: guests never; the
 * realm's can_create_{public,private,web_public}_channel_group; default
 * channels by administrators (and never private ones); a retention period by
 * owners; web-public channels only when the server and organization allow
 * spectators.
 */
export function checkCanCreateChannel(viewer: Viewer, realm: RealmRow, c: NewChannel, webPublicEnabled: boolean): void {
  if (isGuestRole(viewer.user.role)) throw new ApiError('Not allowed for guest users');
  if (c.isWebPublic) {
    if (c.inviteOnly) throw new ApiError('A web-public channel cannot be private.');
    if (!webPublicEnabled || !realm.enable_spectator_access) throw new ApiError('Web-public channels are not enabled.');
  }
  const kind = c.isWebPublic ? 'web_public' : c.inviteOnly ? 'private' : 'public';
  if (!canCreateChannelKind(viewer, realm, kind, webPublicEnabled)) throw new ApiError('Insufficient permission');
  if (c.isDefault) {
    if (!isAdminRole(viewer.user.role)) throw adminRequired();
    if (c.inviteOnly) throw new ApiError('A default channel cannot be private.');
  }
  if (c.messageRetentionDays !== undefined && c.messageRetentionDays !== 'realm_default' && !isOwnerRole(viewer.user.role)) {
    throw ownerRequired();
  }
  parseRetentionDays(c.messageRetentionDays);
  if (c.topicsPolicy !== undefined && c.topicsPolicy !== 'inherit' && !inGroup(viewer, realm.can_set_topics_policy_group)) {
    throw new ApiError('Insufficient permission');
  }
  if (c.description !== undefined && [...c.description].length > MAX_CHANNEL_DESCRIPTION_LENGTH) {
    throw new ApiError(`Channel description too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters).`);
  }
}

/**
 * Creates a channel with its recipient, permission groups (Zulip's defaults
 * unless given; the creator alone administers it by default) and the
 * initial subscriptions. Runs in the caller's transaction; permission
 * checks are the caller's (checkCanCreateChannel).
 */
export async function createChannelInTx(tx: Tx, creator: UserRow, input: NewChannel): Promise<number> {
  const { trx } = tx;
  const name = checkChannelName(input.name);
  if (await getChannelByName(trx, creator.realm_id, name)) {
    throw new ApiError(`Channel '${name}' already exists`, 'CHANNEL_ALREADY_EXISTS', 409);
  }
  if (input.folderId !== undefined && (await getActiveChannelFolderId(trx, creator.realm_id, input.folderId)) === undefined) {
    throw new ApiError('Invalid channel folder ID');
  }
  const inviteOnly = input.inviteOnly ?? false;
  // Public channels always share their history (Zulip has no public channel without it).
  const historyPublic = inviteOnly ? (input.historyPublicToSubscribers ?? false) : true;
  const system = await getSystemGroupIds(trx, creator.realm_id);
  const now = nowSeconds();
  // Filled for every setting by the loop below.
  const settings = {} as Record<ChannelGroupSetting, number>;
  for (const setting of CHANNEL_GROUP_SETTINGS) {
    const rule = CHANNEL_SETTING_RULES[setting];
    const given = input.groupSettings?.[setting];
    if (given !== undefined) {
      settings[setting] = await storeGroupSettingInTx(tx, creator.realm_id, setting, given, rule);
    } else if (rule.default === 'creator') {
      const group = await insertGroup(trx, { realm_id: creator.realm_id, name: null, date_created: now });
      await addGroupMembers(trx, group, [creator.id]);
      settings[setting] = group;
    } else {
      settings[setting] = system.get(rule.default)!;
    }
  }
  // Zulip: in a private channel with protected history, everyone who can post may start topics.
  if (inviteOnly && !historyPublic && settings.can_create_topic_group !== system.get('role:everyone')) {
    throw new ApiError("'can_create_topic_group' must be the role:everyone group in private channels with protected history.");
  }
  const description = input.description ?? '';
  const channelId = await insertChannel(trx, {
    realm_id: creator.realm_id,
    name,
    name_key: channelNameKey(name),
    description,
    rendered_description: renderMarkdown(description),
    invite_only: inviteOnly,
    is_web_public: input.isWebPublic ?? false,
    history_public_to_subscribers: historyPublic,
    is_default: input.isDefault ?? false,
    message_retention_days: parseRetentionDays(input.messageRetentionDays),
    topics_policy: input.topicsPolicy ?? 'inherit',
    folder_id: input.folderId ?? null,
    creator_id: creator.id,
    date_created: now,
    ...settings,
  });
  const recipientId = await insertChannelRecipient(trx, channelId);
  // The row keeps the settings and permission groups the channel starts with (no action changes them afterwards yet).
  await insertAuditLog(trx, {
    realmId: creator.realm_id,
    actorId: creator.id,
    channelId,
    eventType: AuditEventType.CHANNEL_CREATED,
    extra: {
      name,
      invite_only: inviteOnly,
      is_web_public: input.isWebPublic ?? false,
      history_public_to_subscribers: historyPublic,
      permission_groups: settings,
    },
  });
  await subscribeInTx(tx, recipientId, input.subscriberIds, undefined, { realmId: creator.realm_id, actorId: creator.id, channelId });
  return channelId;
}

/**
 * Who changes subscriptions, for the audit log. It records the
 * subscriptions someone (or, with a null actor, the system) changes for
 * other people; changing one's own is not an administrative change.
 */
export interface SubscriptionAudit {
  realmId: number;
  actorId: number | null;
  channelId: number;
}

function subscriptionAuditRows(by: SubscriptionAudit | null, userIds: number[], eventType: AuditEntry['eventType']): AuditEntry[] {
  if (!by) return [];
  return userIds.filter((id) => id !== by.actorId).map((userId) => ({ ...by, userId, eventType }));
}

/**
 * Adds (or reactivates) subscriptions and keeps the channel's
 * subscriber_count; new ones get the next palette color the user does not
 * use yet. Returns the users who were not subscribed before.
 */
export async function subscribeInTx(
  tx: Tx,
  recipientId: number,
  userIds: number[],
  colors: Map<number, string> = new Map(),
  by: SubscriptionAudit | null = null,
): Promise<number[]> {
  const added: number[] = [];
  const reactivated: number[] = [];
  for (const userId of new Set(userIds)) {
    const existing = await getSubscriptionStatus(tx.trx, userId, recipientId);
    if (existing) {
      if (!existing.active) {
        await reactivateSubscription(tx.trx, existing.id, userId);
        added.push(userId);
        reactivated.push(userId);
      }
      continue;
    }
    const used = new Set(await listSubscriptionColors(tx.trx, userId));
    const color =
      colors.get(userId) ?? SUBSCRIPTION_COLORS.find((c) => !used.has(c)) ?? SUBSCRIPTION_COLORS[used.size % SUBSCRIPTION_COLORS.length]!;
    await insertSubscription(tx.trx, { user_id: userId, recipient_id: recipientId, color });
    added.push(userId);
  }
  if (added.length) {
    await updateSubscriberCount(tx.trx, recipientId);
    // Idle users' rows here start now (ADR 0058): a catch-up must not give them the channel's past.
    await noteIdleSubscribeInTx(tx.trx, recipientId, added);
  }
  const created = added.filter((id) => !reactivated.includes(id));
  await insertAuditLog(tx.trx, [
    ...subscriptionAuditRows(by, created, AuditEventType.SUBSCRIPTION_CREATED),
    ...subscriptionAuditRows(by, reactivated, AuditEventType.SUBSCRIPTION_ACTIVATED),
  ]);
  return added;
}

/** Marks subscriptions inactive (settings are kept for a later re-subscribe). Returns who was subscribed. */
export async function unsubscribeInTx(
  tx: Tx,
  recipientId: number,
  userIds: number[],
  by: SubscriptionAudit | null = null,
): Promise<number[]> {
  const active = await listActiveSubscriberIdsAmong(tx.trx, recipientId, userIds);
  if (active.length) {
    // What idle users would have had here until now stays theirs to catch up (ADR 0058).
    await noteIdleUnsubscribeInTx(tx.trx, recipientId, active);
    await deactivateSubscriptions(tx.trx, recipientId, active);
    await updateSubscriberCount(tx.trx, recipientId);
    await insertAuditLog(tx.trx, subscriptionAuditRows(by, active, AuditEventType.SUBSCRIPTION_DEACTIVATED));
  }
  return active;
}
