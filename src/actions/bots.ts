import type { Knex } from 'knex';
import { accessBotById, checkMemberOrAdmin, realmBotsOf } from '../access/bots';
import { accessChannelIdByName } from '../access/channels';
import { inGroup, type Caller } from '../access/viewer';
import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction, type Tx } from '../db/transaction';
import { AuditEventType, valueChange, type AuditEntry, type AuditExtra } from '../domain/audit';
import { allowedBotTypes, botEmail, checkBotCreationPolicy, checkInterfaceType, checkServiceUrl, checkShortName } from '../domain/bots';
import { realmHost } from '../domain/realm-address';
import { isAdminRole, isOwnerRole, Role } from '../domain/roles';
import { generateApiKey } from '../domain/secrets';
import { BotType, checkFullName, emailKey, type BotTypeCode } from '../domain/users';
import { adminRequired, ApiError, ownerRequired } from '../errors';
import type { EventBody } from '../events/bus';
import { insertAuditLog } from '../queries/audit';
import { insertBotService, listBotServices, updateBotServices } from '../queries/bot-services';
import { isNameOfActiveUser, listActiveHumanAdminIds, listDefaultChannels } from '../queries/bots';
import { getChannelById } from '../queries/channels';
import type { UserRow } from '../queries/rows';
import { listUsersWhoMayAccess } from '../queries/user-access';
import { getUserByEmailKey, getUserById, getUserInRealm, updateUser } from '../queries/users';
import { fullAvatarUrl, toApiRealmUserUpdateEvent } from '../serializers/users';
import { doUploadAvatar } from './avatars';
import type { IncomingFile } from './uploads';
import { changeRoleInTx } from './update-user';
import { createUserInTx, deactivateInTx, doRegenerateApiKey } from './users';

type Q = Knex | Knex.Transaction;
type RealmBotUpdate = Schema<'RealmBotUpdateEvent'>['bot'];

/** A default channel parameter: the channel the caller may access by that name (Zulip's access_stream_by_name), or null for none. */
async function defaultChannel(q: Q, caller: Caller, name: string | null): Promise<{ id: number; name: string } | null> {
  if (name === null) return null;
  const id = await accessChannelIdByName(q as Knex, caller, name);
  const channel = (await getChannelById(q, caller.user.realm_id, id))!;
  return { id: channel.id, name: channel.name };
}

/**
 * Who hears of a bot through realm_bot events (Zulip's bot_owner_user_ids):
 * its owner and the organization's human administrators, or only the owner
 * when a default channel of the bot is private, so that its name does not
 * reach administrators who may not know the channel.
 */
async function botAdministratorIds(q: Q, bot: UserRow): Promise<number[]> {
  const channels = await listDefaultChannels(q, [bot.default_sending_channel_id, bot.default_events_register_channel_id]);
  const owner = bot.bot_owner_id === null ? [] : [bot.bot_owner_id];
  if ([...channels.values()].some((c) => c.invite_only)) return owner;
  return [...new Set([...(await listActiveHumanAdminIds(q, bot.realm_id)), ...owner])];
}

/** realm_bot add: the bot's whole realm_bot object, to these users after commit. */
async function queueRealmBotAdd(tx: Tx, ctx: AppContext, bot: UserRow, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  const [object] = await realmBotsOf(tx.trx, [bot]);
  const event: EventBody<Schema<'RealmBotAddEvent'>> = { type: 'realm_bot', op: 'add', bot: object! };
  tx.afterCommit(() => ctx.bus.publish({ event, userIds }));
}

/** realm_bot update: the bot's id and one changed field, to the bot's administrators as they are after the change. */
async function queueRealmBotUpdate(tx: Tx, ctx: AppContext, bot: UserRow, part: Omit<RealmBotUpdate, 'user_id'>): Promise<void> {
  const userIds = await botAdministratorIds(tx.trx, bot);
  const event: EventBody<Schema<'RealmBotUpdateEvent'>> = { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, ...part } };
  tx.afterCommit(() => ctx.bus.publish({ event, userIds }));
}

/** A bot about to be made, its parameters checked in form (checkNewBot). */
interface NewBot {
  fullName: string;
  shortName: string;
  email: string;
  botType: BotTypeCode;
  payloadUrl: string;
  interfaceType: number;
  serviceName?: string;
}

/**
 * The checks of a new bot's parameters that need nothing but them, in
 * Zulip's order (add_bot_backend): the payload URL, the username, the name,
 * the address they make, and no embedded bots (Zulip's EMBEDDED_BOTS_ENABLED
 * is off by default, and Parley runs none).
 */
function checkNewBot(
  input: { fullName: string; shortName: string; botType?: number; payloadUrl?: string; interfaceType?: number; serviceName?: string },
  botDomain: string,
): NewBot {
  const payloadUrl = checkServiceUrl('payload_url', input.payloadUrl ?? '');
  const botType = input.botType ?? BotType.DEFAULT;
  const shortName = checkShortName(input.shortName);
  const fullName = checkFullName(input.fullName);
  const email = botEmail(shortName, botDomain);
  if (botType === BotType.EMBEDDED) throw new ApiError('Embedded bots are not enabled.');
  return {
    fullName,
    shortName,
    email,
    botType: botType as BotTypeCode,
    payloadUrl,
    interfaceType: input.interfaceType ?? 1,
    serviceName: input.serviceName,
  };
}

/** The address and the name must be free: "Username already in use", then Zulip's check_bot_name_available. */
async function checkBotNamesFree(q: Q, realmId: number, bot: NewBot): Promise<void> {
  if (await getUserByEmailKey(q, realmId, emailKey(bot.email))) throw new ApiError('Username already in use');
  if (await isNameOfActiveUser(q, realmId, bot.fullName)) throw new ApiError('Name is already in use!');
}

/**
 * The bot itself, once every check passed: a user (createUserInTx: realm_user
 * add to everyone who may know it) owned by `owner`, its defaults, and for an
 * outgoing webhook bot its service with a fresh token; then realm_bot add to
 * its administrators.
 */
async function createBotInTx(
  tx: Tx,
  ctx: AppContext,
  owner: UserRow,
  bot: NewBot,
  defaults: Pick<UserRow, 'default_sending_channel_id' | 'default_events_register_channel_id' | 'default_all_public_streams'>,
): Promise<UserRow> {
  const created = await createUserInTx(tx, ctx.bus, {
    realmId: owner.realm_id,
    email: bot.email,
    fullName: bot.fullName,
    isBot: true,
    botType: bot.botType,
    botOwnerId: owner.id,
    actorId: owner.id,
  });
  await updateUser(tx.trx, created.id, defaults);
  if (bot.botType === BotType.OUTGOING_WEBHOOK) {
    await insertBotService(tx.trx, {
      user_id: created.id,
      // Zulip names the service after the bot's username unless told otherwise.
      name: bot.serviceName || bot.shortName,
      base_url: bot.payloadUrl,
      token: generateApiKey(),
      interface: bot.interfaceType as 1 | 2,
    });
  }
  const row: UserRow = { ...created, ...defaults };
  await queueRealmBotAdd(tx, ctx, row, await botAdministratorIds(tx.trx, row));
  return row;
}

/**
 * POST /bots, in the order of Zulip's add_bot_backend: the caller (no
 * guests, no bots), the parameters' forms, the username and the name, who
 * may create which type, the interface, the default channels, the
 * integration an incoming webhook bot names; then the bot
 * (createBotInTx). The avatar, if a file came, is stored once the bot
 * exists (its name needs the bot's ID), with the avatar's realm_user update.
 */
export async function doAddBot(
  ctx: AppContext,
  caller: Caller,
  p: Params<'add-bot'>,
  files: readonly IncomingFile[],
  isIntegration: (name: string) => boolean,
): Promise<Data<'add-bot'>> {
  checkMemberOrAdmin(caller.user);
  const input = checkNewBot(
    {
      fullName: p.full_name,
      shortName: p.short_name,
      botType: p.bot_type,
      payloadUrl: p.payload_url,
      interfaceType: p.interface_type,
      serviceName: p.service_name,
    },
    realmHost(ctx.config.externalUrl, caller.realm.string_id),
  );
  const bot = await inTransaction(ctx.db, async (tx) => {
    await checkBotNamesFree(tx.trx, caller.user.realm_id, input);
    const mayCreateAny = inGroup(caller, caller.realm.can_create_bots_group);
    const mayCreateWriteOnly = inGroup(caller, caller.realm.can_create_write_only_bots_group);
    checkBotCreationPolicy(input.botType, mayCreateAny, mayCreateWriteOnly);
    if (!allowedBotTypes(mayCreateAny, mayCreateWriteOnly).includes(input.botType)) throw new ApiError('Invalid bot type');
    checkInterfaceType(input.interfaceType);
    const sending = await defaultChannel(tx.trx, caller, p.default_sending_stream ?? null);
    const events = await defaultChannel(tx.trx, caller, p.default_events_register_stream ?? null);
    // An incoming webhook bot may name the integration it is for (Zulip's check_valid_bot_config);
    // Parley's integrations take no configuration, so config_data has nothing to be checked against.
    if (input.botType === BotType.INCOMING_WEBHOOK && p.service_name && !isIntegration(p.service_name)) {
      throw new ApiError(`Invalid integration '${p.service_name}'.`);
    }
    return createBotInTx(tx, ctx, caller.user, input, {
      default_sending_channel_id: sending?.id ?? null,
      default_events_register_channel_id: events?.id ?? null,
      default_all_public_streams: p.default_all_public_streams ?? false,
    });
  });
  // Messages may call an outgoing-webhook bot from now on (other nodes see it at their next refresh).
  if (bot.bot_type === BotType.OUTGOING_WEBHOOK) ctx.outgoingWebhooks.noteBot(bot.id);
  if (files.length === 1) await doUploadAvatar(ctx, bot, caller.realm, files);
  const after = (await getUserById(ctx.db, bot.id))!;
  const names = await listDefaultChannels(ctx.db, [after.default_sending_channel_id, after.default_events_register_channel_id]);
  const nameOf = (id: number | null) => (id === null ? null : (names.get(id)?.name ?? null));
  return {
    user_id: after.id,
    api_key: after.api_key,
    avatar_url: fullAvatarUrl(after),
    default_sending_stream: nameOf(after.default_sending_channel_id),
    default_events_register_stream: nameOf(after.default_events_register_channel_id),
    default_all_public_streams: after.default_all_public_streams,
  };
}

/**
 * The command line's create-bot: a bot for `owner` (an active human of the
 * organization), with POST /bots's checks of its names, type and URL. The
 * operator needs no place in the bot-creation groups, and the bot has no
 * default channels.
 */
export async function doCreateBotForOwner(
  ctx: AppContext,
  owner: UserRow,
  botDomain: string,
  input: { fullName: string; shortName: string; botType: number; payloadUrl?: string },
): Promise<UserRow> {
  if (owner.is_bot || !owner.is_active) throw new ApiError('The owner must be an active user who is not a bot');
  const bot = checkNewBot(input, botDomain);
  if (!allowedBotTypes(true, true).includes(bot.botType)) throw new ApiError('Invalid bot type');
  return inTransaction(ctx.db, async (tx) => {
    await checkBotNamesFree(tx.trx, owner.realm_id, bot);
    return createBotInTx(tx, ctx, owner, bot, {
      default_sending_channel_id: null,
      default_events_register_channel_id: null,
      default_all_public_streams: false,
    });
  });
}

/**
 * PATCH /bots/{bot_id}, in the order of Zulip's patch_bot_backend, all in one
 * transaction: name, role, owner, default channels, default_all_public_streams,
 * the outgoing webhook's endpoint; then the avatar. config_data is accepted
 * and not stored: it configures embedded bots, which Parley does not run.
 */
export async function doUpdateBot(
  ctx: AppContext,
  caller: Caller,
  p: Params<'update-bot'>,
  files: readonly IncomingFile[],
): Promise<Data<'update-bot'>> {
  const actor = caller.user;
  checkMemberOrAdmin(actor);
  const serviceUrl = p.service_payload_url === undefined ? null : checkServiceUrl('service_payload_url', p.service_payload_url);
  const bot = await inTransaction(ctx.db, async (tx) => {
    let bot = await accessBotById(tx.trx, actor, p.bot_id);
    const everyone = await listUsersWhoMayAccess(tx.trx, bot.realm_id, bot.id, true);
    const toEveryone = (person: Schema<'RealmUserUpdatePerson'>) =>
      tx.afterCommit(() => ctx.bus.publish({ event: toApiRealmUserUpdateEvent(person), userIds: everyone }));
    const audit = (eventType: AuditEntry['eventType'], extra: AuditExtra) =>
      insertAuditLog(tx.trx, { realmId: bot.realm_id, actorId: actor.id, userId: bot.id, eventType, extra });
    const change = async (changes: Partial<UserRow>) => {
      await updateUser(tx.trx, bot.id, changes);
      bot = { ...bot, ...changes };
    };

    if (p.full_name !== undefined) {
      const fullName = checkFullName(p.full_name);
      // Zulip's web form sends the name unchanged with every edit: that is no change, and no refusal.
      if (fullName !== bot.full_name) {
        if (await isNameOfActiveUser(tx.trx, bot.realm_id, fullName)) throw new ApiError('Name is already in use!');
        await audit(AuditEventType.USER_FULL_NAME_CHANGED, valueChange(bot.full_name, fullName));
        await change({ full_name: fullName });
        toEveryone({ user_id: bot.id, full_name: fullName });
      }
    }

    if (p.short_name !== undefined) {
      // A new username is a new address (feature level 447): checked as POST /bots checks it.
      const email = botEmail(checkShortName(p.short_name), realmHost(ctx.config.externalUrl, caller.realm.string_id));
      if (emailKey(email) !== bot.email_key) {
        if (await getUserByEmailKey(tx.trx, bot.realm_id, emailKey(email))) throw new ApiError('Username already in use');
        await audit(AuditEventType.USER_EMAIL_CHANGED, valueChange(bot.delivery_email, email));
        await change({ email, delivery_email: email, email_key: emailKey(email) });
        // A bot's address is no secret: everyone gets both the API email and the real one.
        toEveryone({ user_id: bot.id, delivery_email: email });
        toEveryone({ user_id: bot.id, new_email: email });
      }
    }

    if (p.role !== undefined && p.role !== bot.role) {
      if ((p.role === Role.OWNER || bot.role === Role.OWNER) && !isOwnerRole(actor.role)) throw ownerRequired();
      if (!isAdminRole(actor.role)) throw adminRequired();
      await audit(AuditEventType.USER_ROLE_CHANGED, valueChange(bot.role, p.role));
      toEveryone({ user_id: bot.id, role: p.role });
      await changeRoleInTx(tx, ctx, actor, bot, p.role);
      bot = { ...bot, role: p.role };
    }

    if (p.bot_owner_id !== undefined) {
      const owner = await getUserInRealm(tx.trx, bot.realm_id, p.bot_owner_id);
      if (!owner) throw new ApiError('Failed to change owner, no such user');
      if (!owner.is_active) throw new ApiError('Failed to change owner, user is deactivated');
      if (owner.is_bot) throw new ApiError("Failed to change owner, bots can't own other bots");
      if (owner.id !== bot.bot_owner_id) {
        const previous = bot.bot_owner_id === null ? undefined : await getUserById(tx.trx, bot.bot_owner_id);
        await audit(AuditEventType.USER_BOT_OWNER_CHANGED, valueChange(bot.bot_owner_id, owner.id));
        await change({ bot_owner_id: owner.id });
        // Administrators administer every bot already: only an owner who is not one gains or
        // loses the bot from their realm_bots (Zulip's do_change_bot_owner). Since feature
        // level 474 the rest learn of the new owner from the user object alone.
        if (previous && !isAdminRole(previous.role)) {
          const event: EventBody<Schema<'RealmBotDeleteEvent'>> = { type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } };
          tx.afterCommit(() => ctx.bus.publish({ event, userIds: [previous.id] }));
        }
        if (!isAdminRole(owner.role)) await queueRealmBotAdd(tx, ctx, bot, [owner.id]);
        toEveryone({ user_id: bot.id, bot_owner_id: owner.id });
      }
    }

    if (p.default_sending_stream !== undefined) {
      // The empty string clears the default; Zulip sends the event even when nothing changed.
      const channel = await defaultChannel(tx.trx, caller, p.default_sending_stream === '' ? null : p.default_sending_stream);
      await audit(AuditEventType.USER_DEFAULT_SENDING_STREAM_CHANGED, valueChange(bot.default_sending_channel_id, channel?.id));
      await change({ default_sending_channel_id: channel?.id ?? null });
      await queueRealmBotUpdate(tx, ctx, bot, { default_sending_stream: channel?.name ?? null });
    }
    if (p.default_events_register_stream !== undefined) {
      const name = p.default_events_register_stream;
      const channel = await defaultChannel(tx.trx, caller, name === '' ? null : name);
      await audit(AuditEventType.USER_DEFAULT_REGISTER_STREAM_CHANGED, valueChange(bot.default_events_register_channel_id, channel?.id));
      await change({ default_events_register_channel_id: channel?.id ?? null });
      await queueRealmBotUpdate(tx, ctx, bot, { default_events_register_stream: channel?.name ?? null });
    }
    if (p.default_all_public_streams !== undefined) {
      const value = p.default_all_public_streams;
      await audit(AuditEventType.USER_DEFAULT_ALL_PUBLIC_STREAMS_CHANGED, valueChange(bot.default_all_public_streams, value));
      await change({ default_all_public_streams: value });
      await queueRealmBotUpdate(tx, ctx, bot, { default_all_public_streams: value });
    }

    if (serviceUrl !== null) {
      const serviceInterface = p.service_interface ?? 1;
      checkInterfaceType(serviceInterface);
      // A bot has at most one service. Zulip fails on a bot without one (no outgoing
      // webhook); Parley leaves such a bot as it is.
      const service = (await listBotServices(tx.trx, [bot.id])).get(bot.id)?.[0];
      if (service) {
        await updateBotServices(tx.trx, bot.id, { base_url: serviceUrl, interface: serviceInterface as 1 | 2 });
        await queueRealmBotUpdate(tx, ctx, bot, {
          services: [{ base_url: serviceUrl, interface: serviceInterface, token: service.token }],
        });
      }
    }
    return bot;
  });
  // Messages may call an outgoing-webhook bot from now on (other nodes see it at their next refresh).
  if (bot.bot_type === BotType.OUTGOING_WEBHOOK) ctx.outgoingWebhooks.noteBot(bot.id);
  if (files.length === 1) await doUploadAvatar(ctx, bot, caller.realm, files);
  const after = (await getUserById(ctx.db, bot.id))!;
  const [names, owner] = await Promise.all([
    listDefaultChannels(ctx.db, [after.default_sending_channel_id, after.default_events_register_channel_id]),
    after.bot_owner_id === null ? Promise.resolve(undefined) : getUserById(ctx.db, after.bot_owner_id),
  ]);
  const nameOf = (id: number | null) => (id === null ? null : (names.get(id)?.name ?? null));
  // The service and config fields repeat the request, as Zulip's answer does.
  return {
    full_name: after.full_name,
    avatar_url: fullAvatarUrl(after),
    service_interface: p.service_interface ?? 1,
    service_payload_url: serviceUrl,
    config_data: p.config_data ?? null,
    default_sending_stream: nameOf(after.default_sending_channel_id),
    default_events_register_stream: nameOf(after.default_events_register_channel_id),
    default_all_public_streams: after.default_all_public_streams,
    ...(owner ? { bot_owner: owner.email } : {}),
  };
}

/**
 * DELETE /bots/{bot_id}: the deactivation any account gets (its events in
 * src/actions/user-activation-events.ts). A bot already deactivated stays so
 * and the answer is a success: Zulip's do_deactivate_user does nothing then.
 */
export async function doDeactivateBot(ctx: AppContext, caller: Caller, botId: number): Promise<void> {
  await inTransaction(ctx.db, async (tx) => {
    const bot = await accessBotById(tx.trx, caller.user, botId);
    if (bot.is_active) await deactivateInTx(tx, ctx, bot, caller.user.id);
  });
}

/** POST /bots/{bot_id}/api_key/regenerate: a new key for a bot the caller administers. */
export async function doRegenerateBotApiKey(ctx: AppContext, caller: Caller, botId: number): Promise<Data<'regenerate-bot-api-key'>> {
  checkMemberOrAdmin(caller.user);
  const bot = await accessBotById(ctx.db, caller.user, botId);
  return { api_key: await doRegenerateApiKey(ctx.db, bot, caller.user.id) };
}
