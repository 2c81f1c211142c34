import { createHash } from 'node:crypto';
import { queueAttachmentEvents } from './uploads';
import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction, type NewRowId, Tx } from '../db/transaction';
import { invalidateMessagesAfterCommit } from './message-invalidation';
import { flagMask } from '../domain/flags';
import { flagsPerUser } from '../events/per-user-flags';
import { RESOLVED_TOPIC_PREFIX } from '../domain/narrow';
import { referencedUploads } from '../domain/uploads';
import { parseSettings } from '../domain/user-settings';
import { RecipientType } from '../domain/recipients';
import { isAdminRole, isGuestRole, isModeratorOrAbove } from '../domain/roles';
import { EMPTY_TOPIC_DISPLAY_NAME, effectiveTopicsPolicy, normalizeContent, normalizeTopic } from '../domain/topics';
import { ApiError, invalidChannelId } from '../errors';
import type { EventBody } from '../events/bus';
import { accessMessageForChange } from '../access/messages';
import { canReadChannelHistory, canSeeChannel, inGroup, loadCaller, type Caller, Viewer } from '../access/viewer';
import { channelNarrowPath, encodeHashComponent } from '../markdown/zulip';
import { ChannelRow, getActiveSubscriberIds, getChannelById } from '../queries/channels';
import {
  AttachmentRow,
  deleteUserMessagesOf,
  editTimestamp,
  getRoles,
  insertEditEntry,
  insertMoveEntries,
  insertReadRowsForSubscribers,
  listActiveSubscribersWithRole,
  listEverSubscribedIds,
  listMessageAttachments,
  listTopicMessages,
  listUnlinkedAttachments,
  listUserMessageFlags,
  lockMessageRow,
  messageHasAttachments,
  moveMessageRows,
  refreshFirstMessageId,
  setMentionBits,
  topicHasOtherMessages,
  unlinkAttachments,
  updateMessageContentIf,
} from '../queries/edit-message';
import { getRecursiveMemberIds } from '../queries/groups';
import { linkAttachments } from '../queries/attachments';
import { listAttachableUploads } from '../access/attachments';
import { getUsersByIds, type MessageRow } from '../queries/messages';
import { getTopicParticipantIds, topicExists } from '../queries/render-context';
import type { RealmRow } from '../queries/rows';
import { insertIdleRowsOf } from '../queries/soft-deactivation';
import { channelAudience } from './channel-events';
import { moveTopicPolicies } from './move-topic-policies';
import { WILDCARD_MENTION_THRESHOLD, sendMessageInTx } from './messages';
import { INTERNAL, notificationBot } from './notifications';
import { renderForRealm, type RenderedMessage } from './render';
import type { CompiledLinkifier } from '../domain/linkifiers';
import { topicLinksOf } from '../markdown/zulip';

/**
 * Zulip allows an edit or move this many seconds past the limit: clients
 * offer editing until a little before it, and the request takes time.
 */
const EDIT_LIMIT_BUFFER_SECONDS = 20;

export const sha256Hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

type PropagateMode = NonNullable<Params<'update-message'>['propagate_mode']>;

/** The update_message event as published; each receiver's flags on the edited message travel beside it (perUser). */
export type UpdateMessageBusEvent = Omit<EventBody<Schema<'UpdateMessageEvent'>>, 'flags'>;

const contentMismatch = () =>
  // Zulip's PreviousMessageContentMismatchedError (a plain JsonableError, so BAD_REQUEST).
  new ApiError("'prev_content_sha256' value does not match the expected value.");

/** What a request changes, checked and resolved against the locked message row. */
interface EditPlan {
  row: MessageRow;
  realm: RealmRow;
  propagate: PropagateMode;
  content?: { raw: string; rendered: RenderedMessage };
  origChannel: ChannelRow | null;
  targetChannel: ChannelRow | null;
  /** The new topic when it changes. */
  topic?: string;
  topicResolved: boolean;
  topicUnresolved: boolean;
  /**
   * The organization's linkifiers, read before the transaction: a cache miss
   * inside it would wait for a second connection, which an embedded database
   * without readers (SQLITE_READERS=0) never grants while the transaction holds the one.
   */
  linkifiers: readonly CompiledLinkifier[];
}

const streamEdited = (p: EditPlan) => p.targetChannel !== null && p.origChannel !== null && p.targetChannel.id !== p.origChannel.id;
const moved = (p: EditPlan) => p.topic !== undefined || streamEdited(p);

/** PATCH /messages/{message_id}. */
export async function doUpdateMessage(ctx: AppContext, viewer: Caller, p: Params<'update-message'>): Promise<Data<'update-message'>> {
  if (p.topic !== undefined && p.subject !== undefined) {
    throw new ApiError("Can't decide between 'topic' and 'subject' arguments", 'REQUEST_CONFUSING_VAR', 400, {
      var_name1: 'topic',
      var_name2: 'subject',
    });
  }
  // New content is rendered with the organization's current linkifiers, as on send.
  const linkifiers = await ctx.caches.linkifiers.get(viewer.realm.id);
  return inTransaction(ctx.db, async (tx) => {
    // The viewer is read again inside the transaction on retries; memberships do not change here.
    await lockMessageRow(tx.trx, p.message_id);
    // Changing a message needs access to its channel now (archived or left private channels: none).
    const { row } = await accessMessageForChange(tx.trx, viewer, p.message_id);
    const plan = await checkEdit(tx, viewer, row, p, linkifiers);
    return applyEdit(tx, ctx, viewer, plan, p);
  });
}

async function checkEdit(
  tx: Tx,
  viewer: Caller,
  row: MessageRow,
  p: Params<'update-message'>,
  linkifiers: readonly CompiledLinkifier[],
): Promise<EditPlan> {
  const realm = viewer.realm;
  const propagate: PropagateMode = p.propagate_mode ?? 'change_one';
  const now = editTimestamp();
  const age = now - row.date_sent;

  if (p.content !== undefined) {
    if (!realm.allow_message_editing) throw new ApiError('Your organization has turned off message editing');
    // Content is the sender's alone (Zulip lets no one else, bot owners included).
    if (row.sender_id !== viewer.user.id) throw new ApiError("You don't have permission to edit this message");
    const limit = realm.message_content_edit_limit_seconds;
    if (limit !== null && age > limit + EDIT_LIMIT_BUFFER_SECONDS) throw new ApiError('The time limit for editing this message has passed');
  }

  const rawTopic = p.topic ?? p.subject;
  const strippedTopic = rawTopic?.trim();
  let topic = rawTopic === undefined ? undefined : normalizeTopic(rawTopic);
  if (topic === row.topic) topic = undefined;
  let streamId = p.stream_id;
  // Naming the message's own channel moves nothing (Zulip since feature level 509).
  const isChannelMessage = row.recipient_type === RecipientType.CHANNEL;
  if (isChannelMessage && streamId === row.channel_id) streamId = undefined;

  if (topic === undefined && p.content === undefined && streamId === undefined) throw new ApiError('Nothing to change');
  if (!isChannelMessage) {
    if (streamId !== undefined) throw new ApiError('Direct messages cannot be moved to channels.');
    if (topic !== undefined) throw new ApiError('Direct messages cannot have topics.');
  }
  // Content beside any stream_id is refused, the message's own channel included: Zulip
  // checks the parameters as sent, before it works out what would move.
  if (p.stream_id !== undefined && p.content !== undefined) throw new ApiError('Cannot change message content while changing channel');
  if (propagate !== 'change_one' && topic === undefined && streamId === undefined) {
    throw new ApiError('Invalid propagate_mode without topic edit');
  }
  if (
    topic !== undefined &&
    (strippedTopic === RESOLVED_TOPIC_PREFIX.trim() || strippedTopic === RESOLVED_TOPIC_PREFIX + EMPTY_TOPIC_DISPLAY_NAME)
  ) {
    throw new ApiError('General chat cannot be marked as resolved');
  }
  // Checked on the row locked for this transaction, and again by the write itself.
  if (p.prev_content_sha256 !== undefined && p.prev_content_sha256 !== sha256Hex(row.content)) throw contentMismatch();

  let origChannel: ChannelRow | null = null;
  let targetChannel: ChannelRow | null = null;
  let topicResolved = false;
  let topicUnresolved = false;
  if (isChannelMessage) {
    origChannel = (await getChannelById(tx.trx, realm.id, row.recipient_type_id))!;
    targetChannel = origChannel;
    if (streamId !== undefined) targetChannel = await accessChannelForMove(tx, viewer, realm.id, streamId);
    const oldTopic = row.topic;
    if (topic !== undefined) {
      topicResolved =
        topic.startsWith(RESOLVED_TOPIC_PREFIX) &&
        !oldTopic.startsWith(RESOLVED_TOPIC_PREFIX) &&
        strippedTopic!.slice(RESOLVED_TOPIC_PREFIX.length) === oldTopic;
      // Zulip strips any run of the prefix's characters ('✔' and spaces) from the old name.
      topicUnresolved =
        oldTopic.startsWith(RESOLVED_TOPIC_PREFIX) && !topic.startsWith(RESOLVED_TOPIC_PREFIX) && oldTopic.replace(/^[✔ ]+/u, '') === topic;
    }
    const targetTopic = topic ?? oldTopic;
    const policy = effectiveTopicsPolicy(targetChannel.topics_policy, realm.topics_policy);
    if (targetTopic === '' && (topic !== undefined || streamId !== undefined) && policy === 'disable_empty_topic') {
      throw new ApiError(
        targetChannel.topics_policy === 'inherit'
          ? 'Topics are required in this organization.'
          : 'Sending messages to the general chat is not allowed in this channel.',
      );
    }
    if (policy === 'empty_topic_only' && targetTopic !== '') throw new ApiError('Only the general chat topic is allowed in this channel.');

    if (topic !== undefined) {
      if (topicResolved || topicUnresolved) {
        // Resolving is its own permission (feature level 367), without a time limit.
        if (!canResolveTopics(viewer, realm, origChannel, targetChannel)) {
          throw new ApiError("You don't have permission to resolve topics in this channel.");
        }
      } else {
        if (!canEditTopic(viewer, realm, origChannel, targetChannel)) throw new ApiError("You don't have permission to edit this message");
        const limit = realm.move_messages_within_stream_limit_seconds;
        if (limit !== null && !isModeratorOrAbove(viewer.user.role) && age > limit + EDIT_LIMIT_BUFFER_SECONDS) {
          throw new ApiError("The time limit for editing this message's topic has passed.");
        }
      }
    }
  }

  let content: EditPlan['content'];
  if (p.content !== undefined) {
    // Zulip keeps an emptied message as "(deleted)".
    const raw = normalizeContent(p.content.trimEnd() === '' ? '(deleted)' : p.content);
    const mayAccessAll = inGroup(viewer, realm.can_access_all_users_group);
    const rendered = await renderForRealm(tx.trx, realm.id, raw, viewer, mayAccessAll, linkifiers);
    if (origChannel) await checkWildcardMentions(tx, viewer, realm, origChannel, row.topic_key, rendered);
    for (const g of rendered.mentionedGroups) {
      if (!inGroup(viewer, g.can_mention_group)) throw new ApiError(`You are not allowed to mention user group '${g.name}'.`);
    }
    content = { raw, rendered };
  }

  const plan: EditPlan = { row, realm, propagate, content, origChannel, targetChannel, topic, topicResolved, topicUnresolved, linkifiers };
  if (origChannel && targetChannel) {
    if (streamEdited(plan)) {
      if (!canMoveOutOfChannel(viewer, realm, origChannel)) throw new ApiError("You don't have permission to move this message");
      if (!inGroup(viewer, targetChannel.can_send_message_group)) throw new ApiError('You do not have permission to post in this channel.');
      const limit = realm.move_messages_between_streams_limit_seconds;
      if (limit !== null && !isModeratorOrAbove(viewer.user.role) && age > limit + EDIT_LIMIT_BUFFER_SECONDS) {
        throw new ApiError("The time limit for editing this message's channel has passed");
      }
    }
    if (propagate === 'change_all' && moved(plan) && !topicResolved && !topicUnresolved && !isModeratorOrAbove(viewer.user.role)) {
      await checkChangeAllTimeLimit(tx, viewer, realm, row, origChannel, topic !== undefined, streamEdited(plan), now);
    }
    if (moved(plan)) {
      const targetTopic = topic ?? row.topic;
      if (
        !inGroup(viewer, targetChannel.can_create_topic_group) &&
        !(await topicExists(tx.trx, targetChannel.recipient_id, targetTopic.toLowerCase()))
      ) {
        throw new ApiError('You do not have permission to create new topics in this channel.');
      }
    }
  }
  return plan;
}

/** The destination of a move: a channel whose messages the caller may read (else, as for a missing one, "Invalid channel ID"). */
async function accessChannelForMove(tx: Tx, viewer: Viewer, realmId: number, id: number): Promise<ChannelRow> {
  const channel = await getChannelById(tx.trx, realmId, id);
  if (!channel || channel.deactivated || !canSeeChannel(viewer, channel)) throw invalidChannelId();
  const subscribed = viewer.subscribedRecipients.has(channel.recipient_id);
  if ((channel.invite_only || isGuestRole(viewer.user.role)) && !subscribed) throw invalidChannelId();
  return channel;
}

/** Administrators of the organization or of the channel, or the channel's can_move_messages_within_channel_group. */
const canMoveWithinChannel = (v: Viewer, c: ChannelRow) =>
  isAdminRole(v.user.role) || inGroup(v, c.can_administer_channel_group) || inGroup(v, c.can_move_messages_within_channel_group);

/** The organization's permission, or the channel's in the source or the destination channel. */
const canEditTopic = (v: Viewer, realm: RealmRow, orig: ChannelRow, target: ChannelRow) =>
  inGroup(v, realm.can_move_messages_between_topics_group) ||
  canMoveWithinChannel(v, orig) ||
  (orig.id !== target.id && canMoveWithinChannel(v, target));

const canResolveTopics = (v: Viewer, realm: RealmRow, orig: ChannelRow, target: ChannelRow) =>
  inGroup(v, realm.can_resolve_topics_group) ||
  inGroup(v, orig.can_resolve_topics_group) ||
  (orig.id !== target.id && inGroup(v, target.can_resolve_topics_group));

const canMoveOutOfChannel = (v: Viewer, realm: RealmRow, c: ChannelRow) =>
  isAdminRole(v.user.role) ||
  inGroup(v, realm.can_move_messages_between_channels_group) ||
  inGroup(v, c.can_administer_channel_group) ||
  inGroup(v, c.can_move_messages_out_of_channel_group);

/** Wildcard mentions in edited content: the same rules as sending, in the message's channel and topic. */
async function checkWildcardMentions(
  tx: Tx,
  viewer: Viewer,
  realm: RealmRow,
  channel: ChannelRow,
  topicKey: string,
  rendered: RenderedMessage,
): Promise<void> {
  const many = inGroup(viewer, realm.can_mention_many_users_group);
  if (
    rendered.streamWildcard &&
    !many &&
    (await getActiveSubscriberIds(tx.trx, channel.recipient_id)).length > WILDCARD_MENTION_THRESHOLD
  ) {
    throw new ApiError(
      'You do not have permission to use channel wildcard mentions in this channel.',
      'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
    );
  }
  if (
    rendered.topicWildcard &&
    !many &&
    (await getTopicParticipantIds(tx.trx, channel.recipient_id, topicKey)).length > WILDCARD_MENTION_THRESHOLD
  ) {
    throw new ApiError('You do not have permission to use topic wildcard mentions in this topic.', 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED');
  }
}

/**
 * change_all past a move time limit: the stricter applicable limit (plus
 * Zulip's 20 s) against every message of the topic the caller can access.
 * Refused unless all of them are recent enough; the error says how many are.
 */
async function checkChangeAllTimeLimit(
  tx: Tx,
  viewer: Viewer,
  realm: RealmRow,
  row: MessageRow,
  channel: ChannelRow,
  topicEdited: boolean,
  channelEdited: boolean,
  now: number,
): Promise<void> {
  const limits: number[] = [];
  if (topicEdited && realm.move_messages_within_stream_limit_seconds !== null) limits.push(realm.move_messages_within_stream_limit_seconds);
  if (channelEdited && realm.move_messages_between_streams_limit_seconds !== null)
    limits.push(realm.move_messages_between_streams_limit_seconds);
  if (limits.length === 0) return;
  const oldest = now - (Math.min(...limits) + EDIT_LIMIT_BUFFER_SECONDS);
  const all = await listTopicMessages(tx.trx, row.recipient_id, row.topic_key, accessScope(viewer, channel));
  const allowed = all.filter((m) => m.date_sent > oldest);
  if (allowed.length === all.length) return;
  throw new ApiError(
    `You only have permission to move the ${allowed.length}/${all.length} most recent messages in this topic.`,
    'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
    400,
    {
      first_message_id_allowed_to_move: allowed[0]?.id ?? null,
      total_messages_in_topic: all.length,
      total_messages_allowed_to_move: allowed.length,
    },
  );
}

/** In a channel whose history the caller cannot read, they act on the messages they hold rows for. */
const accessScope = (viewer: Viewer, channel: ChannelRow) =>
  canReadChannelHistory(viewer, channel) ? {} : { accessUserId: viewer.user.id };

const toSummary = (a: AttachmentRow): Schema<'AttachmentSummary'> => ({
  id: a.id,
  name: a.file_name,
  path_id: a.path_id,
  size: a.size,
  create_time: a.create_time,
  message_ids: [],
});

async function applyEdit(
  tx: Tx,
  ctx: AppContext,
  viewer: Viewer,
  plan: EditPlan,
  p: Params<'update-message'>,
): Promise<Data<'update-message'>> {
  const { row, origChannel, targetChannel } = plan;
  const now = editTimestamp();
  const event: UpdateMessageBusEvent = {
    type: 'update_message',
    user_id: viewer.user.id,
    edit_timestamp: now,
    message_id: row.id,
    message_ids: [row.id],
    rendering_only: false,
  };
  // The edited message and, once settled, the moved set (event.message_ids).
  invalidateMessagesAfterCommit(tx, ctx.bus, () => event.message_ids);
  const entry: Parameters<typeof insertEditEntry>[2] = { user_id: viewer.user.id, timestamp: now };
  let detached: AttachmentRow[] = [];

  if (plan.content) {
    const { raw, rendered } = plan.content;
    detached = await relinkAttachments(tx, ctx, plan, viewer, raw);
    const changed = await updateMessageContentIf(tx.trx, row.id, row.content, {
      content: raw,
      rendered_content: rendered.html,
      rendered_content_version: 1,
      is_me_message: rendered.isMeMessage,
      has_link: rendered.hasLink,
      has_image: rendered.hasImage,
      // As on send: whether the message links an upload record now.
      has_attachment: await messageHasAttachments(tx.trx, row.id),
      last_edit_time: now,
    });
    if (!changed) throw contentMismatch();
    await recomputeMentions(tx, plan, rendered);
    entry.prev_content = row.content;
    entry.prev_rendered_content = row.rendered_content;
    event.orig_content = row.content;
    event.orig_rendered_content = row.rendered_content ?? '';
    event.content = raw;
    event.rendered_content = rendered.html;
    event.is_me_message = rendered.isMeMessage;
  }

  if (!origChannel || !targetChannel) {
    await insertEditEntry(tx.trx, row.id, entry);
    const flags = await listUserMessageFlags(tx.trx, row.id);
    publishUpdate(tx, ctx, event, flags, new Map());
    return { detached_uploads: detached.map(toSummary) };
  }

  event.stream_id = origChannel.id;
  event.stream_name = origChannel.name;
  const isMove = moved(plan);
  const channelChanged = streamEdited(plan);
  const newTopic = plan.topic ?? row.topic;
  if (isMove) event.propagate_mode = plan.propagate;
  if (channelChanged) {
    entry.prev_stream = origChannel.id;
    entry.stream = targetChannel.id;
    event.orig_subject = row.topic;
    event.new_stream_id = targetChannel.id;
  }
  if (plan.topic !== undefined) {
    entry.prev_topic = row.topic;
    entry.topic = plan.topic;
    event.orig_subject = row.topic;
    event.subject = plan.topic;
    event.topic_links = topicLinksOf(plan.topic, plan.linkifiers);
  }

  // The moved set: the edited message, and with change_later / change_all
  // the topic's other messages the caller can access.
  let ids = [row.id];
  if (isMove && plan.propagate !== 'change_one') {
    const scope = { ...accessScope(viewer, origChannel), ...(plan.propagate === 'change_later' ? { fromId: row.id } : {}) };
    ids = (await listTopicMessages(tx.trx, row.recipient_id, row.topic_key, scope)).map((m) => m.id);
    if (!ids.includes(row.id)) ids = [...ids, row.id].sort((a, b) => a - b);
  }
  const others = ids.filter((id) => id !== row.id);

  await insertEditEntry(tx.trx, row.id, entry);
  if (isMove && others.length) {
    const { prev_content: _c, prev_rendered_content: _r, ...moveEntry } = entry;
    await insertMoveEntries(tx.trx, others, moveEntry);
  }

  // Who loses the messages and who gains them, when they change channel (Zulip's rules).
  let losingAccess: number[] = [];
  let guestsNewToTarget = new Set<number>();
  let oldSubsNotInNew: number[] = [];
  if (channelChanged) {
    // Idle subscribers' rows their catch-up would give them first, so the rules below treat
    // them as everyone's (ADR 0058).
    await insertIdleRowsOf(tx.trx, origChannel.recipient_id, ids);
    const [everOld, newSubs, oldSubs] = await Promise.all([
      listEverSubscribedIds(tx.trx, origChannel.recipient_id),
      listActiveSubscribersWithRole(tx.trx, targetChannel.recipient_id),
      listActiveSubscribersWithRole(tx.trx, origChannel.recipient_id),
    ]);
    const inNew = new Set(newSubs.map((u) => u.id));
    const inOld = new Set(oldSubs.map((u) => u.id));
    const losingRows = everOld.filter((id) => !inNew.has(id));
    if (targetChannel.invite_only) {
      losingAccess = losingRows;
    } else {
      // A public destination stays readable by everyone but guests.
      const roles = await getRoles(tx.trx, losingRows);
      losingAccess = losingRows.filter((id) => isGuestRole(roles.get(id) ?? 0));
    }
    guestsNewToTarget = new Set(newSubs.filter((u) => isGuestRole(u.role) && !inOld.has(u.id)).map((u) => u.id));
    oldSubsNotInNew = oldSubs.filter((u) => u.is_active && !inNew.has(u.id)).map((u) => u.id);
    await deleteUserMessagesOf(tx.trx, losingRows, ids);
    if (targetChannel.invite_only && !targetChannel.history_public_to_subscribers) {
      // Without shared history, subscribers read only what they hold rows for: the moved messages arrive read.
      await insertReadRowsForSubscribers(tx.trx, targetChannel.recipient_id, ids);
    }
  }

  // Read before the move: whether the destination topic already had messages (how policies merge).
  const targetHadMessages = isMove && (await topicHasOtherMessages(tx.trx, targetChannel.recipient_id, newTopic.toLowerCase(), []));
  if (isMove) {
    // Resolving or unresolving alone is not a move (last_moved_timestamp, feature level 365).
    const resolveOnly = (plan.topicResolved || plan.topicUnresolved) && !channelChanged;
    await moveMessageRows(tx.trx, ids, {
      recipient_id: targetChannel.recipient_id,
      topic: newTopic,
      topic_key: newTopic.toLowerCase(),
      last_moved_time: resolveOnly ? null : now,
    });
  }
  event.message_ids = ids;

  // Live updates: every holder of a row of the edited message, and the
  // subscribers who can read the channel's history without one.
  const flags = await listUserMessageFlags(tx.trx, row.id);
  const extra = new Map<number, number>();
  if (!origChannel.invite_only || origChannel.history_public_to_subscribers) {
    const losing = new Set(losingAccess);
    const subs = await getActiveSubscriberIds(tx.trx, targetChannel.recipient_id);
    for (const id of [...subs, ...oldSubsNotInNew]) {
      if (flags.has(id) || losing.has(id) || guestsNewToTarget.has(id)) continue;
      extra.set(id, flagMask('read'));
    }
  }
  publishUpdate(tx, ctx, event, flags, extra);
  if (losingAccess.length) {
    const deleteEvent: EventBody<Schema<'DeleteMessageEvent'>> = {
      type: 'delete_message',
      message_ids: ids,
      message_type: 'stream',
      stream_id: origChannel.id,
      topic: row.topic,
    };
    tx.afterCommit(() => ctx.bus.publish({ event: deleteEvent, userIds: losingAccess }));
  }

  if (channelChanged) {
    for (const c of [origChannel, targetChannel]) {
      const { before, after } = await refreshFirstMessageId(tx.trx, c.id, c.recipient_id);
      if (before === after) continue;
      const streamEvent: EventBody<Schema<'StreamUpdateEvent'>> = {
        type: 'stream',
        op: 'update',
        stream_id: c.id,
        name: c.name,
        property: 'first_message_id',
        value: after,
      };
      const audience = await channelAudience(tx, c);
      tx.afterCommit(() => ctx.bus.publish({ event: streamEvent, userIds: audience }));
    }
  }

  if (isMove) {
    const movedAll =
      plan.propagate === 'change_all' ||
      !(await topicHasOtherMessages(tx.trx, origChannel.recipient_id, row.topic_key, [], accessScope(viewer, origChannel).accessUserId));
    // Users' topic policies go with a whole topic (and their followers are known for the resolve notice).
    const followers = movedAll
      ? await moveTopicPolicies(tx, ctx, {
          origChannel,
          origTopic: row.topic,
          targetChannel,
          targetTopic: newTopic,
          targetHadMessages,
          losingAccess,
        })
      : new Set<number>();
    await sendMoveNotices(tx, ctx, viewer, plan, p, ids, movedAll, followers);
  }
  return { detached_uploads: detached.map(toSummary) };
}

function publishUpdate(
  tx: Tx,
  ctx: AppContext,
  event: UpdateMessageBusEvent,
  flags: Map<number, number>,
  extra: Map<number, number>,
): void {
  const all = new Map([...extra, ...flags]);
  tx.afterCommit(() =>
    ctx.bus.publish({
      event,
      userIds: [...all.keys()],
      perUser: flagsPerUser(all),
    }),
  );
}

/**
 * Mention flags after a content edit, for every holder of a row: mentioned
 * (directly or through a group), the channel wildcard for all, the topic
 * wildcard for the topic's participants — set where newly true, cleared
 * where no longer.
 */
async function recomputeMentions(tx: Tx, plan: EditPlan, rendered: RenderedMessage): Promise<void> {
  const { row } = plan;
  const mentioned = new Set(rendered.mentionedUserIds);
  for (const g of rendered.mentionedGroups) for (const id of await getRecursiveMemberIds(tx.trx, g.id)) mentioned.add(id);
  const participants =
    rendered.topicWildcard && row.recipient_type === RecipientType.CHANNEL
      ? new Set(await getTopicParticipantIds(tx.trx, row.recipient_id, row.topic_key))
      : new Set<number>();
  // A mention added to a channel message: idle subscribers without a row get the one their
  // catch-up would give them, so the bits below reach them too (ADR 0058).
  if (row.recipient_type === RecipientType.CHANNEL && (mentioned.size > 0 || rendered.streamWildcard || participants.size > 0)) {
    await insertIdleRowsOf(tx.trx, row.recipient_id, [row.id]);
  }
  const current = await listUserMessageFlags(tx.trx, row.id);
  const changes = new Map<number, number>();
  for (const [userId, flags] of current) {
    let bits = 0;
    if (mentioned.has(userId)) bits += flagMask('mentioned');
    if (rendered.streamWildcard) bits += flagMask('stream_wildcard_mentioned');
    if (participants.has(userId)) bits += flagMask('topic_wildcard_mentioned');
    const old = Math.floor(flags / flagMask('mentioned')) % 8; // bits 3..5
    if (old * flagMask('mentioned') !== bits) changes.set(userId, bits);
  }
  await setMentionBits(tx.trx, row.id, changes);
}

/**
 * Attachment links follow the content: new references to uploads the editor
 * may read are linked, removed ones unlinked. Returns the editor's uploads
 * that no message references any more (detached_uploads).
 */
async function relinkAttachments(tx: Tx, ctx: AppContext, plan: EditPlan, viewer: Viewer, content: string): Promise<AttachmentRow[]> {
  const { row } = plan;
  const refs = new Set(referencedUploads(content));
  const before = await listMessageAttachments(tx.trx, row.id);
  const removed = before.filter((a) => !refs.has(a.path_id));
  await unlinkAttachments(
    tx.trx,
    row.id,
    removed.map((a) => a.id),
  );
  const attachable = refs.size ? await listAttachableUploads(tx.trx, viewer.user, [...refs]) : [];
  await linkAttachments(
    tx.trx,
    row.id,
    attachable.map((a) => a.id),
  );
  // Each upload whose set of linking messages changed: an attachment update to its owner.
  const had = new Set(before.map((a) => a.id));
  const added = (await listMessageAttachments(tx.trx, row.id)).filter((a) => !had.has(a.id));
  await queueAttachmentEvents(ctx.bus, tx, 'update', row.realm_id, [...removed, ...added]);
  const mine = removed.filter((a) => a.owner_id === viewer.user.id).map((a) => a.id);
  return listUnlinkedAttachments(tx.trx, mine);
}

/** "@_**Name|id**": a silent mention of the acting user. */
const silentMention = (u: { id: number; full_name: string }) => `@_**${u.full_name}|${u.id}**`;
/** A link to a channel's topic in message syntax. */
const topicLink = (c: ChannelRow, topic: string) => `#**${c.name}>${topic}**`;

/**
 * The Notification Bot's notices of a move: the resolve notice (a pure
 * resolve or unresolve, as messages.type 2), and per
 * send_notification_to_old_thread / send_notification_to_new_thread the
 * breadcrumbs in the old and new topic — none in the new topic for a pure
 * resolve or unresolve. Whole-topic wording only when the caller moved
 * everything they can see, so nothing about messages they cannot read leaks.
 */
async function sendMoveNotices(
  tx: Tx,
  ctx: AppContext,
  viewer: Viewer,
  plan: EditPlan,
  p: Params<'update-message'>,
  ids: number[],
  movedAll: boolean,
  followers: ReadonlySet<number>,
): Promise<void> {
  const { row, origChannel, targetChannel } = plan;
  if (!origChannel || !targetChannel) return;
  const channelChanged = streamEdited(plan);
  const newTopic = plan.topic ?? row.topic;
  const bot = await notificationBot(tx, row.realm_id);
  const botViewer = await loadCaller(tx.trx, bot, plan.realm);
  const who = silentMention(viewer.user);
  // A notice about one's own action arrives read (Zulip's mark_as_read_for_acting_user).
  const readByActor = { ...INTERNAL, readBy: (id: number) => id === viewer.user.id };

  let resolveNotice: NewRowId | null = null;
  if (plan.topic !== undefined && !plan.content && !channelChanged && (plan.topicResolved || plan.topicUnresolved)) {
    const text = plan.topicResolved ? `${who} has marked this topic as resolved.` : `${who} has marked this topic as unresolved.`;
    // resolved_topic_notice_auto_read_policy: the notice starts read except for users who chose
    // "never", and those who chose "except_followed" and followed the topic; the actor reads it.
    const subscribers = await getUsersByIds(tx.trx, await getActiveSubscriberIds(tx.trx, origChannel.recipient_id));
    const keepUnread = new Set(
      [...subscribers.values()]
        .filter((u) => {
          if (u.is_bot) return false;
          const policy = parseSettings(u.settings).resolved_topic_notice_auto_read_policy;
          return policy === 'never' || (policy === 'except_followed' && followers.has(u.id));
        })
        .map((u) => u.id),
    );
    keepUnread.delete(viewer.user.id);
    resolveNotice = await sendMessageInTx(tx, ctx.bus, botViewer, { kind: 'channel', channel: origChannel, topic: newTopic }, text, {
      ...INTERNAL,
      messageType: 2,
      readBy: (id) => !keepUnread.has(id),
    });
  }

  const count = ids.length;
  const oldLocation = topicLink(origChannel, row.topic);
  const newLocation = topicLink(targetChannel, newTopic);

  const notifyNew =
    (p.send_notification_to_new_thread ?? true) &&
    (channelChanged || (plan.topic !== undefined && !plan.topicResolved && !plan.topicUnresolved));
  if (notifyNew) {
    const exclude = resolveNotice === null ? ids : [...ids, await tx.idOf(resolveNotice)];
    const preexisting = await topicHasOtherMessages(
      tx.trx,
      targetChannel.recipient_id,
      newTopic.toLowerCase(),
      exclude,
      accessScope(viewer, targetChannel).accessUserId,
    );
    const link = `${channelNarrowPath(targetChannel.id, targetChannel.name)}/topic/${encodeHashComponent(newTopic)}/near/${row.id}`;
    const text =
      !preexisting && movedAll
        ? `This topic was moved here from ${oldLocation} by ${who}.`
        : count === 1
          ? `[A message](${link}) was moved here from ${oldLocation} by ${who}.`
          : `${count} messages were moved here from ${oldLocation} by ${who}.`;
    await sendMessageInTx(tx, ctx.bus, botViewer, { kind: 'channel', channel: targetChannel, topic: newTopic }, text, readByActor);
  }
  if (p.send_notification_to_old_thread ?? false) {
    const text = movedAll
      ? `This topic was moved to ${newLocation} by ${who}.`
      : count === 1
        ? `A message was moved from this topic to ${newLocation} by ${who}.`
        : `${count} messages were moved from this topic to ${newLocation} by ${who}.`;
    await sendMessageInTx(tx, ctx.bus, botViewer, { kind: 'channel', channel: origChannel, topic: row.topic }, text, readByActor);
  }
}
