import type { AppContext } from '../context';
import type { Params } from '../contract';
import { inTransaction, Tx } from '../db/transaction';
import { AuditEntry, AuditEventType, valueChange } from '../domain/audit';
import { channelNameKey, checkChannelName } from '../domain/channels';
import { CHANNEL_GROUP_SETTINGS, CHANNEL_SETTING_RULES, ChannelGroupSetting, GroupSettingValue } from '../domain/group-settings';
import { isAdminRole, isOwnerRole } from '../domain/roles';
import { ApiError, ownerRequired } from '../errors';
import { renderMarkdown } from '../markdown/render';
import { accessChannelForAdministration, canCreateChannelKind } from '../access/channels';
import { loadRealmGroups } from '../access/realm-groups';
import { canAccessChannelContent, inGroup, type Caller } from '../access/viewer';
import { insertAuditLog } from '../queries/audit';
import {
  ChannelRow,
  ChannelSettingColumns,
  getActiveChannelFolderId,
  getActiveSubscriberIds,
  getChannelById,
  getChannelByName,
  updateChannel,
} from '../queries/channels';
import { getSystemGroupIds } from '../queries/groups';
import { toApiBasicChannel, toApiStreamCreateEvent, toApiSubscriptionPeerEvent } from '../serializers/subscriptions';
import { parseRetentionDays } from './channels';
import { channelAudience, queueChannelUpdate } from './channel-events';
import { setDefaultChannelInTx } from './default-channels';
import { checkUnarchive, unarchiveChannelInTx } from './archive-channel';
import { storeGroupSettingInTx } from './group-settings';
import { countChannelSubscribers } from '../queries/register';

type UpdateParams = Params<'update-stream'>;

/** Zulip's stream_permission_group_settings_requiring_content_access: changing these needs content access. */
const NEEDS_CONTENT_ACCESS: ReadonlySet<ChannelGroupSetting> = new Set(['can_add_subscribers_group', 'can_subscribe_group']);

/**
 * A group-setting value in Zulip's canonical form (parse_group_setting_value):
 * an anonymous group of one subgroup and no members is that subgroup, and
 * an empty one is role:nobody.
 */
function canonical(value: GroupSettingValue, nobody: number): GroupSettingValue {
  if (typeof value === 'number') return value;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 1) return value.direct_subgroups[0]!;
  if (value.direct_members.length === 0 && value.direct_subgroups.length === 0) return nobody;
  return value;
}

const sameSet = (a: readonly number[], b: readonly number[]) => {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
};

/** Whether two canonical group-setting values are the same (Zulip's are_both_group_setting_values_equal). */
function sameGroupSetting(a: GroupSettingValue, b: GroupSettingValue): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  return sameSet(a.direct_members, b.direct_members) && sameSet(a.direct_subgroups, b.direct_subgroups);
}

/** What the request changes, worked out and checked before anything is written. */
interface Plan {
  privacy?: { invite_only: boolean; history_public_to_subscribers: boolean; is_web_public: boolean };
  isDefault?: boolean;
  retention?: number | null;
  unarchive?: true;
  topicsPolicy?: ChannelRow['topics_policy'];
  description?: string;
  name?: string;
  folderId?: number | null;
  groups: Array<{ setting: ChannelGroupSetting; value: GroupSettingValue }>;
}

/**
 * PATCH /streams/{stream_id}, as Zulip's update_stream_backend decides it:
 * the caller administers the channel (src/access/channels.ts); the proposed
 * privacy is checked as a whole (web-public channels are public with shared
 * history, public ones share history, default ones are public, the
 * moderation request channel stays private); changing privacy needs content
 * access and the right to create a channel of the new kind; default channels
 * need an administrator, a retention period an owner, a topics policy
 * can_set_topics_policy_group. The checks run in Zulip's order, but unlike
 * Zulip, which commits each change as it goes, every change is written in
 * one transaction: a request that fails changes nothing.
 */
export async function doUpdateChannel(ctx: AppContext, viewer: Caller, p: UpdateParams): Promise<void> {
  const realm = viewer.realm;
  const channel = await accessChannelForAdministration(ctx.db, viewer, p.stream_id);
  const plan: Plan = { groups: [] };

  const proposedPrivate = p.is_private ?? channel.invite_only;
  const proposedWebPublic = p.is_web_public ?? channel.is_web_public;
  const proposedDefault = p.is_default_stream ?? channel.is_default;
  // A change of privacy alone takes the new kind's usual history: protected for private channels.
  const proposedHistory =
    p.history_public_to_subscribers ?? (p.is_private !== undefined ? !p.is_private : channel.history_public_to_subscribers);
  if (proposedWebPublic && !proposedHistory) throw new ApiError('Invalid parameters');
  if (proposedWebPublic && proposedPrivate) throw new ApiError('Invalid parameters');
  if (!proposedPrivate && !proposedHistory) throw new ApiError('Invalid parameters');
  if (proposedPrivate && proposedDefault) throw new ApiError('A default channel cannot be private.');
  if (!proposedPrivate && realm.moderation_request_channel_id === channel.id) {
    throw new ApiError('Moderation request channel must be private.');
  }
  const contentAccess = canAccessChannelContent(viewer, channel);
  if (p.is_private !== undefined && !contentAccess) throw new ApiError('Channel content access is required.');
  const webPublicEnabled = ctx.config.webPublicStreamsEnabled;
  if (p.is_private !== undefined && !canCreateChannelKind(viewer, realm, p.is_private ? 'private' : 'public', webPublicEnabled)) {
    throw new ApiError('Insufficient permission');
  }
  if (p.is_web_public) {
    if (!webPublicEnabled || !realm.enable_spectator_access) throw new ApiError('Web-public channels are not enabled.');
    if (!canCreateChannelKind(viewer, realm, 'web_public', webPublicEnabled)) throw new ApiError('Insufficient permission');
  }
  if (p.is_private !== undefined || p.is_web_public !== undefined || p.history_public_to_subscribers !== undefined) {
    plan.privacy = { invite_only: proposedPrivate, history_public_to_subscribers: proposedHistory, is_web_public: proposedWebPublic };
  }
  if (p.is_default_stream !== undefined) {
    // Zulip's CannotManageDefaultChannelError, not the administrator-required error of POST /default_streams.
    if (!isAdminRole(viewer.user.role)) throw new ApiError('You do not have permission to change default channels.');
    plan.isDefault = p.is_default_stream;
  }
  if (p.message_retention_days !== undefined) {
    if (!isOwnerRole(viewer.user.role)) throw ownerRequired();
    plan.retention = parseRetentionDays(p.message_retention_days);
  }
  // Zulip unarchives after the retention period and before the topics policy.
  if (p.is_archived === false) {
    await checkUnarchive(ctx.db, channel, proposedPrivate);
    plan.unarchive = true;
  }
  if (p.topics_policy !== undefined) {
    if (!inGroup(viewer, realm.can_set_topics_policy_group)) throw new ApiError('Insufficient permission');
    plan.topicsPolicy = p.topics_policy;
  }
  // Zulip keeps descriptions on one line.
  if (p.description !== undefined) plan.description = p.description.replace(/\n/g, ' ');
  if (p.new_name !== undefined) {
    const name = p.new_name.trim();
    if (name === channel.name) throw new ApiError('Channel already has that name.');
    // A change of case only keeps the name's key: no other channel can hold it.
    if (channelNameKey(name) !== channel.name_key) {
      checkChannelName(name);
      if (await getChannelByName(ctx.db, realm.id, name)) throw new ApiError('Channel name already in use.');
    }
    plan.name = name;
  }
  if (p.folder_id !== undefined) {
    if (p.folder_id !== null && (await getActiveChannelFolderId(ctx.db, realm.id, p.folder_id)) === undefined) {
      throw new ApiError('Invalid channel folder ID');
    }
    plan.folderId = p.folder_id;
  }

  await inTransaction(ctx.db, async (tx) => {
    const current = (await getChannelById(tx.trx, realm.id, channel.id))!;
    const groups = await loadRealmGroups(tx.trx, realm.id);
    const nobody = (await getSystemGroupIds(tx.trx, realm.id)).get('role:nobody')!;
    const changes: Array<{ setting: ChannelGroupSetting; old: GroupSettingValue; value: GroupSettingValue }> = [];
    for (const setting of CHANNEL_GROUP_SETTINGS) {
      const requested = p[setting];
      if (requested === undefined) continue;
      const old = groups.lookup.value(current[setting]);
      const wanted = canonical(requested.new, nobody);
      if (requested.old !== undefined && !sameGroupSetting(canonical(requested.old, nobody), old)) {
        throw new ApiError("'old' value does not match the expected value.", 'EXPECTATION_MISMATCH');
      }
      if (sameGroupSetting(old, wanted)) continue;
      if (NEEDS_CONTENT_ACCESS.has(setting) && !contentAccess) throw new ApiError('Channel content access is required.');
      changes.push({ setting, old, value: wanted });
    }
    await applyPlan(tx, ctx, viewer, current, plan, changes);
  });
}

async function applyPlan(
  tx: Tx,
  ctx: AppContext,
  viewer: Caller,
  channel: ChannelRow,
  plan: Plan,
  groupChanges: Array<{ setting: ChannelGroupSetting; old: GroupSettingValue; value: GroupSettingValue }>,
): Promise<void> {
  const realmId = channel.realm_id;
  const audit: AuditEntry[] = [];
  const row = (eventType: AuditEntry['eventType'], extra: Record<string, unknown>): AuditEntry => ({
    realmId,
    actorId: viewer.user.id,
    channelId: channel.id,
    eventType,
    extra,
  });
  // Each event names the channel as it was called before the request.
  let c = channel;
  const update = async (changes: ChannelSettingColumns) => {
    await updateChannel(tx.trx, channel.id, changes);
    c = { ...c, ...changes, name: c.name, name_key: c.name_key };
  };

  if (plan.privacy) {
    const before = {
      invite_only: c.invite_only,
      history_public_to_subscribers: c.history_public_to_subscribers,
      is_web_public: c.is_web_public,
    };
    const changed = (Object.keys(before) as Array<keyof typeof before>).filter((k) => before[k] !== plan.privacy![k]);
    if (changed.length) {
      const oldAudience = await channelAudience(tx, c);
      await update(plan.privacy);
      for (const k of changed) audit.push(row(AuditEventType.CHANNEL_PROPERTY_CHANGED, valueChange(before[k], plan.privacy[k], k)));
      const newAudience = await channelAudience(tx, c);
      // As Zulip's do_change_stream_permission: who gains sight of the channel (a private one made
      // public) gets it as created, then its subscribers (a peer_add of them all), which it never
      // had; everyone else who may know it now gets the update. Who loses sight of it (public made
      // private) is told nothing: Zulip sends them no event.
      const gained = newAudience.filter((id) => !oldAudience.includes(id));
      if (gained.length) {
        const [groups, counts, subscribers] = await Promise.all([
          loadRealmGroups(tx.trx, realmId),
          countChannelSubscribers(tx.trx, realmId),
          getActiveSubscriberIds(tx.trx, c.recipient_id),
        ]);
        const event = toApiStreamCreateEvent([
          toApiBasicChannel(c, { groups: groups.lookup, subscriberCount: counts.get(c.recipient_id) ?? 0 }),
        ]);
        const peers = toApiSubscriptionPeerEvent(
          'peer_add',
          [c.id],
          subscribers.map(Number).sort((a, b) => a - b),
        );
        tx.afterCommit(() => {
          ctx.bus.publish({ event, userIds: gained });
          ctx.bus.publish({ event: peers, userIds: gained });
        });
      }
      // One invite_only update carries the other two privacy fields, whichever changed.
      await queueChannelUpdate(
        tx,
        ctx.bus,
        c,
        'invite_only',
        c.invite_only,
        { history_public_to_subscribers: c.history_public_to_subscribers, is_web_public: c.is_web_public },
        newAudience.filter((id) => !gained.includes(id)),
      );
    }
  }
  if (plan.isDefault !== undefined) await setDefaultChannelInTx(tx, ctx.bus, c, plan.isDefault);
  if (plan.retention !== undefined && plan.retention !== c.message_retention_days) {
    audit.push(row(AuditEventType.CHANNEL_MESSAGE_RETENTION_DAYS_CHANGED, valueChange(c.message_retention_days, plan.retention)));
    await update({ message_retention_days: plan.retention });
    await queueChannelUpdate(tx, ctx.bus, c, 'message_retention_days', plan.retention);
  }
  if (plan.unarchive) {
    // Again in the transaction: a concurrent unarchive or unsubscribe must not slip through.
    await checkUnarchive(tx.trx, c, c.invite_only);
    c = await unarchiveChannelInTx(tx, ctx.bus, c);
  }
  if (plan.topicsPolicy !== undefined && plan.topicsPolicy !== c.topics_policy) {
    audit.push(row(AuditEventType.CHANNEL_PROPERTY_CHANGED, valueChange(c.topics_policy, plan.topicsPolicy, 'topics_policy')));
    await update({ topics_policy: plan.topicsPolicy });
    await queueChannelUpdate(tx, ctx.bus, c, 'topics_policy', plan.topicsPolicy);
  }
  if (plan.description !== undefined && plan.description !== c.description) {
    const rendered = renderMarkdown(plan.description);
    audit.push(row(AuditEventType.CHANNEL_PROPERTY_CHANGED, valueChange(c.description, plan.description, 'description')));
    await update({ description: plan.description, rendered_description: rendered });
    await queueChannelUpdate(tx, ctx.bus, c, 'description', plan.description, { rendered_description: rendered });
  }
  if (plan.name !== undefined) {
    // Someone may have taken the name since the check (the unique key refuses it too).
    const holder = await getChannelByName(tx.trx, realmId, plan.name);
    if (holder && holder.id !== c.id) throw new ApiError('Channel name already in use.');
    audit.push(row(AuditEventType.CHANNEL_NAME_CHANGED, valueChange(c.name, plan.name)));
    await updateChannel(tx.trx, c.id, { name: plan.name, name_key: channelNameKey(plan.name) });
    await queueChannelUpdate(tx, ctx.bus, c, 'name', plan.name);
    c = { ...c, name: plan.name, name_key: channelNameKey(plan.name) };
  }
  if (plan.folderId !== undefined && plan.folderId !== c.folder_id) {
    audit.push(row(AuditEventType.CHANNEL_FOLDER_CHANGED, valueChange(c.folder_id, plan.folderId)));
    await update({ folder_id: plan.folderId });
    await queueChannelUpdate(tx, ctx.bus, c, 'folder_id', plan.folderId);
  }
  for (const g of groupChanges) {
    const id = await storeGroupSettingInTx(tx, realmId, g.setting, g.value, CHANNEL_SETTING_RULES[g.setting]);
    audit.push(row(AuditEventType.CHANNEL_GROUP_BASED_SETTING_CHANGED, valueChange(g.old, g.value, g.setting)));
    await update({ [g.setting]: id });
    await queueChannelUpdate(tx, ctx.bus, c, g.setting, g.value);
  }
  await insertAuditLog(tx.trx, audit);
}
