import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { normalizeContent, normalizeTopic } from '../domain/topics';
import { ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { canSeeChannel, inGroup, type Caller } from '../access/viewer';
import type { UserRow } from '../queries/rows';
import { listUsersByIds } from '../queries/users';
import {
  DeliveryType,
  deleteScheduledMessage,
  findOwnScheduledForUpdate,
  insertScheduledMessage,
  listUndelivered,
  type ScheduledMessageRow,
  updateScheduledMessage,
} from '../queries/scheduled-messages';
import { toApiScheduledMessage } from '../serializers/scheduled-messages';
import { checkSend, defaultReadBySender, type SendTarget } from './messages';
import { renderForRealm } from './render';
import { wakeScheduledDelivery } from './scheduled-delivery';

/**
 * Scheduled messages (Zulip's ScheduledMessage with delivery type "send
 * later"). Each belongs to its sender: every event goes to the sender's
 * queues alone, and another user's is answered exactly as a missing one
 * (Zulip's 404 with code BAD_REQUEST). The delivery is
 * src/actions/scheduled-delivery.ts's.
 */
const doesNotExist = () => new ApiError('Scheduled message does not exist', 'BAD_REQUEST', 404);
export const notInFuture = () => new ApiError('Scheduled delivery time must be in the future.');

/** Where a scheduled message goes, as stored and as the send needs it. */
export interface ScheduledAddressee {
  channel_id: number | null;
  to_user_ids: number[];
  topic: string;
  target: SendTarget;
  /** A direct message to the sender alone. */
  toSelf: boolean;
}

type Kind = 'stream' | 'private';
const kindOf = (type: string): Kind => (type === 'stream' || type === 'channel' ? 'stream' : 'private');

/** Zulip compares the delivery time with now to the second; an equal second is already past. */
export function checkFutureTimestamp(ts: number): void {
  if (ts * 1000 <= Date.now()) throw notInFuture();
}

/**
 * The recipients of a scheduled message, resolved as Zulip's
 * recipient_parsing does: a channel by its ID only, a direct message by a
 * list of user IDs only (the sender may be in it).
 */
export async function resolveScheduledAddressee(
  ctx: AppContext,
  caller: Caller,
  kind: Kind,
  to: number | number[],
  rawTopic: string | undefined,
): Promise<ScheduledAddressee> {
  const realmId = caller.realm.id;
  if (kind === 'stream') {
    if (Array.isArray(to)) throw new ApiError('Invalid data type for channel ID');
    const found = await ctx.caches.channels.forSending(realmId, to);
    if (!found?.channel || !canSeeChannel(caller, found.channel)) {
      throw new ApiError(`Channel with ID '${to}' does not exist`, 'STREAM_DOES_NOT_EXIST', 400, { stream_id: to });
    }
    if (rawTopic === undefined) throw new ApiError('Missing topic');
    const topic = normalizeTopic(rawTopic);
    return {
      channel_id: found.channel.id,
      to_user_ids: [],
      topic,
      target: { kind: 'channel', channel: found.channel, topic },
      toSelf: false,
    };
  }
  if (!Array.isArray(to)) throw new ApiError('Invalid data type for recipients');
  const ids = [...new Set(to)];
  if (ids.length === 0) throw new ApiError('Message must have recipients');
  const byId = new Map((await listUsersByIds(ctx.db, realmId, ids)).map((u) => [u.id, u]));
  const users: UserRow[] = [];
  for (const id of ids) {
    const user = byId.get(id);
    if (!user) throw new ApiError(`Invalid user ID ${id}`);
    if (!user.is_active) throw new ApiError(`'${user.email}' is no longer using Zulip.`);
    users.push(user);
  }
  // Zulip shows a direct message's recipients as its participants other
  // than the sender, or the sender alone for a note to self.
  const others = ids.filter((id) => id !== caller.user.id).sort((a, b) => a - b);
  return {
    channel_id: null,
    to_user_ids: others.length ? others : [caller.user.id],
    topic: '',
    target: { kind: 'direct', recipients: users },
    toSelf: others.length === 0,
  };
}

/**
 * Checks the message as a send would, and now: Zulip runs its whole
 * check_message when a message is scheduled (posting permissions, topic
 * policy, group and wildcard mentions, direct-message permissions), and
 * again when it is sent. The send's own checks (checkSend), with nothing
 * written.
 */
export async function checkSendable(ctx: AppContext, caller: Caller, target: SendTarget, content: string): Promise<void> {
  await checkSend(ctx.db, caller, target, content, { linkifiers: await ctx.caches.linkifiers.get(caller.realm.id) });
}

/** The content's HTML as the sender would see it sent now (Zulip stores it with the scheduled message). */
async function renderScheduled(ctx: AppContext, caller: Caller, content: string): Promise<string> {
  const rendered = await renderForRealm(
    ctx.db,
    caller.realm.id,
    content,
    caller,
    inGroup(caller, caller.realm.can_access_all_users_group),
    await ctx.caches.linkifiers.get(caller.realm.id),
  );
  return rendered.html;
}

const publishToSender = (
  ctx: AppContext,
  userId: number,
  event:
    | EventBody<Schema<'ScheduledMessagesAddEvent'>>
    | EventBody<Schema<'ScheduledMessagesUpdateEvent'>>
    | EventBody<Schema<'ScheduledMessagesRemoveEvent'>>,
) => ctx.bus.publish({ event, userIds: [userId] });

export function scheduledUpdateEvent(row: ScheduledMessageRow): EventBody<Schema<'ScheduledMessagesUpdateEvent'>> {
  return { type: 'scheduled_messages', op: 'update', scheduled_message: toApiScheduledMessage(row) };
}

export function scheduledRemoveEvent(id: number): EventBody<Schema<'ScheduledMessagesRemoveEvent'>> {
  return { type: 'scheduled_messages', op: 'remove', scheduled_message_id: id };
}

/** GET /scheduled_messages: the caller's undelivered scheduled messages, earliest first. */
export async function getScheduledMessages(ctx: AppContext, user: UserRow): Promise<Data<'get-scheduled-messages'>> {
  const rows = await listUndelivered(ctx.db, user.id, [DeliveryType.SEND_LATER]);
  return { scheduled_messages: rows.map(toApiScheduledMessage) };
}

/** POST /scheduled_messages. */
export async function doCreateScheduledMessage(
  ctx: AppContext,
  caller: Caller,
  p: Params<'create-scheduled-message'>,
  client: string,
): Promise<Data<'create-scheduled-message'>> {
  // Zulip's order: the time, then the recipients, then the message as a send checks it.
  checkFutureTimestamp(p.scheduled_delivery_timestamp);
  const addressee = await resolveScheduledAddressee(ctx, caller, kindOf(p.type), p.to, p.topic);
  const content = normalizeContent(p.content);
  await checkSendable(ctx, caller, addressee.target, content);
  const rendered = await renderScheduled(ctx, caller, content);
  // Zulip's default: read for the sender when scheduled from an interactive
  // client, except a note to self, which should arrive unread.
  const readBySender = p.read_by_sender ?? (defaultReadBySender(client) && !addressee.toSelf);
  const row = await inTransaction(ctx.db, async (tx) => {
    const row = await insertScheduledMessage(tx.trx, {
      realm_id: caller.realm.id,
      sender_id: caller.user.id,
      delivery_type: DeliveryType.SEND_LATER,
      channel_id: addressee.channel_id,
      to_user_ids: addressee.to_user_ids,
      topic: addressee.topic,
      content,
      rendered_content: rendered,
      sending_client: client,
      read_by_sender: readBySender,
      scheduled_timestamp: p.scheduled_delivery_timestamp,
      reminder_target_message_id: null,
      reminder_note: null,
    });
    const event: EventBody<Schema<'ScheduledMessagesAddEvent'>> = {
      type: 'scheduled_messages',
      op: 'add',
      scheduled_messages: [toApiScheduledMessage(row)],
    };
    tx.afterCommit(() => publishToSender(ctx, caller.user.id, event));
    return row;
  });
  wakeScheduledDelivery(ctx, row.scheduled_timestamp);
  return { scheduled_message_id: row.id };
}

/** PATCH /scheduled_messages/{id}: Zulip's edit_scheduled_message. */
export async function doUpdateScheduledMessage(
  ctx: AppContext,
  caller: Caller,
  p: Params<'update-scheduled-message'>,
  client: string,
): Promise<Data<'update-scheduled-message'>> {
  const { type, to, topic, content: rawContent, scheduled_delivery_timestamp: deliverAt } = p;
  if (type === undefined && to === undefined && topic === undefined && rawContent === undefined && deliverAt === undefined) {
    throw new ApiError('Nothing to change');
  }
  if (type !== undefined && to === undefined) throw new ApiError('Recipient required when updating type of scheduled message.');
  if (type !== undefined && kindOf(type) === 'stream' && topic === undefined) {
    throw new ApiError('Topic required when updating scheduled message type to channel.');
  }
  if (deliverAt !== undefined) checkFutureTimestamp(deliverAt);

  const current = await inTransaction(ctx.db, (tx) =>
    findOwnScheduledForUpdate(tx.trx, caller.user.id, p.scheduled_message_id, DeliveryType.SEND_LATER),
  );
  if (!current) throw doesNotExist();
  checkEditable(current, deliverAt);

  const changes: Partial<ScheduledMessageRow> = {};
  const existingKind: Kind = current.channel_id !== null ? 'stream' : 'private';
  if (type !== undefined || to !== undefined || rawContent !== undefined) {
    // The message is checked again as a whole: what was sent over what is stored.
    const kind = type !== undefined ? kindOf(type) : existingKind;
    const recipients = to ?? (existingKind === 'stream' ? current.channel_id! : current.to_user_ids);
    const newTopic = topic ?? current.topic;
    const addressee = await resolveScheduledAddressee(ctx, caller, kind, recipients, newTopic);
    const content = rawContent !== undefined ? normalizeContent(rawContent) : current.content;
    await checkSendable(ctx, caller, addressee.target, content);
    if (type !== undefined || to !== undefined) {
      changes.channel_id = addressee.channel_id;
      changes.to_user_ids = addressee.to_user_ids;
      changes.topic = addressee.topic;
    }
    if (rawContent !== undefined) {
      changes.content = content;
      changes.rendered_content = await renderScheduled(ctx, caller, content);
    }
  }
  if (type === undefined && to === undefined && topic !== undefined && existingKind === 'stream') {
    // A new topic alone; ignored for a direct message, as Zulip does.
    changes.topic = normalizeTopic(topic);
  }
  if (deliverAt !== undefined) changes.scheduled_timestamp = deliverAt;
  changes.sending_client = client;
  // Editing a failed message gives it another chance.
  changes.failed = false;
  changes.failure_message = null;

  const updated = await inTransaction(ctx.db, async (tx) => {
    // Locked again and checked again: a delivery may have committed meanwhile.
    const row = await findOwnScheduledForUpdate(tx.trx, caller.user.id, p.scheduled_message_id, DeliveryType.SEND_LATER);
    if (!row) throw doesNotExist();
    checkEditable(row, deliverAt);
    await updateScheduledMessage(tx.trx, row.id, changes);
    const updated: ScheduledMessageRow = { ...row, ...changes };
    tx.afterCommit(() => publishToSender(ctx, caller.user.id, scheduledUpdateEvent(updated)));
    return updated;
  });
  wakeScheduledDelivery(ctx, updated.scheduled_timestamp);
  return {};
}

function checkEditable(row: ScheduledMessageRow, deliverAt: number | undefined): void {
  if (row.delivered) throw new ApiError('Scheduled message was already sent');
  // A message the server failed to send needs a new time to be tried again.
  if (row.failed && deliverAt === undefined) throw notInFuture();
}

/** DELETE /scheduled_messages/{id}. */
export async function doDeleteScheduledMessage(
  ctx: AppContext,
  user: UserRow,
  p: Params<'delete-scheduled-message'>,
): Promise<Data<'delete-scheduled-message'>> {
  await inTransaction(ctx.db, async (tx) => {
    // Locked: a delivery in progress commits first, and the row then goes.
    const row = await findOwnScheduledForUpdate(tx.trx, user.id, p.scheduled_message_id, DeliveryType.SEND_LATER);
    if (!row) throw doesNotExist();
    await deleteScheduledMessage(tx.trx, row.id);
    tx.afterCommit(() => publishToSender(ctx, user.id, scheduledRemoveEvent(row.id)));
  });
  return {};
}
