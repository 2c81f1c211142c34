import type { Data, Params, Schema } from '../contract';
import type { AppContext } from '../context';
import { loadRealmGroups } from '../access/realm-groups';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType, valueChange, type AuditEntry } from '../domain/audit';
import { REALM_GROUP_SETTINGS, REALM_SETTING_RULES, type GroupSettingValue, type RealmGroupSetting } from '../domain/group-settings';
import { isLanguageCode } from '../domain/languages';
import {
  canonicalGroupSettingValue,
  OWNER_ONLY_REALM_SETTINGS,
  parseRetentionDays,
  parseTimeLimit,
  REALM_CHANNEL_SETTINGS,
  REALM_TIME_LIMITS,
  sameGroupSettingValue,
  type RealmChannelSetting,
  type RealmProperty,
} from '../domain/realm-settings';
import { checkRealmName } from '../domain/realms';
import { isAdminRole, Role } from '../domain/roles';
import { adminRequired, ApiError, ownerRequired } from '../errors';
import type { EventBody } from '../events/bus';
import { renderMarkdown } from '../markdown/render';
import { insertAuditLog } from '../queries/audit';
import { getChannelById } from '../queries/channels';
import { getGroupsByIds } from '../queries/groups';
import { nowSeconds } from '../queries/ids';
import { deleteAnonymousGroup } from '../queries/realm-settings';
import { getRealmById, updateRealm } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { listActiveUserIds, listRealmUsers } from '../queries/users';
import { storeGroupSettingInTx } from './group-settings';
import { syncSystemGroupsInTx } from './user-groups';

type UpdateRealmRequest = Params<'update-realm'>;
type UpdateRealmData = Data<'update-realm'>;
type RealmEvent = EventBody<Schema<'RealmUpdateEvent'>> | EventBody<Schema<'RealmUpdateDictEvent'>>;
type PropertyValue = string | number | boolean | null;

/** One change to make: the column values to write, its audit row, its event and its entry in the answer. */
interface Change {
  columns: Partial<RealmRow>;
  audit: { old: unknown; new: unknown; property: string };
  event: RealmEvent;
  answer: Record<string, unknown>;
}

/** Zulip's OrganizationOwnerRequiredError for the settings only owners change. */
function checkOwnerOnly(actor: UserRow, input: UpdateRealmRequest, names: Iterable<string>): void {
  if (actor.role === Role.OWNER) return;
  for (const name of names) {
    if (OWNER_ONLY_REALM_SETTINGS.has(name) && input[name as keyof UpdateRealmRequest] !== undefined) throw ownerRequired();
  }
}

/**
 * The event Zulip's do_set_realm_property sends for a setting: the
 * editing settings, topics_policy and description "for their history" as
 * update_dict, the rest as update.
 */
function propertyEvent(realm: RealmRow, property: RealmProperty, value: PropertyValue): RealmEvent {
  switch (property) {
    case 'allow_message_editing':
    case 'message_content_edit_limit_seconds':
      return { type: 'realm', op: 'update_dict', property: 'default', data: { [property]: value } };
    case 'topics_policy':
      return {
        type: 'realm',
        op: 'update_dict',
        property: 'default',
        data: { topics_policy: realm.topics_policy, mandatory_topics: realm.topics_policy === 'disable_empty_topic' },
      };
    case 'description':
      return {
        type: 'realm',
        op: 'update_dict',
        property: 'default',
        data: { description: realm.description, rendered_description: renderMarkdown(realm.description) },
      };
    default:
      return { type: 'realm', op: 'update', property, value };
  }
}

/** The plain settings as the request gives them (parsed), in Zulip's order of checks. */
function wantedProperties(actor: UserRow, input: UpdateRealmRequest): Partial<Record<RealmProperty, PropertyValue>> {
  const wanted: Partial<Record<RealmProperty, PropertyValue>> = {};
  if (!isAdminRole(actor.role)) throw adminRequired();
  if (input.default_language !== undefined && !isLanguageCode(input.default_language)) {
    throw new ApiError(`Invalid language '${input.default_language}'`);
  }
  checkOwnerOnly(actor, input, ['message_retention_days']);
  if (input.message_retention_days !== undefined) wanted.message_retention_days = parseRetentionDays(input.message_retention_days);
  checkOwnerOnly(actor, input, OWNER_ONLY_REALM_SETTINGS);
  // Zulip stores any name it is given; an empty one would leave the organization nameless in every client, so Parley refuses it.
  if (input.name !== undefined) wanted.name = checkRealmName(input.name);
  for (const limit of REALM_TIME_LIMITS) {
    const raw = input[limit];
    if (raw !== undefined) wanted[limit] = parseTimeLimit(limit, raw);
  }
  const simple = [
    'description',
    'invite_required',
    'emails_restricted_to_domains',
    'disallow_disposable_email_addresses',
    'allow_message_editing',
    'message_edit_history_visibility_policy',
    'topics_policy',
    'waiting_period_threshold',
    'enable_spectator_access',
    'default_language',
    'enable_read_receipts',
  ] as const;
  for (const p of simple) if (input[p] !== undefined) wanted[p] = input[p]!;
  return wanted;
}

/** The property changes: only settings whose value differs, with Zulip's -1 for "keep for ever". */
function propertyChanges(realm: RealmRow, wanted: Partial<Record<RealmProperty, PropertyValue>>): Change[] {
  const changes: Change[] = [];
  const after = { ...realm } as RealmRow;
  for (const [property, value] of Object.entries(wanted) as Array<[RealmProperty, PropertyValue]>) {
    // A realm made before this setting could be changed keeps messages for ever as NULL: the same as -1.
    const old = property === 'message_retention_days' ? (realm.message_retention_days ?? -1) : realm[property];
    if (old === value) continue;
    (after as unknown as Record<string, unknown>)[property] = value;
    changes.push({
      columns: { [property]: value },
      audit: { old, new: value, property },
      event: propertyEvent(after, property, value),
      answer: {
        [property]:
          typeof value === 'string' && (property === 'name' || property === 'description' || property === 'default_language')
            ? 'updated'
            : value,
      },
    });
  }
  return changes;
}

/**
 * A channel-valued setting (Zulip's do_set_realm_stream): a channel of the
 * organization that is not archived (an administrator reaches private
 * ones too), or a negative number for none. The moderation channel must
 * be private. The event and the answer carry the number as sent.
 */
async function channelChange(tx: Tx, realm: RealmRow, setting: RealmChannelSetting, sent: number): Promise<Change | undefined> {
  const current = realm[setting];
  if (current !== null && current === sent) return undefined;
  if (current === null && sent < 0) return undefined;
  let stored: number | null = null;
  if (sent >= 0) {
    const channel = await getChannelById(tx.trx, realm.id, sent);
    if (!channel || channel.deactivated) throw new ApiError('Invalid channel ID');
    if (setting === 'moderation_request_channel_id' && !channel.invite_only) {
      throw new ApiError('Moderation request channel must be private.');
    }
    stored = channel.id;
  }
  return {
    columns: { [setting]: stored },
    // Zulip's audit rows name the field without its `_id`.
    audit: { old: current, new: sent, property: setting.replace(/_id$/, '') },
    event: { type: 'realm', op: 'update', property: setting, value: sent },
    answer: { [setting]: sent },
  };
}

/**
 * A group setting given as {new, old} (Zulip's update_realm): both in
 * canonical form; `old`, when given, must be the current value
 * (EXPECTATION_MISMATCH); a new value equal to the current one changes
 * nothing. The new value is checked and stored by storeGroupSettingInTx,
 * after the setting's own rules on system groups; an anonymous group the
 * setting held before is deleted, as Zulip deletes it.
 */
async function groupChange(
  tx: Tx,
  realm: RealmRow,
  setting: RealmGroupSetting,
  update: Schema<'GroupSettingValueUpdate'>,
  current: GroupSettingValue,
  nobodyId: number,
): Promise<{ change: Change; oldAnonymous: number | null } | undefined> {
  const wanted = canonicalGroupSettingValue(update.new, nobodyId);
  if (update.old !== undefined && !sameGroupSettingValue(canonicalGroupSettingValue(update.old, nobodyId), current)) {
    throw new ApiError("'old' value does not match the expected value.", 'EXPECTATION_MISMATCH');
  }
  if (sameGroupSettingValue(current, wanted)) return undefined;
  const rule = REALM_SETTING_RULES[setting];
  if ('requireSystemGroup' in rule && rule.requireSystemGroup) {
    const id = typeof wanted === 'number' ? wanted : undefined;
    const group = id === undefined ? undefined : (await getGroupsByIds(tx.trx, realm.id, [id])).get(id);
    if (id === undefined) throw new ApiError(`'${setting}' must be a system user group.`);
    if (group && group.name !== null && !group.deactivated) {
      if (!group.is_system_group) throw new ApiError(`'${setting}' must be a system user group.`);
      if (!(rule.allowedSystemGroups as readonly string[]).includes(group.name)) {
        throw new ApiError(`'${setting}' setting cannot be set to '${group.name}' group.`);
      }
    }
  }
  const groupId = await storeGroupSettingInTx(tx, realm.id, setting, wanted, rule);
  const old = realm[setting];
  const oldAnonymous = typeof current === 'number' || old === null ? null : old;
  return {
    change: {
      columns: { [setting]: groupId },
      audit: { old: current, new: wanted, property: setting },
      event: { type: 'realm', op: 'update_dict', property: 'default', data: { [setting]: wanted } },
      answer: { [setting]: wanted },
    },
    oldAnonymous,
  };
}

/**
 * PATCH /realm (Zulip's update_realm). Unlike Zulip, which applies the
 * settings one at a time and so can leave some changed when a later one is
 * refused, every check runs inside one transaction before it commits:
 * a refused request changes nothing. Each changed setting gets Zulip's
 * event (to every active user of the organization, after commit) and a
 * REALM_PROPERTY_CHANGED audit row with its old and new values. The realm
 * row's cache entry is invalidated by updateRealm, on every node.
 */
export async function doUpdateRealm(ctx: AppContext, actor: UserRow, input: UpdateRealmRequest): Promise<UpdateRealmData> {
  const wanted = wantedProperties(actor, input);
  return inTransaction(ctx.db, async (tx) => {
    const realm = (await getRealmById(tx.trx, actor.realm_id))!;
    if (input.string_id !== undefined) throw new ApiError('Must be a demo organization.');
    const changes = propertyChanges(realm, wanted);
    const oldAnonymous: number[] = [];
    const groupsSent = REALM_GROUP_SETTINGS.filter((s) => input[s] !== undefined);
    if (groupsSent.length) {
      const groups = await loadRealmGroups(tx.trx, realm.id);
      const nobodyId = groups.systemGroupId('role:nobody')!;
      for (const setting of groupsSent) {
        const made = await groupChange(tx, realm, setting, input[setting]!, groups.lookup.value(realm[setting]), nobodyId);
        if (!made) continue;
        changes.push(made.change);
        if (made.oldAnonymous !== null) oldAnonymous.push(made.oldAnonymous);
      }
    }
    for (const setting of REALM_CHANNEL_SETTINGS) {
      const sent = input[setting];
      const change = sent === undefined ? undefined : await channelChange(tx, realm, setting, sent);
      if (change) changes.push(change);
    }
    const answer: UpdateRealmData = {};
    if (changes.length === 0) return answer;
    const columns = Object.assign({}, ...changes.map((c) => c.columns)) as Partial<RealmRow>;
    await updateRealm(tx.trx, realm.id, columns);
    for (const id of oldAnonymous) await deleteAnonymousGroup(tx.trx, realm.id, id);
    await insertAuditLog(
      tx.trx,
      changes.map((c): AuditEntry => ({
        realmId: realm.id,
        actorId: actor.id,
        eventType: AuditEventType.REALM_PROPERTY_CHANGED,
        extra: valueChange(c.audit.old, c.audit.new, c.audit.property),
      })),
    );
    if (columns.waiting_period_threshold !== undefined) await syncFullMembers(ctx, tx, { ...realm, ...columns }, actor.id);
    const audience = await listActiveUserIds(tx.trx, realm.id);
    tx.afterCommit(() => {
      for (const c of changes) ctx.bus.publish({ event: c.event, userIds: audience });
    });
    return Object.assign(answer, ...changes.map((c) => c.answer)) as UpdateRealmData;
  });
}

/**
 * A new waiting period moves members in or out of role:fullmembers at once
 * (Zulip's update_users_in_full_members_system_group), with the group
 * membership events and audit rows of any role change.
 */
async function syncFullMembers(ctx: AppContext, tx: Tx, realm: RealmRow, actorId: number): Promise<void> {
  const now = nowSeconds();
  const members = (await listRealmUsers(tx.trx, realm.id)).filter((u) => u.is_active && u.role === Role.MEMBER);
  for (const user of members) await syncSystemGroupsInTx(tx, ctx.bus, user, realm, now, actorId);
}
