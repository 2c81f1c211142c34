import type { Schema } from '../contract';
import type { ApiFlag } from '../domain/flags';
import type { UserRow } from '../queries/rows';
import { type MessageBusEvent, topicForClient } from '../serializers/messages';
import { avatarUrl, canSeeDeliveryEmail } from '../serializers/users';
import { AvatarSource } from '../domain/avatars';
import type { PerUserExtra, ServerEvent } from './bus';
import type { QueueOptions } from './options';
import type { QueuedEvent } from './queue';

/** What shaping a batch of events for one queue may look up (fetched once per poll). */
interface ShapeContext {
  opts: QueueOptions;
  viewer: UserRow;
  users: Map<number, UserRow>;
}

/**
 * An event as a queue's client receives it: the published event with the
 * queue's id, reshaped for the queue. What goes out is the contract's
 * Schema<'Event'>; it stays open here because the bus carries every event
 * open (ServerEvent) and only the shaped kinds below are read typed.
 */
export type WireEvent = ServerEvent & { id: number };

type Shaper = (e: QueuedEvent, c: ShapeContext) => WireEvent;

/** An event as an action publishes it: its wire form without the id its queue gives it. */
export type PublishedEvent<E extends { id: number }> = Omit<E, 'id'>;

/*
 * The bus carries every event as an open ServerEvent (src/events/bus.ts).
 * The event types shaped below are published typed — message by
 * sendMessageInTx (MessageBusEvent), typing by doSetTypingStatus,
 * update_message_flags by queueFlagEvent — so a shaper reads its event as
 * that type, selected by `type` in SHAPERS.
 */
type TypingBusEvent = PublishedEvent<Schema<'TypingEvent'>>;
type FlagsBusEvent = PublishedEvent<Schema<'UpdateMessageFlagsEvent'>>;
/** update_message without the receiver's flags, which travel beside it (Delivery.perUser). */
type UpdateMessageBusEvent = Omit<PublishedEvent<Schema<'UpdateMessageEvent'>>, 'flags'>;
/** The receiver's flags, shared and frozen (src/events/per-user-flags.ts): the wire form only serializes them. */
const flagsOf = (extra: PerUserExtra): ApiFlag[] => (extra.flags ?? []) as ApiFlag[];

/**
 * The message of a message event as one kind of queue shows it. Queues
 * differ in three ways only (apply_markdown, the empty-topic capability,
 * and whether client_gravatar leaves the avatar to the client), so each
 * variant is built once per event and shared by every queue of that kind:
 * 10,000 receivers of a channel message hold one or two message objects,
 * not 10,000. Shared, hence frozen: nothing shaping one queue's copy may
 * change another's.
 */
const sharedMessages = new WeakMap<MessageBusEvent, Map<number, Schema<'Message'>>>();

function messageVariant(event: MessageBusEvent, opts: QueueOptions, viewer: UserRow): Schema<'Message'> {
  const { sender } = event;
  // Zulip's client_gravatar: the client computes a Gravatar URL itself, from an email it may see.
  const hideAvatar = opts.clientGravatar && sender.avatar_source === AvatarSource.GRAVATAR && canSeeDeliveryEmail(sender, viewer);
  const key = (opts.applyMarkdown ? 1 : 0) | (opts.capabilities.emptyTopicName ? 2 : 0) | (hideAvatar ? 4 : 0);
  let variants = sharedMessages.get(event);
  if (!variants) sharedMessages.set(event, (variants = new Map()));
  let message = variants.get(key);
  if (!message) {
    message = { ...event.message };
    if (!opts.applyMarkdown) {
      message.content = event.raw_content;
      message.content_type = 'text/x-markdown';
    }
    if (message.type === 'stream') message.subject = topicForClient(message.subject, opts.capabilities.emptyTopicName);
    if (hideAvatar) message.avatar_url = null;
    variants.set(key, Object.freeze(message));
  }
  return message;
}

function shapeMessage(id: number, event: MessageBusEvent, extra: PerUserExtra, { opts, viewer }: ShapeContext): Schema<'MessageEvent'> {
  const out: Schema<'MessageEvent'> = { id, type: 'message', message: messageVariant(event, opts, viewer), flags: flagsOf(extra) };
  if (extra.local_message_id != null) out.local_message_id = extra.local_message_id;
  return out;
}

// Zulip's process_stream_typing_notification_event: "" reads as the display name for older clients.
const shapeTyping = (id: number, event: TypingBusEvent, { opts }: ShapeContext): Schema<'TypingEvent'> =>
  event.topic !== undefined ? { ...event, id, topic: topicForClient(event.topic, opts.capabilities.emptyTopicName) } : { ...event, id };

// Zulip's process_mark_message_unread_event: message_details name the empty topic for older clients too.
function shapeFlags(id: number, event: FlagsBusEvent, { opts }: ShapeContext): Schema<'UpdateMessageFlagsEvent'> {
  const details = event.message_details;
  if (!details || opts.capabilities.emptyTopicName) return { ...event, id };
  const shaped: Record<string, Schema<'UpdateMessageFlagsMessageDetails'>> = {};
  for (const [messageId, d] of Object.entries(details)) {
    shaped[messageId] = d.type === 'stream' && d.topic === '' ? { ...d, topic: topicForClient('', false) } : d;
  }
  return { ...event, id, message_details: shaped };
}

// Zulip's process_message_update_event: the empty topic reads as its display name for older clients.
function shapeUpdateMessage(
  id: number,
  event: UpdateMessageBusEvent,
  extra: PerUserExtra,
  { opts }: ShapeContext,
): Schema<'UpdateMessageEvent'> {
  const out: Schema<'UpdateMessageEvent'> = { ...event, id, flags: flagsOf(extra) };
  if (!opts.capabilities.emptyTopicName) {
    if (out.orig_subject !== undefined) out.orig_subject = topicForClient(out.orig_subject, false);
    if (out.subject !== undefined) out.subject = topicForClient(out.subject, false);
  }
  return out;
}

/**
 * Per-queue wire forms, by event type. Every other event goes out as it
 * was published, with its id: adding an event kind needs an entry here
 * only when its form depends on the queue (apply_markdown,
 * client_gravatar, client_capabilities) or on who is looking.
 */
const SHAPERS: Record<string, Shaper> = {
  message: ({ id, event, extra }, c) => shapeMessage(id, event as MessageBusEvent, extra ?? {}, c),
  typing: ({ id, event }, c) => shapeTyping(id, event as TypingBusEvent, c),
  update_message_flags: ({ id, event }, c) => shapeFlags(id, event as FlagsBusEvent, c),
  update_message: ({ id, event, extra }, c) => shapeUpdateMessage(id, event as UpdateMessageBusEvent, extra ?? {}, c),
  // As for typing: a deleted message of the empty topic names it by its display name for older clients.
  delete_message: ({ id, event }, { opts }) =>
    typeof event.topic === 'string'
      ? { ...event, id, topic: topicForClient(event.topic, opts.capabilities.emptyTopicName) }
      : { ...event, id },
  // A client without the include_deactivated_groups capability (Zulip's feature level 294) knows
  // only active groups: for it, a group's deactivation is its removal. What it must never see is
  // withheld before filing (withheldFrom below); the markers that say so are not on the wire.
  user_group: ({ id, event }, { opts }) => {
    if (
      event.op === 'update' &&
      (event.data as { deactivated?: boolean } | undefined)?.deactivated === true &&
      !opts.capabilities.includeDeactivatedGroups
    ) {
      return { type: 'user_group', op: 'remove', group_id: event.group_id, id };
    }
    if (DEACTIVATED_GROUP in event || REACTIVATED_GROUP in event) {
      const { [DEACTIVATED_GROUP]: _deactivated, [REACTIVATED_GROUP]: _reactivated, ...wire } = event;
      return { ...wire, id } as WireEvent;
    }
    return { ...event, id };
  },
  // Zulip names the empty topic by its display name in user_topic and muted_topics for older clients too.
  user_topic: ({ id, event }, { opts }) =>
    typeof event.topic_name === 'string'
      ? { ...event, id, topic_name: topicForClient(event.topic_name, opts.capabilities.emptyTopicName) }
      : { ...event, id },
  muted_topics: ({ id, event }, { opts }) =>
    Array.isArray(event.muted_topics) && !opts.capabilities.emptyTopicName
      ? { ...event, id, muted_topics: (event.muted_topics as unknown[][]).map(([c, t, at]) => [c, topicForClient(String(t), false), at]) }
      : { ...event, id },

  // Zulip's process_presence_event: published in the legacy form, with the modern one beside it.
  presence: ({ id, event, extra }, { opts }) => {
    if (opts.capabilities.simplifiedPresenceEvents) return { id, type: 'presence', presences: { [String(event.user_id)]: extra?.modern } };
    if (!opts.slimPresence) return { ...event, id };
    const { email: _email, ...slim } = event;
    return { ...slim, id };
  },

  // realm_user/add is published once for everyone; whether the real email shows depends on who looks.
  realm_user: ({ id, event }, { opts, viewer, users }) => {
    const person = event.person as Schema<'User'> | undefined;
    const row = event.op === 'add' && person ? users.get(person.user_id) : undefined;
    if (!row) return { ...event, id };
    const showEmail = canSeeDeliveryEmail(row, viewer);
    return {
      ...event,
      id,
      person: {
        ...person,
        delivery_email: showEmail ? row.delivery_email : null,
        avatar_url: avatarUrl(row, opts.clientGravatar && showEmail),
      },
    };
  },
};

/**
 * Set (true) by the rename of a deactivated group beside the event's wire
 * fields, as Zulip's do_send_user_group_update_event marks a name change:
 * the event is for clients that keep deactivated groups only.
 */
export const DEACTIVATED_GROUP = 'group_deactivated';

/**
 * Set (true) on the user_group add that a group's reactivation publishes
 * beside its `deactivated: false` update, as Zulip's
 * do_reactivate_user_group marks it (for_reactivation): the add is for
 * clients that were told the group was removed, the update for the others.
 */
export const REACTIVATED_GROUP = 'for_reactivation';

/**
 * Whether this queue never gets the event at all: shaping that turns one
 * event into none. Zulip decides it when it files the event
 * (ClientDescriptor.accepts_event, process_user_group_name_update_event,
 * process_user_group_creation_event), so the queue manager asks here
 * before filing (src/events/manager.ts): a withheld event takes no id and
 * never wakes a waiting poll, which an event dropped only when a poll
 * returns would do, answering that poll with nothing over and over.
 *
 * By the include_deactivated_groups capability, as Zulip:
 * - a deactivated group's rename reaches only clients with it, which know
 *   the group; only the name is marked, so a deactivated group's
 *   description or permission settings changing still reaches every client;
 * - a reactivation's `deactivated: false` update reaches only clients with
 *   it, and its marked add (the whole group again) only clients without it.
 */
export function withheldFrom(opts: QueueOptions, event: ServerEvent): boolean {
  if (event.type !== 'user_group') return false;
  const keepsDeactivated = opts.capabilities.includeDeactivatedGroups;
  if (event[REACTIVATED_GROUP] === true) return keepsDeactivated;
  if (keepsDeactivated) return false;
  return event[DEACTIVATED_GROUP] === true || (event.data as { deactivated?: boolean } | undefined)?.deactivated === false;
}

/** The user rows shaping needs: added users (message events carry their sender's). */
function usersToLoad(events: QueuedEvent[]): number[] {
  const ids = new Set<number>();
  for (const { event } of events) {
    if (event.type === 'realm_user' && event.op === 'add') ids.add((event.person as { user_id: number }).user_id);
  }
  return [...ids];
}

/**
 * The events of one poll as this queue's client receives them. The users
 * that realm_user additions name come from `lookupUsers` (the per-process
 * user cache: one new user wakes every queue of the organization).
 */
export async function shapeEvents(
  lookupUsers: (ids: number[]) => Promise<Map<number, UserRow>>,
  viewer: UserRow,
  opts: QueueOptions,
  events: QueuedEvent[],
): Promise<WireEvent[]> {
  const ids = usersToLoad(events);
  const users = ids.length ? await lookupUsers(ids) : new Map<number, UserRow>();
  const c: ShapeContext = { opts, viewer, users };
  return events.map((e) => (SHAPERS[e.event.type] ?? passThrough)(e, c));
}

/** The queue's event id wins over any `id` an event might carry. */
const passThrough: Shaper = ({ id, event }) => ({ ...(event as ServerEvent), id });
