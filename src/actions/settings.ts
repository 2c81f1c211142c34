import type { Params, Schema } from '../contract';
import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { AuditEntry, AuditEventType, AuditExtra, valueChange } from '../domain/audit';
import { isKnownTimeZone, LANGUAGE_NAMES } from '../domain/languages';
import { hashPassword, isPasswordStrongEnough, verifyPassword } from '../domain/secrets';
import { isRealmDefaultName, parseSettings, UserSettings } from '../domain/user-settings';
import { checkFullName, emailKey } from '../domain/users';
import { ApiError, noSuchUser } from '../errors';
import { insertAuditLog } from '../queries/audit';
import type { UserRow } from '../queries/rows';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { getUserInRealm, updateUser } from '../queries/users';
import { toApiRealmUserUpdateEvent, toApiUserSettingsUpdateEvent } from '../serializers/users';
import { doPresenceEnabledChanged } from './presence';
import { checkRealmDefaults } from './realm-defaults';
import { deleteAllDrafts } from '../queries/drafts';
import { nowSeconds } from '../queries/ids';
import { setPasswordInTx } from './passwords';

type SettingsRequest = Params<'update-settings'>;
type PersonalSetting = 'allow_private_data_export' | 'enable_login_emails' | 'enable_marketing_emails';
type SettingChange = { property: keyof UserSettings; old: UserSettings[keyof UserSettings]; value: UserSettings[keyof UserSettings] };

/**
 * The settings a request asks for, checked as the organization defaults
 * are (Zulip validates both with the same rules), plus the three settings
 * organizations set no default for. Timezone is checked here; it lives in
 * its own column (the user object carries it too).
 */
function checkSettings(p: SettingsRequest): Partial<UserSettings> {
  const wanted: Partial<UserSettings> = {};
  const defaults = checkRealmDefaults(p);
  for (const [name, value] of Object.entries(defaults)) {
    if (isRealmDefaultName(name) && value !== undefined) Object.assign(wanted, { [name]: value });
  }
  const personal: PersonalSetting[] = ['allow_private_data_export', 'enable_login_emails', 'enable_marketing_emails'];
  for (const name of personal) if (p[name] !== undefined) wanted[name] = p[name];
  return wanted;
}

/**
 * PATCH /settings: the caller's own settings, name and password, checked
 * before anything is written and applied in one transaction, in Zulip's
 * order (json_change_settings): password, email, name, settings, time zone.
 * A value equal to the current one changes nothing and sends nothing.
 * Events after commit: one user_settings update per changed setting to the
 * caller's clients; realm_user updates (name, time zone) to everyone who may
 * see the caller.
 */
export async function doUpdateSettings(
  ctx: AppContext,
  caller: UserRow,
  p: SettingsRequest,
  /** The browser session making the change, which a new password leaves logged in (src/actions/passwords.ts). */
  sessionId: number | null = null,
): Promise<void> {
  // Zulip's human_users_only: a bot's settings are its owner's business through other endpoints.
  if (caller.is_bot) throw new ApiError('This endpoint does not accept bot requests.');
  const wanted = checkSettings(p);
  if (p.timezone !== undefined && !isKnownTimeZone(p.timezone)) throw new ApiError('timezone is not a recognized time zone');
  const fullName = p.full_name !== undefined && p.full_name.trim() !== '' ? checkFullName(p.full_name) : undefined;
  if (p.new_password !== undefined) {
    if (!(await verifyPassword(p.old_password ?? '', caller.password_hash))) throw new ApiError('Wrong password!');
    if (!isPasswordStrongEnough(p.new_password)) throw new ApiError('New password is too weak!');
  }
  // Zulip confirms a new address by mail before switching to it; without
  // mail there is no safe way to do that, so only the current address passes.
  if (p.email !== undefined && emailKey(p.email) !== emailKey(caller.delivery_email)) {
    throw new ApiError('Email address changes need a confirmation email, which this server does not send.');
  }
  const passwordHash = p.new_password === undefined ? undefined : await hashPassword(p.new_password);

  let presenceChange: boolean | undefined;
  await inTransaction(ctx.db, async (tx) => {
    const user = await getUserInRealm(tx.trx, caller.realm_id, caller.id);
    if (!user) throw noSuchUser();
    const audit: AuditEntry[] = [];
    const entry = (eventType: AuditEntry['eventType'], extra: AuditExtra = {}) =>
      audit.push({ realmId: user.realm_id, actorId: user.id, userId: user.id, eventType, extra });
    const person: Omit<Schema<'RealmUserUpdatePerson'>, 'user_id'>[] = [];

    if (passwordHash !== undefined) await setPasswordInTx(tx, user, passwordHash, user.id, nowSeconds(), sessionId);
    if (fullName !== undefined && fullName !== user.full_name) {
      await updateUser(tx.trx, user.id, { full_name: fullName });
      entry(AuditEventType.USER_FULL_NAME_CHANGED, valueChange(user.full_name, fullName));
      person.push({ full_name: fullName });
    }
    const settings = parseSettings(user.settings);
    const changes: SettingChange[] = [];
    for (const [property, value] of Object.entries(wanted) as Array<[keyof UserSettings, SettingChange['value']]>) {
      if (value !== settings[property]) changes.push({ property, old: settings[property], value });
    }
    if (changes.length > 0) {
      const updated = { ...settings, ...Object.fromEntries(changes.map((c) => [c.property, c.value])) };
      await updateUser(tx.trx, user.id, { settings: JSON.stringify(updated) });
      for (const c of changes) entry(AuditEventType.USER_SETTING_CHANGED, valueChange(c.old, c.value, c.property));
    }
    // Turning draft synchronization off deletes the drafts kept on the server, with no event: as in
    // Zulip, the clients keep their local copies (deleting those is DELETE /drafts/{id}'s business).
    if (changes.some((c) => c.property === 'enable_drafts_synchronization' && c.value === false)) await deleteAllDrafts(tx.trx, user.id);
    const timezoneChanged = p.timezone !== undefined && p.timezone !== user.timezone;
    if (timezoneChanged) {
      await updateUser(tx.trx, user.id, { timezone: p.timezone });
      entry(AuditEventType.USER_SETTING_CHANGED, valueChange(user.timezone, p.timezone, 'timezone'));
      // Zulip sends the user's API email along with a time zone change.
      person.push({ email: user.email, timezone: p.timezone! });
    }
    if (audit.length) await insertAuditLog(tx.trx, audit);
    const audience = person.length ? await listUsersWhoMayAccess(tx.trx, user.realm_id, user.id, user.is_bot) : [];
    tx.afterCommit(() => {
      for (const part of person) ctx.bus.publish({ event: toApiRealmUserUpdateEvent({ user_id: user.id, ...part }), userIds: audience });
      const own = [...changes.map((c) => ({ property: c.property as string, value: c.value }))];
      if (timezoneChanged) own.push({ property: 'timezone', value: p.timezone! });
      for (const { property, value } of own) {
        const languageName = property === 'default_language' && typeof value === 'string' ? LANGUAGE_NAMES[value] : undefined;
        ctx.bus.publish({ event: toApiUserSettingsUpdateEvent(property, value, languageName), userIds: [user.id] });
      }
    });
    presenceChange = changes.find((c) => c.property === 'presence_enabled')?.value as boolean | undefined;
  });
  // Turning presence sharing off (or on) shows the user offline (or online) to everyone at once.
  if (presenceChange !== undefined) await doPresenceEnabledChanged(ctx, caller, presenceChange);
}
