import type { Knex } from 'knex';
import type { AppContext } from '../context';
import type { Data, Params } from '../contract';
import { inTransaction, type NewRowId, Tx } from '../db/transaction';
import { dmGroupHash } from '../domain/dm';
import { flagMask } from '../domain/flags';
import { flagsPerUser } from '../events/per-user-flags';
import { effectiveTopicsPolicy, normalizeContent, normalizeTopic } from '../domain/topics';
import { bounded } from '../domain/bounded';
import { ApiError } from '../errors';
import type { EventBus } from '../events/bus';
import { canReadChannelHistory, canSeeChannel, inGroup, Caller, Viewer } from '../access/viewer';
import { applyPoliciesOnSend, decideSenderPolicy, readSenderTopicState } from './automatic-topic-policies';
import type { TopicStateForUser } from '../queries/automatic-topic-policies';
import { checkCanAccessUsers } from '../access/user-access';
import { ChannelRow, getActiveSubscriberIds } from '../queries/channels';
import { getRecursiveMemberIds } from '../queries/groups';
import { getDmGroupByHash, insertUserMessages, setChannelFirstMessageId } from '../queries/messages';
import { getTopicParticipantIds, topicExists } from '../queries/render-context';
import type { RealmRow, UserRow } from '../queries/rows';
import { listUsersByApiEmails, listUsersByIds } from '../queries/users';
import { type MessageBusEvent, renderMessageDict, toMessageDict } from '../serializers/messages';
import type { MessageDictCache } from '../access/message-dicts';
import { linkAttachments } from '../queries/attachments';
import { listAttachableUploads } from '../access/attachments';
import { queueAttachmentEvents } from './uploads';
import { recordActivity } from './activity';
import { referencedUploads } from '../domain/uploads';
import { renderForRealm, type RenderedMessage } from './render';
import type { CompiledLinkifier } from '../domain/linkifiers';
import { topicLinksOf } from '../markdown/zulip';
import { listAlertedUsers } from './alert-words';
import { widgetFromContent } from '../domain/widgets';
import { insertSubmessage, type SubmessageRow } from '../queries/submessages';
import { dmGroupRecipient, insertMessageRow, type StoredRecipient } from './send';
import { RecipientType } from '../domain/recipients';
import { isGuestRole } from '../domain/roles';
import { listMutingUserIds } from '../queries/muted-users';
import { VisibilityPolicy } from '../domain/user-topics';
import { listTopicPolicies } from '../queries/user-topics';
import { noteTopicSend } from '../queries/topic-summaries';

/** Zulip's threshold above which wildcard mentions need can_mention_many_users_group. */
export const WILDCARD_MENTION_THRESHOLD = 15;

export type SendTarget =
  /**
   * subscriberIds: the channel's active subscribers when already read with it (else read in
   * the send); idleSubscriberIds, read with them: the long-idle ones who may get no row.
   */
  | {
      kind: 'channel';
      channel: ChannelRow;
      topic: string;
      subscriberIds?: readonly number[];
      idleSubscriberIds?: ReadonlySet<number> | null;
    }
  | { kind: 'direct'; recipients: UserRow[] };

export interface SendOptions {
  client: string;
  readBySender: boolean;
  /** Messages the server itself sends (Notification Bot): no permission checks. */
  internal?: boolean;
  /**
   * The channel's posting rules are not checked (Zulip's
   * skip_stream_access_check): an outgoing-webhook bot's reply goes where
   * the message that triggered it was, subscribed or not.
   */
  skipChannelAccessCheck?: boolean;
  queueId?: string;
  localId?: string;
  /** messages.type: 2 for the resolve-topic notice (default 1, a normal message). */
  messageType?: number;
  /** Receivers whose copy starts read (the acting user of a notice about their own action). */
  readBy?: (userId: number) => boolean;
  /** Where the new message's dict goes after commit, so that its first fetch is a hit. */
  messageCache?: MessageDictCache;
  /** The organization's linkifiers (src/cache/linkifiers.ts), for the content and the topic's links. */
  linkifiers?: readonly CompiledLinkifier[];
  /** Who muted the sender (src/cache/muting-users.ts); read in the transaction when not given. */
  mutingUsers?: ReadonlySet<number>;
  /** The sender's state for the topic, read before the transaction (readSenderTopicState); read in it when not given. */
  senderTopicState?: TopicStateForUser | null;
  /**
   * Filled by the send: the policy the sender's automatic follow/unmute
   * settings gave them for the topic, which POST /messages reports as
   * automatic_new_visibility_policy.
   */
  outcome?: { automaticNewVisibilityPolicy?: number };
}

/** Clients whose users read what they send as they send it (Zulip's default_read_by_sender). */
const INTERACTIVE_CLIENTS = /^(website|ZulipWeb|ZulipMobile|ZulipFlutter|ZulipElectron|ZulipDesktop|ZulipTerminal)$/i;
export const defaultReadBySender = (client: string) => INTERACTIVE_CLIENTS.test(client);

/** The client name Zulip records: the User-Agent's product token. */
export function clientFromUserAgent(ua: string | undefined): string {
  const token = (ua ?? '').trim().split(/[\s/]/)[0] ?? '';
  return token && /^[\w.-]{1,30}$/.test(token) ? token : 'API';
}

/** POST /messages. */
export async function doSendMessage(
  ctx: AppContext,
  viewer: Caller,
  p: Params<'send-message'>,
  client: string,
): Promise<Data<'send-message'>> {
  if (p.topic !== undefined && p.subject !== undefined) {
    throw new ApiError("Can't decide between 'topic' and 'subject' arguments", 'REQUEST_CONFUSING_VAR', 400, {
      var_name1: 'topic',
      var_name2: 'subject',
    });
  }
  const content = normalizeContent(p.content);
  const target = await resolveTarget(ctx, viewer, p);
  const opts: SendOptions = {
    client,
    readBySender: p.read_by_sender ?? defaultReadBySender(client),
    queueId: p.queue_id,
    localId: p.local_id,
    messageCache: ctx.messageCache,
    linkifiers: await ctx.caches.linkifiers.get(viewer.realm.id),
    mutingUsers: await ctx.caches.mutingUsers.get(viewer.user.id),
    outcome: {},
  };
  if (target.kind === 'channel') {
    const { channel, topic } = target;
    opts.senderTopicState = await readSenderTopicState(ctx.db, viewer.user, channel, topic, canReadChannelHistory(viewer, channel));
  }
  const id = (await inTransaction(ctx.db, (tx) => sendMessageInTx(tx, ctx.bus, viewer, target, content, opts))).committed();
  // Sending is activity: partial subscriber lists keep users active in the last 14 days.
  await recordActivity(ctx, viewer.user.id);
  const policy = opts.outcome?.automaticNewVisibilityPolicy;
  return policy === undefined ? { id } : { id, automatic_new_visibility_policy: policy as 2 | 3 };
}

async function resolveTarget(ctx: AppContext, viewer: Viewer, p: Params<'send-message'>): Promise<SendTarget> {
  const realmId = viewer.user.realm_id;
  if (p.type === 'stream' || p.type === 'channel') {
    if (p.to === undefined) throw new ApiError("Missing 'to' argument", 'REQUEST_VARIABLE_MISSING', 400, { var_name: 'to' });
    let to = p.to;
    if (Array.isArray(to)) {
      if (to.length !== 1) throw new ApiError('Cannot send to multiple channels');
      to = to[0]!;
    }
    const found = await ctx.caches.channels.forSending(realmId, to);
    const channel = found?.channel;
    if (!found || !channel || !canSeeChannel(viewer, channel)) {
      throw typeof to === 'number'
        ? new ApiError(`Channel with ID '${to}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream_id: to })
        : new ApiError(`Channel '${to}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream: to });
    }
    const rawTopic = p.topic ?? p.subject;
    if (rawTopic === undefined) throw new ApiError('Missing topic');
    const topic = normalizeTopic(rawTopic);
    return {
      kind: 'channel',
      channel,
      topic,
      subscriberIds: found.subscriberIds,
      idleSubscriberIds: found.idleSubscriberIds && (await withoutTopicFollowers(ctx, found.idleSubscriberIds, channel.id, topic)),
    };
  }
  // direct / private
  const recipients = await resolveDmRecipients(ctx, realmId, p.to);
  return { kind: 'direct', recipients };
}

/** Recipients of one direct message (a Parley limit, documented in the contract). */
const MAX_DM_RECIPIENTS = 1000;

async function resolveDmRecipients(ctx: AppContext, realmId: number, to: Params<'send-message'>['to']): Promise<UserRow[]> {
  if (to === undefined) throw new ApiError("Missing 'to' argument", 'REQUEST_VARIABLE_MISSING', 400, { var_name: 'to' });
  const items: Array<string | number> = Array.isArray(to)
    ? to
    : typeof to === 'number'
      ? [to]
      : to
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  if (items.length === 0) throw new ApiError('Message must have recipients');
  // The contract bounds a JSON list; a comma-separated string gets the same bound.
  if (items.length > MAX_DM_RECIPIENTS) throw new ApiError(`Too many recipients (limit: ${MAX_DM_RECIPIENTS})`);
  const kinds = new Set(items.map((i) => typeof i));
  if (kinds.size > 1) throw new ApiError('Recipient lists may contain emails or user IDs, but not both.');
  const byId = new Map(
    (
      await listUsersByIds(
        ctx.db,
        realmId,
        items.filter((i): i is number => typeof i === 'number'),
      )
    ).map((u) => [u.id, u]),
  );
  const byEmail = await listUsersByApiEmails(
    ctx.db,
    realmId,
    items.filter((i): i is string => typeof i === 'string'),
  );
  const users: UserRow[] = [];
  for (const item of items) {
    const user = typeof item === 'number' ? byId.get(item) : byEmail.get(item);
    if (!user) throw new ApiError(typeof item === 'number' ? `Invalid user ID ${item}` : `Invalid email '${bounded(item)}'`);
    if (!user.is_active) throw new ApiError(`'${user.email}' is no longer using Zulip.`);
    users.push(user);
  }
  return users;
}

/** What a send's checks learn on the way, which storing the message needs. */
export interface CheckedSend {
  rendered: RenderedMessage;
  /** Who receives it: the channel's active subscribers, or the conversation's participants (the sender first). */
  receivers: readonly number[];
  /** For a topic wildcard mention: who took part in the topic so far. */
  topicParticipants: number[];
}

/**
 * Every check of a send, with nothing written: the content renders (and
 * names only groups the sender may mention), the channel's posting rules
 * and its wildcard-mention limits, or the direct-message permissions.
 * Internal sends (Notification Bot) skip the permission checks. Scheduling a
 * message and setting a reminder run it too, when they are made
 * (src/actions/scheduled-messages.ts), as Zulip checks a scheduled message
 * both then and when it is sent.
 */
export async function checkSend(
  q: Knex | Knex.Transaction,
  viewer: Caller,
  target: SendTarget,
  content: string,
  opts: Pick<SendOptions, 'internal' | 'linkifiers' | 'skipChannelAccessCheck'>,
): Promise<CheckedSend> {
  const realm = viewer.realm;
  const rendered = await renderForRealm(
    q,
    realm.id,
    content,
    opts.internal ? null : viewer,
    opts.internal || inGroup(viewer, realm.can_access_all_users_group),
    opts.linkifiers,
  );
  for (const g of rendered.mentionedGroups) {
    if (!opts.internal && !inGroup(viewer, g.can_mention_group))
      throw new ApiError(`You are not allowed to mention user group '${g.name}'.`);
  }
  if (target.kind === 'direct') {
    if (!opts.internal) {
      await checkCanAccessUsers(q, viewer, target.recipients);
      await checkCanDirectMessage(q, viewer, realm, target.recipients);
    }
    return { rendered, receivers: [...new Set([viewer.user.id, ...target.recipients.map((u) => u.id)])], topicParticipants: [] };
  }
  const { channel, topic } = target;
  if (!opts.internal && !opts.skipChannelAccessCheck) await checkCanPost(q, viewer, realm, channel, topic);
  const receivers = target.subscriberIds ?? (await getActiveSubscriberIds(q, channel.recipient_id));
  if (rendered.streamWildcard && receivers.length > WILDCARD_MENTION_THRESHOLD && !inGroup(viewer, realm.can_mention_many_users_group)) {
    throw new ApiError(
      'You do not have permission to use channel wildcard mentions in this channel.',
      'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
    );
  }
  let topicParticipants: number[] = [];
  if (rendered.topicWildcard) {
    topicParticipants = await getTopicParticipantIds(q, channel.recipient_id, topic.toLowerCase());
    if (topicParticipants.length > WILDCARD_MENTION_THRESHOLD && !inGroup(viewer, realm.can_mention_many_users_group)) {
      throw new ApiError('You do not have permission to use topic wildcard mentions in this topic.', 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED');
    }
  }
  return { rendered, receivers, topicParticipants };
}

/**
 * Checks, renders and stores one message with a user_messages row per
 * receiver (flags: read for the sender's copy when read_by_sender, the
 * mention flags, is_private for DMs), and queues the message event for
 * after commit. Used by POST /messages and by the demo organization.
 * Returns the message's id: on MySQL/MariaDB a held insert's, known once the
 * transaction committed (`committed()`), or within it at the cost of a
 * round trip (`tx.idOf`).
 */
export async function sendMessageInTx(
  tx: Tx,
  bus: EventBus | null,
  viewer: Caller,
  target: SendTarget,
  content: string,
  opts: SendOptions,
): Promise<NewRowId> {
  const sender = viewer.user;
  const realm = viewer.realm;
  const { rendered, receivers, topicParticipants } = await checkSend(tx.trx, viewer, target, content, opts);

  let recipient: StoredRecipient;
  let topic = '';
  let senderPolicy: Awaited<ReturnType<typeof decideSenderPolicy>> = null;
  if (target.kind === 'channel') {
    const { channel } = target;
    topic = target.topic;
    // Decided before the message is stored: whether the sender starts the topic.
    if (bus)
      senderPolicy = await decideSenderPolicy(tx, sender, channel, topic, canReadChannelHistory(viewer, channel), opts.senderTopicState);
    recipient = {
      id: channel.recipient_id,
      type: RecipientType.CHANNEL,
      typeId: channel.id,
      channel: { id: channel.id, name: channel.name },
    };
  } else {
    const dm = await dmGroupRecipient(tx, receivers);
    recipient = { id: dm.recipientId, type: RecipientType.DM_GROUP, typeId: dm.groupId, channel: null };
  }

  const mentioned = new Set(rendered.mentionedUserIds);
  // Who is mentioned only through groups, by the smallest such group: their
  // notification names it (Zulip's get_user_group_mentions_data).
  const byGroup = new Map<number, { id: number; name: string; size: number }>();
  for (const g of rendered.mentionedGroups) {
    const members = await getRecursiveMemberIds(tx.trx, g.id);
    for (const id of members) {
      mentioned.add(id);
      if (rendered.mentionedUserIds.has(id)) continue;
      const before = byGroup.get(id);
      if (!before || before.size > members.length) byGroup.set(id, { id: g.id, name: g.name, size: members.length });
    }
  }
  const topicWildcardUsers = new Set(topicParticipants);
  const alerted = await listAlertedUsers(tx.trx, realm, receivers, sender.id, content);
  const base = target.kind === 'direct' ? flagMask('is_private') : 0;
  // Those who muted the sender get every message of theirs already read, channel or direct
  // (Zulip's muted_sender_user_ids); being read, it never notifies them (src/actions/push-relay.ts).
  const muting = opts.mutingUsers ?? new Set(await listMutingUserIds(tx.trx, sender.id));
  let rows = receivers.map((userId) => {
    let flags = base;
    if ((userId === sender.id && opts.readBySender) || opts.readBy?.(userId) || muting.has(userId)) flags += flagMask('read');
    if (mentioned.has(userId)) flags += flagMask('mentioned');
    if (alerted.has(userId)) flags += flagMask('has_alert_word');
    if (rendered.streamWildcard) flags += flagMask('stream_wildcard_mentioned');
    if (rendered.topicWildcard && topicWildcardUsers.has(userId)) flags += flagMask('topic_wildcard_mentioned');
    return { userId, flags };
  });
  if (target.kind === 'channel' && target.idleSubscriberIds) {
    rows = withoutIdleRows(rows, target.idleSubscriberIds, sender.id);
  }
  if (!receivers.includes(sender.id)) {
    // Sending to a channel one is not subscribed to still records the sender's copy, read.
    rows.push({ userId: sender.id, flags: base + (opts.readBySender ? flagMask('read') : 0) });
  }

  // The uploads the content references that the sender may read become the
  // message's attachments. As Zulip, has_attachment means the message links
  // an upload record, not merely a /user_uploads/ URL.
  const uploads = referencedUploads(content);
  const claimed = uploads.length ? await listAttachableUploads(tx.trx, sender, uploads) : [];
  const inserted = await insertMessageRow(tx, {
    realmId: realm.id,
    senderId: sender.id,
    recipient,
    topic,
    content,
    rendered: rendered.hasAttachment === claimed.length > 0 ? rendered : { ...rendered, hasAttachment: claimed.length > 0 },
    client: opts.client,
    type: opts.messageType,
  });
  // On MySQL/MariaDB the id is a held insert's (ADR 0026): the rows below name
  // it in SQL, and a send that needs nothing else goes out whole with COMMIT.
  await insertUserMessages(tx.trx, inserted.id, rows);
  // The rarer writes that need the id as a value cost a round trip for it.
  if (claimed.length) {
    await linkAttachments(
      tx.trx,
      await tx.idOf(inserted.id),
      claimed.map((a) => a.id),
    );
    if (bus) await queueAttachmentEvents(bus, tx, 'update', realm.id, claimed);
  }

  if (target.kind === 'channel' && target.channel.first_message_id === null) {
    await setChannelFirstMessageId(tx.trx, target.channel.id, await tx.idOf(inserted.id));
  }
  // The automatic topic policies of the sender and of those mentioned; their
  // events go out before the message's, as Zulip sends them. Without a bus
  // (the demo organization's history) nobody is watching, and none are set.
  let policiesBefore: Map<number, number> | null = null;
  if (target.kind === 'channel' && bus) {
    policiesBefore = await applyPoliciesOnSend(
      tx,
      { bus },
      sender.id,
      senderPolicy,
      target.channel,
      topic,
      rendered.mentionedUserIds,
      receivers,
    );
    if (senderPolicy && opts.outcome) opts.outcome.automaticNewVisibilityPolicy = senderPolicy.policy;
  }
  // Content starting with /poll, /todo or /rsvp makes the message a widget:
  // its definition is the message's first submessage, from the sender.
  const widget = widgetFromContent(content);
  const submessages: SubmessageRow[] = [];
  if (widget) {
    const row = {
      message_id: await tx.idOf(inserted.id),
      sender_id: sender.id,
      msg_type: 'widget',
      content: JSON.stringify(widget),
    };
    submessages.push({ id: await insertSubmessage(tx.trx, row), ...row });
  }
  // The channel's topic row (src/queries/topic-summaries.ts) is the send's
  // last write. On MariaDB its upsert locks a row that every send to this
  // topic shares, until COMMIT: taken after the receivers' rows, concurrent
  // sends to one topic wait for each other's COMMIT only, not for each
  // other's inserts. Held like them: it goes out in the COMMIT's packet.
  if (recipient.channel) await noteTopicSend(tx.trx, recipient.id, topic, inserted.id);
  // Everything the dict and the event need is in hand but the id: the rest
  // of the stored row, the sender and (for a DM) its participants; a new
  // message has no reactions or edits. Both are built once committed, when
  // the id is known.
  const people = target.kind === 'direct' ? [sender, ...target.recipients] : [sender];
  const dictOf = (id: number) =>
    toMessageDict(
      { id, ...inserted.row },
      {
        reactions: [],
        submessages,
        edits: [],
        dmParticipantIds: recipient.channel ? null : [...new Set(people.map((u) => u.id))].sort((a, b) => a - b),
      },
    );
  const cache = opts.messageCache;
  if (!cache && !bus) return inserted.id;
  tx.afterCommit(() => {
    const id = inserted.id.known();
    // Unknown only when COMMIT's answer was lost and the witness could not
    // read the row back (not visible yet from the connection it asked on): the
    // message is stored, but no event can name it (ADR 0026).
    if (id === undefined) return;
    const dict = dictOf(id);
    // Stored unless something invalidated it meanwhile (a load that reads nothing).
    if (cache) void cache.load(dict.id, () => Promise.resolve(dict));
    if (!bus) return;
    // Each receiver's flags travel beside the shared message (perUser).
    const { flags: _flags, ...message } = renderMessageDict(
      dict,
      0,
      {
        users: new Map(people.map((u) => [u.id, u])),
        channelNames: recipient.channel ? new Map([[recipient.id, recipient.channel.name]]) : new Map(),
        realm,
        senderAvatars: new Map(),
        topicLinks: (topic) => topicLinksOf(topic, opts.linkifiers ?? []),
      },
      { viewer: sender, applyMarkdown: true, clientGravatar: false, allowEmptyTopicName: true },
    );
    const event: MessageBusEvent = {
      type: 'message',
      message,
      raw_content: content,
      sender_queue_id: opts.queueId ?? null,
      local_message_id: opts.localId ?? null,
      sender,
      ...(policiesBefore?.size ? { topic_policies_before: Object.fromEntries(policiesBefore) } : {}),
      ...(byGroup.size ? { group_mentions: groupMentionsOf(byGroup, receivers) } : {}),
      ...(mentioned.size ? { mentioned_user_ids: [...mentioned] } : {}),
    };
    const flagsByUser = new Map(rows.map((r) => [r.userId, r.flags]));
    bus.publish({
      event,
      userIds: rows.map((r) => r.userId),
      perUser: flagsPerUser(flagsByUser),
      ...(target.kind === 'channel' && !target.channel.invite_only ? { publicChannelRealmId: realm.id } : {}),
    });
  });
  return inserted.id;
}

/**
 * The idle subscribers who may go without a row for a message to this topic:
 * not those who follow it (they may be notified of it). Read before the
 * send's transaction, as its other reads are; an idle user cannot change
 * what they follow without coming back first.
 */
async function withoutTopicFollowers(
  ctx: AppContext,
  idle: ReadonlySet<number>,
  channelId: number,
  topic: string,
): Promise<ReadonlySet<number>> {
  const policies = await listTopicPolicies(ctx.db, channelId, topic);
  // Usually no idle user follows it (its followers are the few who take part): the set as it is.
  const following = [...policies].filter(([id, policy]) => policy === VisibilityPolicy.FOLLOWED && idle.has(id));
  if (following.length === 0) return idle;
  const left = new Set(idle);
  for (const [id] of following) left.delete(id);
  return left;
}

/**
 * Soft deactivation (ADR 0058): the rows a long-idle subscriber goes without.
 * A row is left out only when its flags are 0 (not mentioned in any way, no
 * alert word, not read by muting the sender) and the subscriber neither
 * keeps rows for notifications nor follows the topic (`idle` holds only
 * those who do neither): exactly the rows their catch-up inserts, unread,
 * when they come back. The sender's own row always stays.
 */
function withoutIdleRows(
  rows: Array<{ userId: number; flags: number }>,
  idle: ReadonlySet<number>,
  senderId: number,
): Array<{ userId: number; flags: number }> {
  return rows.filter((r) => r.flags !== 0 || r.userId === senderId || !idle.has(r.userId));
}

/** The receivers mentioned through a group only, with that group (MessageBusEvent.group_mentions). */
function groupMentionsOf(byGroup: ReadonlyMap<number, { id: number; name: string }>, receivers: readonly number[]) {
  const users: Record<number, number> = {};
  const names: Record<number, string> = {};
  for (const userId of receivers) {
    const g = byGroup.get(userId);
    if (!g) continue;
    users[userId] = g.id;
    names[g.id] = g.name;
  }
  return { users, names };
}

/**
 * Whether the viewer may post in the channel at all, whatever the topic:
 * not archived, subscribed when it is private (or they are a guest), in
 * can_send_message_group. A channel's email address is given only to those
 * who pass it, and mail to one is posted only while its user still does.
 */
export function checkMayPostInChannel(viewer: Viewer, channel: ChannelRow): void {
  const subscribed = viewer.subscribedRecipients.has(channel.recipient_id);
  if (channel.deactivated || ((channel.invite_only || isGuestRole(viewer.user.role)) && !subscribed)) {
    throw new ApiError(`Not authorized to send to channel '${channel.name}'`);
  }
  if (!inGroup(viewer, channel.can_send_message_group)) {
    throw new ApiError('You do not have permission to post in this channel.');
  }
}

/** Channel posting rules: archived channels, content access, can_send_message_group, topics policy, new-topic permission. */
async function checkCanPost(
  q: Knex | Knex.Transaction,
  viewer: Viewer,
  realm: RealmRow,
  channel: ChannelRow,
  topic: string,
): Promise<void> {
  checkMayPostInChannel(viewer, channel);
  const policy = effectiveTopicsPolicy(channel.topics_policy, realm.topics_policy);
  if (topic === '' && policy === 'disable_empty_topic') {
    throw new ApiError(
      channel.topics_policy === 'inherit'
        ? 'Topics are required in this organization'
        : 'Sending messages to the general chat is not allowed in this channel.',
    );
  }
  if (topic !== '' && policy === 'empty_topic_only') {
    throw new ApiError('Only the general chat topic is allowed in this channel.');
  }
  if (!inGroup(viewer, channel.can_create_topic_group) && !(await topicExists(q, channel.recipient_id, topic.toLowerCase()))) {
    throw new ApiError('You do not have permission to create new topics in this channel.');
  }
}

/** Direct messages: the realm's direct_message_permission_group, and direct_message_initiator_group for a new conversation. */
async function checkCanDirectMessage(q: Knex | Knex.Transaction, viewer: Viewer, realm: RealmRow, recipients: UserRow[]): Promise<void> {
  const others = recipients.filter((u) => u.id !== viewer.user.id && !u.is_bot);
  if (others.length === 0) return; // notes to oneself and messages to bots are always allowed
  if (!inGroup(viewer, realm.direct_message_permission_group)) {
    throw new ApiError('You do not have permission to send direct messages to this recipient.');
  }
  if (!inGroup(viewer, realm.direct_message_initiator_group)) {
    const existing = await getDmGroupByHash(q, dmGroupHash([viewer.user.id, ...recipients.map((u) => u.id)]));
    if (!existing) throw new ApiError('You do not have permission to initiate direct message conversations.');
  }
}
