import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { flagMask } from '../domain/flags';
import { ApiError } from '../errors';
import { emojiCodeForName, isEmojiCode } from '../markdown/emoji';
import { accessMessage } from '../access/messages';
import type { Viewer } from '../access/viewer';
import {
  findReaction,
  getActiveRealmEmojiByName,
  getRealmEmojiById,
  getMessageAudience,
  insertReaction,
  deleteReaction,
} from '../queries/reactions';

/** The service's own emoji namespace (`:zulip:`); the spec names it service_extra_emoji, older clients zulip_extra_emoji. */
const SERVICE_TYPES = new Set(['service_extra_emoji', 'zulip_extra_emoji']);
const SERVICE_EMOJI = new Set(['zulip']);

export interface ReactionParams {
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

interface Emoji {
  name: string;
  code: string;
  type: string;
}

/** Resolves and validates an emoji as Zulip's check_emoji_request does, for adding. */
async function checkEmojiForAdd(ctx: AppContext, realmId: number, p: ReactionParams): Promise<Emoji> {
  const name = p.emoji_name ?? '';
  let type = p.reaction_type;
  let code = p.emoji_code;
  if (code === undefined) {
    const realmEmoji = await getActiveRealmEmojiByName(ctx.db, realmId, name);
    if (realmEmoji && (type === undefined || type === 'realm_emoji')) return { name, code: String(realmEmoji.id), type: 'realm_emoji' };
    if (SERVICE_EMOJI.has(name) && (type === undefined || SERVICE_TYPES.has(type)))
      return { name, code: name, type: 'service_extra_emoji' };
    const unicode = emojiCodeForName(name);
    if (!unicode || (type !== undefined && type !== 'unicode_emoji')) throw new ApiError(`Emoji '${name}' does not exist`);
    return { name, code: unicode, type: 'unicode_emoji' };
  }
  type ??= 'unicode_emoji';
  await checkEmojiCode(ctx, realmId, name, code, type, true);
  return { name, code, type: SERVICE_TYPES.has(type) ? 'service_extra_emoji' : type };
}

async function checkEmojiCode(ctx: AppContext, realmId: number, name: string, code: string, type: string, adding: boolean): Promise<void> {
  if (type === 'unicode_emoji') {
    if (!isEmojiCode(code)) throw new ApiError('Invalid emoji code.');
    if (emojiCodeForName(name) !== code) throw new ApiError('Invalid emoji name.');
  } else if (type === 'realm_emoji') {
    const emoji = /^\d+$/.test(code) ? await getRealmEmojiById(ctx.db, realmId, Number(code)) : undefined;
    if (!emoji || emoji.name !== name) throw new ApiError('Invalid custom emoji.');
    if (adding && emoji.deactivated) throw new ApiError('This custom emoji has been deactivated.');
  } else if (SERVICE_TYPES.has(type)) {
    if (!SERVICE_EMOJI.has(code) || name !== code) throw new ApiError('Invalid emoji name.');
  } else {
    throw new ApiError('Invalid emoji type.');
  }
}

/** POST /messages/{id}/reactions. Reacting to channel history one did not receive records it (historical). */
export async function doAddReaction(ctx: AppContext, viewer: Viewer, messageId: number, p: ReactionParams): Promise<void> {
  const emoji = await checkEmojiForAdd(ctx, viewer.user.realm_id, p);
  await inTransaction(ctx.db, async (tx) => {
    const { flags } = await accessMessage(tx.trx, viewer, messageId);
    if (await findReaction(tx.trx, messageId, viewer.user.id, emoji.type, emoji.code)) {
      throw new ApiError('Reaction already exists.', 'REACTION_ALREADY_EXISTS');
    }
    if (flags === null) {
      await tx
        .trx('user_messages')
        .insert({ user_id: viewer.user.id, message_id: messageId, flags: flagMask('historical') + flagMask('read') });
    }
    await insertReaction(tx.trx, {
      message_id: messageId,
      user_id: viewer.user.id,
      emoji_name: emoji.name,
      emoji_code: emoji.code,
      reaction_type: emoji.type,
    });
    const audience = await getMessageAudience(tx.trx, messageId);
    tx.afterCommit(() =>
      ctx.bus.publish({
        event: {
          type: 'reaction',
          op: 'add',
          message_id: messageId,
          user_id: viewer.user.id,
          emoji_name: emoji.name,
          emoji_code: emoji.code,
          reaction_type: emoji.type,
        },
        userIds: audience,
      }),
    );
  });
}

/** DELETE /messages/{id}/reactions. */
export async function doRemoveReaction(ctx: AppContext, viewer: Viewer, messageId: number, p: ReactionParams): Promise<void> {
  if (p.emoji_name === undefined && p.emoji_code === undefined) {
    throw new ApiError('At least one of the following arguments must be present: emoji_name, emoji_code');
  }
  const requested = p.reaction_type ?? 'unicode_emoji';
  const type = SERVICE_TYPES.has(requested) ? 'service_extra_emoji' : requested;
  let code = p.emoji_code;
  if (code === undefined) {
    const name = p.emoji_name!;
    if (type === 'realm_emoji') code = (await getActiveRealmEmojiByName(ctx.db, viewer.user.realm_id, name))?.id.toString();
    else if (type === 'service_extra_emoji') code = SERVICE_EMOJI.has(name) ? name : undefined;
    else if (type === 'unicode_emoji') code = emojiCodeForName(name);
    else throw new ApiError('Invalid emoji type.');
    if (code === undefined) throw new ApiError(`Emoji '${name}' does not exist`);
  } else if (type === 'unicode_emoji' && !isEmojiCode(code)) {
    throw new ApiError('Invalid emoji code.');
  }
  await inTransaction(ctx.db, async (tx) => {
    await accessMessage(tx.trx, viewer, messageId);
    const existing = await findReaction(tx.trx, messageId, viewer.user.id, type, code!);
    if (!existing) throw new ApiError("Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');
    await deleteReaction(tx.trx, existing.id);
    const audience = await getMessageAudience(tx.trx, messageId);
    tx.afterCommit(() =>
      ctx.bus.publish({
        event: {
          type: 'reaction',
          op: 'remove',
          message_id: messageId,
          user_id: viewer.user.id,
          emoji_name: existing.emoji_name,
          emoji_code: existing.emoji_code,
          reaction_type: existing.reaction_type,
        },
        userIds: audience,
      }),
    );
  });
}
