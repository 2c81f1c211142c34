import type { Params, Schema } from '../contract';
import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { AuditEventType, valueChange } from '../domain/audit';
import { isAdminRole } from '../domain/roles';
import { isRealmDefaultName, NOTIFICATION_SOUNDS, parseSettings, RealmDefaultName, RealmUserDefaults } from '../domain/user-settings';
import { adminRequired, ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { isLanguageCode } from '../domain/languages';
import { insertAuditLog } from '../queries/audit';
import { getRealmUserDefaultsRaw } from '../queries/realms';
import type { UserRow } from '../queries/rows';
import { listActiveUserIds, setRealmUserDefaultsRaw } from '../queries/users';

const MAX_BATCHING_PERIOD_SECONDS = 7 * 24 * 3600;

type DefaultsRequest = Params<'update-realm-user-settings-defaults'>;
type DefaultValue = RealmUserDefaults[RealmDefaultName];

/**
 * The checks the contract leaves to the server because Zulip words them
 * itself (the enums, types and ranges are the schema's). Also maps the
 * legacy web_home_view value recent_topics, which Zulip clients still
 * send, to recent. The settings keep the order they were sent in.
 */
export function checkRealmDefaults(input: DefaultsRequest): Partial<RealmUserDefaults> {
  const sound = input.notification_sound;
  if (sound !== undefined && sound !== 'none' && !NOTIFICATION_SOUNDS.includes(sound)) {
    throw new ApiError(`Invalid notification sound '${sound}'`);
  }
  if (input.default_language !== undefined && !isLanguageCode(input.default_language)) {
    throw new ApiError('Invalid default_language');
  }
  const period = input.email_notifications_batching_period_seconds;
  if (period !== undefined && (period <= 0 || period > MAX_BATCHING_PERIOD_SECONDS)) {
    throw new ApiError(`Invalid email batching period: ${period} seconds`);
  }
  const { web_home_view: home, ...others } = input;
  if (home === undefined) return others;
  return { ...input, web_home_view: home === 'recent_topics' ? 'recent' : home };
}

/**
 * PATCH /realm/user_settings_defaults: stores the new defaults, which only
 * users created afterwards copy (createUserInTx). One
 * realm_user_settings_defaults update event per setting whose value
 * changed, to the organization's active users, after commit.
 */
export async function doUpdateRealmUserDefaults(ctx: AppContext, actor: UserRow, input: DefaultsRequest): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  const wanted = checkRealmDefaults(input);
  await inTransaction(ctx.db, async (tx) => {
    const settings = parseSettings(await getRealmUserDefaultsRaw(tx.trx, actor.realm_id));
    const changes: Array<{ property: RealmDefaultName; old: DefaultValue; value: DefaultValue }> = [];
    for (const property of Object.keys(wanted).filter(isRealmDefaultName)) {
      const value = wanted[property];
      if (value !== undefined && value !== settings[property]) changes.push({ property, old: settings[property], value });
    }
    if (changes.length === 0) return;
    await insertAuditLog(
      tx.trx,
      changes.map(({ property, old, value }) => ({
        realmId: actor.realm_id,
        actorId: actor.id,
        eventType: AuditEventType.REALM_DEFAULT_USER_SETTINGS_CHANGED,
        extra: valueChange(old, value, property),
      })),
    );
    const updated = { ...settings, ...Object.fromEntries(changes.map(({ property, value }) => [property, value])) };
    await setRealmUserDefaultsRaw(tx.trx, actor.realm_id, JSON.stringify(updated));
    const audience = await listActiveUserIds(tx.trx, actor.realm_id);
    tx.afterCommit(() => {
      for (const { property, value } of changes) {
        const event: EventBody<Schema<'RealmUserSettingsDefaultsEvent'>> = {
          type: 'realm_user_settings_defaults',
          op: 'update',
          property,
          value,
        };
        ctx.bus.publish({ event, userIds: audience });
      }
    });
  });
}
