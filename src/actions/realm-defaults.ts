import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { AuditEventType, valueChange } from '../domain/audit';
import { isAdminRole } from '../domain/roles';
import { NOTIFICATION_SOUNDS, parseSettings, UserSettingName } from '../domain/user-settings';
import { adminRequired, ApiError } from '../errors';
import { insertAuditLog } from '../queries/audit';
import { getRealmUserDefaultsRaw } from '../queries/realms';
import type { UserRow } from '../queries/rows';
import { listActiveUserIds, setRealmUserDefaultsRaw } from '../queries/users';

/** The notification sounds Zulip ships (static/audio/notification_sounds); "none" turns sounds off. */

/** The interface languages Zulip offers (its language_name_map), by code. */
export const LANGUAGE_CODES: ReadonlySet<string> = new Set([
  'ar',
  'be',
  'bg',
  'bn',
  'ca',
  'cs',
  'cy',
  'da',
  'de',
  'el',
  'en',
  'en_GB',
  'eo',
  'es',
  'fa',
  'fi',
  'fr',
  'gl',
  'gu',
  'hi',
  'hu',
  'id',
  'it',
  'ja',
  'ko',
  'lt',
  'lv',
  'ml',
  'mn',
  'nl',
  'no',
  'pl',
  'pt',
  'pt_BR',
  'pt_PT',
  'ro',
  'ru',
  'si',
  'sk',
  'sr',
  'sv',
  'ta',
  'te',
  'tl',
  'tr',
  'uk',
  'uz',
  'vi',
  'zh-hans',
  'zh-hant',
  'zh_TW',
]);

const MAX_BATCHING_PERIOD_SECONDS = 7 * 24 * 3600;

/**
 * The checks the contract leaves to the server because Zulip words them
 * itself (the enums, types and ranges are the schema's). Also maps the
 * legacy web_home_view value recent_topics, which Zulip clients still
 * send, to recent.
 */
export function checkRealmDefaults(input: Record<string, unknown>): Record<string, unknown> {
  const out = { ...input };
  const sound = out.notification_sound;
  if (sound !== undefined && sound !== 'none' && !(NOTIFICATION_SOUNDS as readonly unknown[]).includes(sound)) {
    throw new ApiError(`Invalid notification sound '${String(sound)}'`);
  }
  if (out.default_language !== undefined && !LANGUAGE_CODES.has(String(out.default_language))) {
    throw new ApiError('Invalid default_language');
  }
  const period = out.email_notifications_batching_period_seconds;
  if (period !== undefined && (Number(period) <= 0 || Number(period) > MAX_BATCHING_PERIOD_SECONDS)) {
    throw new ApiError(`Invalid email batching period: ${String(period)} seconds`);
  }
  if (out.web_home_view === 'recent_topics') out.web_home_view = 'recent';
  return out;
}

/**
 * PATCH /realm/user_settings_defaults: stores the new defaults, which only
 * users created afterwards copy (createUserInTx). One
 * realm_user_settings_defaults update event per setting whose value
 * changed, to the organization's active users, after commit.
 */
export async function doUpdateRealmUserDefaults(ctx: AppContext, actor: UserRow, input: Record<string, unknown>): Promise<void> {
  if (!isAdminRole(actor.role)) throw adminRequired();
  const wanted = checkRealmDefaults(input);
  await inTransaction(ctx.db, async (tx) => {
    const settings: Record<string, unknown> = parseSettings(await getRealmUserDefaultsRaw(tx.trx, actor.realm_id));
    const changed = (Object.keys(wanted) as UserSettingName[]).filter((k) => settings[k] !== wanted[k]);
    if (changed.length === 0) return;
    await insertAuditLog(
      tx.trx,
      changed.map((k) => ({
        realmId: actor.realm_id,
        actorId: actor.id,
        eventType: AuditEventType.REALM_DEFAULT_USER_SETTINGS_CHANGED,
        extra: valueChange(settings[k], wanted[k], k),
      })),
    );
    for (const k of changed) settings[k] = wanted[k];
    await setRealmUserDefaultsRaw(tx.trx, actor.realm_id, JSON.stringify(settings));
    const audience = await listActiveUserIds(tx.trx, actor.realm_id);
    tx.afterCommit(() => {
      for (const property of changed) {
        ctx.bus.publish({
          event: { type: 'realm_user_settings_defaults', op: 'update', property, value: wanted[property] },
          userIds: audience,
        });
      }
    });
  });
}
