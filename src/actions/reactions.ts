import { RecipientType } from '../domain/recipients';
import { applyParticipationPolicyInTx } from './automatic-topic-policies';
import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { invalidateMessagesAfterCommit } from './message-invalidation';
import { flagMask } from '../domain/flags';
import { ApiError } from '../errors';
import { emojiCodeForName, isEmojiCode } from '../markdown/emoji';
import { accessMessage } from '../access/messages';
import type { Viewer } from '../access/viewer';
import type { PublishedEvent } from '../events/shape';
import { toApiReactionUser } from '../serializers/users';
import { insertUserMessagesOfUser } from '../queries/messages';
import {
  findReaction,
  getActiveRealmEmojiByName,
  getRealmEmojiById,
  getMessageAudience,
  insertReaction,
  deleteReaction,
} from '../queries/reactions';

type ReactionType = Schema<'ReactionType'>;

/** The service's own emoji namespace (`:zulip:`); the spec names it service_extra_emoji, older clients zulip_extra_emoji. */
const isServiceType = (type: ReactionType) => type === 'service_extra_emoji' || type === 'zulip_extra_emoji';
const SERVICE_EMOJI = new Set(['zulip']);

/** An emoji as stored: the service namespace under its one stored name. */
interface Emoji {
  name: string;
  code: string;
  type: Exclude<ReactionType, 'zulip_extra_emoji'>;
}

const storedType = (type: ReactionType): Emoji['type'] => (type === 'zulip_extra_emoji' ? 'service_extra_emoji' : type);

/** Resolves and validates an emoji as Zulip's check_emoji_request does, for adding. */
async function checkEmojiForAdd(ctx: AppContext, realmId: number, p: Params<'add-reaction'>): Promise<Emoji> {
  const name = p.emoji_name;
  const type = p.reaction_type;
  const code = p.emoji_code;
  if (code === undefined) {
    const realmEmoji = await getActiveRealmEmojiByName(ctx.db, realmId, name);
    if (realmEmoji && (type === undefined || type === 'realm_emoji')) return { name, code: String(realmEmoji.id), type: 'realm_emoji' };
    if (SERVICE_EMOJI.has(name) && (type === undefined || isServiceType(type))) return { name, code: name, type: 'service_extra_emoji' };
    const unicode = emojiCodeForName(name);
    if (!unicode || (type !== undefined && type !== 'unicode_emoji')) throw new ApiError(`Emoji '${name}' does not exist`);
    return { name, code: unicode, type: 'unicode_emoji' };
  }
  const given = type ?? 'unicode_emoji';
  await checkEmojiCode(ctx, realmId, name, code, given, true);
  return { name, code, type: storedType(given) };
}

async function checkEmojiCode(
  ctx: AppContext,
  realmId: number,
  name: string,
  code: string,
  type: ReactionType,
  adding: boolean,
): Promise<void> {
  if (type === 'unicode_emoji') {
    if (!isEmojiCode(code)) throw new ApiError('Invalid emoji code.');
    if (emojiCodeForName(name) !== code) throw new ApiError('Invalid emoji name.');
  } else if (type === 'realm_emoji') {
    const emoji = /^\d+$/.test(code) ? await getRealmEmojiById(ctx.db, realmId, Number(code)) : undefined;
    if (!emoji || emoji.name !== name) throw new ApiError('Invalid custom emoji.');
    if (adding && emoji.deactivated) throw new ApiError('This custom emoji has been deactivated.');
  } else {
    // The service namespace (the contract's enum admits no other type).
    if (!SERVICE_EMOJI.has(code) || name !== code) throw new ApiError('Invalid emoji name.');
  }
}

/** POST /messages/{id}/reactions. Reacting to channel history one did not receive records it (historical). */
export async function doAddReaction(ctx: AppContext, viewer: Viewer, p: Params<'add-reaction'>): Promise<Data<'add-reaction'>> {
  const messageId = p.message_id;
  const emoji = await checkEmojiForAdd(ctx, viewer.user.realm_id, p);
  await inTransaction(ctx.db, async (tx) => {
    const { flags, row } = await accessMessage(tx.trx, viewer, messageId);
    if (await findReaction(tx.trx, messageId, viewer.user.id, emoji.type, emoji.code)) {
      throw new ApiError('Reaction already exists.', 'REACTION_ALREADY_EXISTS');
    }
    if (flags === null) await insertUserMessagesOfUser(tx.trx, viewer.user.id, [messageId], flagMask('historical') + flagMask('read'));
    await insertReaction(tx.trx, {
      message_id: messageId,
      user_id: viewer.user.id,
      emoji_name: emoji.name,
      emoji_code: emoji.code,
      reaction_type: emoji.type,
    });
    // Reacting is participating in the topic (automatic follow/unmute settings).
    if (row.recipient_type === RecipientType.CHANNEL) {
      await applyParticipationPolicyInTx(tx, ctx, viewer.user, { id: row.recipient_type_id, recipient_id: row.recipient_id }, row.topic);
    }
    const audience = await getMessageAudience(tx.trx, messageId);
    const event: PublishedEvent<Schema<'ReactionEvent'>> = {
      type: 'reaction',
      op: 'add',
      message_id: messageId,
      user_id: viewer.user.id,
      user: toApiReactionUser(viewer.user),
      emoji_name: emoji.name,
      emoji_code: emoji.code,
      reaction_type: emoji.type,
    };
    invalidateMessagesAfterCommit(tx, ctx.bus, () => [messageId]);
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: audience }));
  });
  return {};
}

/** DELETE /messages/{id}/reactions. */
export async function doRemoveReaction(ctx: AppContext, viewer: Viewer, p: Params<'remove-reaction'>): Promise<Data<'remove-reaction'>> {
  const messageId = p.message_id;
  // The validator fills reaction_type's default (unicode_emoji) when the client sent none.
  const type = storedType(p.reaction_type);
  const code = await emojiCodeToRemove(ctx, viewer.user.realm_id, type, p);
  await inTransaction(ctx.db, async (tx) => {
    await accessMessage(tx.trx, viewer, messageId);
    const existing = await findReaction(tx.trx, messageId, viewer.user.id, type, code);
    if (!existing) throw new ApiError("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');
    await deleteReaction(tx.trx, existing.id);
    const audience = await getMessageAudience(tx.trx, messageId);
    const event: PublishedEvent<Schema<'ReactionEvent'>> = {
      type: 'reaction',
      op: 'remove',
      message_id: messageId,
      user_id: viewer.user.id,
      user: toApiReactionUser(viewer.user),
      emoji_name: existing.emoji_name,
      emoji_code: existing.emoji_code,
      reaction_type: existing.reaction_type,
    };
    invalidateMessagesAfterCommit(tx, ctx.bus, () => [messageId]);
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: audience }));
  });
  return {};
}

/** The code of the reaction to remove: as given, or found from the emoji's name in its namespace. */
async function emojiCodeToRemove(
  ctx: AppContext,
  realmId: number,
  type: Emoji['type'],
  p: Pick<Params<'remove-reaction'>, 'emoji_name' | 'emoji_code'>,
): Promise<string> {
  if (p.emoji_code !== undefined) {
    if (type === 'unicode_emoji' && !isEmojiCode(p.emoji_code)) throw new ApiError('Invalid emoji code.');
    return p.emoji_code;
  }
  const name = p.emoji_name;
  if (name === undefined) throw new ApiError('At least one of the following arguments must be present: emoji_name, emoji_code');
  let code: string | undefined;
  if (type === 'realm_emoji') code = (await getActiveRealmEmojiByName(ctx.db, realmId, name))?.id.toString();
  else if (type === 'service_extra_emoji') code = SERVICE_EMOJI.has(name) ? name : undefined;
  else code = emojiCodeForName(name);
  if (code === undefined) throw new ApiError(`Emoji '${name}' does not exist`);
  return code;
}
