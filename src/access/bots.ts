import type { Knex } from 'knex';
import type { Data, Schema } from '../contract';
import { isAdminRole, isGuestRole, isOwnerRole } from '../domain/roles';
import { ApiError, ownerRequired } from '../errors';
import { listBotServices } from '../queries/bot-services';
import { listActiveBotsOwnedBy, listDefaultChannels, listRealmBots } from '../queries/bots';
import type { UserRow } from '../queries/rows';
import { getUserInRealm } from '../queries/users';
import { fullAvatarUrl, toApiRealmBot } from '../serializers/users';

type Q = Knex | Knex.Transaction;

/**
 * Zulip's require_member_or_admin, in front of GET, POST and PATCH /bots and
 * the key's regeneration: guests and bots are refused before anything else.
 */
export function checkMemberOrAdmin(caller: UserRow): void {
  if (isGuestRole(caller.role)) throw new ApiError('Not allowed for guest users');
  if (caller.is_bot) throw new ApiError('This endpoint does not accept bot requests.');
}

/**
 * A bot the caller may administer (Zulip's access_bot_by_id): its owner or
 * an administrator. Unlike most of Parley's access functions this one
 * answers Zulip's two words: "No such bot" for an unknown ID, another
 * organization's user or a human, "Insufficient permission" for someone
 * else's bot. A bot with can_create_users is an owner's to administer.
 */
export async function accessBotById(q: Q, caller: UserRow, botId: number): Promise<UserRow> {
  const bot = await getUserInRealm(q, caller.realm_id, botId);
  if (!bot || !bot.is_bot) throw new ApiError('No such bot');
  if (bot.bot_owner_id !== caller.id && !isAdminRole(caller.role)) throw new ApiError('Insufficient permission');
  if (bot.can_create_users && !isOwnerRole(caller.role)) throw ownerRequired();
  return bot;
}

/** GET /bots/{bot_id}/api_key: the key of a bot the caller administers (feature level 463). */
export async function getBotApiKey(q: Q, caller: UserRow, botId: number): Promise<Data<'get-bot-api-key'>> {
  checkMemberOrAdmin(caller);
  return { api_key: (await accessBotById(q, caller, botId)).api_key };
}

/** The realm_bot objects of these bots: their default channels' names and their services, read in two statements. */
export async function realmBotsOf(q: Q, bots: readonly UserRow[]): Promise<Array<Schema<'RealmBot'>>> {
  if (bots.length === 0) return [];
  const [channels, services] = await Promise.all([
    listDefaultChannels(
      q,
      bots.flatMap((b) => [b.default_sending_channel_id, b.default_events_register_channel_id]),
    ),
    listBotServices(
      q,
      bots.map((b) => b.id),
    ),
  ]);
  const channelNames = new Map([...channels].map(([id, c]) => [id, c.name]));
  return bots.map((bot) => toApiRealmBot({ bot, channelNames, services: services.get(bot.id) ?? [] }));
}

/** POST /register's realm_bots: every bot of the organization for administrators, their own for others. */
export async function getRealmBots(q: Q, viewer: UserRow): Promise<Array<Schema<'RealmBot'>>> {
  return realmBotsOf(q, await listRealmBots(q, viewer.realm_id, isAdminRole(viewer.role) ? null : viewer.id));
}

/** GET /bots: the caller's active bots with their keys (administrators too see only their own, as Zulip). */
export async function getOwnBots(db: Knex, caller: UserRow): Promise<Data<'get-bots'>> {
  checkMemberOrAdmin(caller);
  const bots = await listActiveBotsOwnedBy(db, caller.id);
  const channels = await listDefaultChannels(
    db,
    bots.flatMap((b) => [b.default_sending_channel_id, b.default_events_register_channel_id]),
  );
  const nameOf = (id: number | null) => (id === null ? null : (channels.get(id)?.name ?? null));
  return {
    bots: bots.map((b) => ({
      username: b.email,
      full_name: b.full_name,
      api_key: b.api_key,
      avatar_url: fullAvatarUrl(b),
      default_sending_stream: nameOf(b.default_sending_channel_id),
      default_events_register_stream: nameOf(b.default_events_register_channel_id),
      default_all_public_streams: b.default_all_public_streams,
    })),
  };
}
