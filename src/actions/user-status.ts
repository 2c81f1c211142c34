import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { parseSettings } from '../domain/user-settings';
import { MAX_STATUS_TEXT_LENGTH } from '../domain/user-status';
import { ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { emojiCodeForName, isEmojiCode } from '../markdown/emoji';
import { getActiveRealmEmojiByName, getRealmEmojiById } from '../queries/reactions';
import type { UserRow } from '../queries/rows';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { StatusChange, updateUserSettingsText, upsertUserStatus } from '../queries/user-status';
import { toApiUserSettingsUpdateEvent } from '../serializers/users';
import { doPresenceEnabledChanged } from './presence';

type Emoji = NonNullable<StatusChange['emoji']>;

/** Zulip's name for its own emoji namespace in statuses; the contract's other spelling is taken too. */
const SERVICE_TYPES = new Set(['zulip_extra_emoji', 'service_extra_emoji']);

/** Zulip's emoji_name_to_emoji_code: an active custom emoji first, then `zulip`, then Unicode names. */
async function emojiByName(ctx: AppContext, realmId: number, name: string): Promise<{ code: string; type: string }> {
  const custom = await getActiveRealmEmojiByName(ctx.db, realmId, name);
  if (custom) return { code: String(custom.id), type: 'realm_emoji' };
  if (name === 'zulip') return { code: 'zulip', type: 'zulip_extra_emoji' };
  const unicode = emojiCodeForName(name);
  if (unicode) return { code: unicode, type: 'unicode_emoji' };
  throw new ApiError(`Emoji '${name}' does not exist`);
}

/** Zulip's check_emoji_request, in its order. */
async function checkEmoji(ctx: AppContext, realmId: number, e: Emoji): Promise<Emoji> {
  if (e.reaction_type === 'realm_emoji') {
    const custom = /^\d{1,9}$/.test(e.emoji_code) ? await getRealmEmojiById(ctx.db, realmId, Number(e.emoji_code)) : undefined;
    if (!custom) throw new ApiError('Invalid custom emoji.');
    if (custom.name !== e.emoji_name) throw new ApiError('Invalid custom emoji name.');
    if (custom.deactivated) throw new ApiError('This custom emoji has been deactivated.');
  } else if (SERVICE_TYPES.has(e.reaction_type)) {
    if (e.emoji_code !== 'zulip') throw new ApiError('Invalid emoji code.');
    if (e.emoji_name !== e.emoji_code) throw new ApiError('Invalid emoji name.');
    return { ...e, reaction_type: 'zulip_extra_emoji' };
  } else if (e.reaction_type === 'unicode_emoji') {
    if (!isEmojiCode(e.emoji_code)) throw new ApiError('Invalid emoji code.');
    if (emojiCodeForName(e.emoji_name) !== e.emoji_code) throw new ApiError('Invalid emoji name.');
  } else {
    throw new ApiError('Invalid emoji type.');
  }
  return e;
}

/**
 * POST /users/me/status, checked in Zulip's order: something to change;
 * the text's length (after trimming); an empty emoji_name clears the emoji;
 * a name alone is looked up; a code or type without a name is refused.
 * `away` (deprecated) switches presence_enabled to its opposite. The users
 * who may know the caller get a user_status event with the fields sent.
 */
export async function doUpdateUserStatus(ctx: AppContext, user: UserRow, p: Params<'update-status'>): Promise<Data<'update-status'>> {
  const statusText = p.status_text?.trim();
  if (p.away === undefined && statusText === undefined && p.emoji_name === undefined) {
    throw new ApiError('Client did not pass any new values.');
  }
  if (statusText !== undefined && [...statusText].length > MAX_STATUS_TEXT_LENGTH) {
    throw new ApiError(`status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`);
  }
  let emoji: Emoji | undefined;
  if (p.emoji_name === '') {
    emoji = { emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' };
  } else if (p.emoji_name !== undefined) {
    const name = p.emoji_name;
    const looked = p.emoji_code === undefined || p.reaction_type === undefined ? await emojiByName(ctx, user.realm_id, name) : undefined;
    const given = { emoji_name: name, emoji_code: p.emoji_code ?? looked!.code, reaction_type: p.reaction_type ?? looked!.type };
    emoji = await checkEmoji(ctx, user.realm_id, given);
  } else if (p.emoji_code !== undefined || p.reaction_type !== undefined) {
    throw new ApiError('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
  }

  const now = Math.floor(ctx.clock.now() / 1000);
  const settings = parseSettings(user.settings);
  const presenceSwitch = p.away !== undefined && settings.presence_enabled === p.away;
  await inTransaction(ctx.db, async (tx) => {
    if (presenceSwitch) await updateUserSettingsText(tx.trx, user.id, JSON.stringify({ ...settings, presence_enabled: !p.away }));
    if (statusText !== undefined || emoji) await upsertUserStatus(tx.trx, user.realm_id, user.id, { status_text: statusText, emoji }, now);
  });
  if (presenceSwitch) {
    // `away` is the presence_enabled setting seen from the other side: the user's clients learn the setting changed.
    ctx.bus.publish({ event: toApiUserSettingsUpdateEvent('presence_enabled', !p.away), userIds: [user.id] });
    await doPresenceEnabledChanged(ctx, user, !p.away);
  }

  const event: EventBody<Schema<'UserStatusEvent'>> = { type: 'user_status', user_id: user.id };
  if (p.away !== undefined) event.away = p.away;
  if (statusText !== undefined) event.status_text = statusText;
  if (emoji) Object.assign(event, emoji);
  const userIds = await listUsersWhoMayAccess(ctx.db, user.realm_id, user.id, user.is_bot);
  ctx.bus.publish({ event, userIds });
  return {};
}
