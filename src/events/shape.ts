import type { Knex } from 'knex';
import { getUsersByIds } from '../queries/messages';
import type { UserRow } from '../queries/rows';
import { topicForClient } from '../serializers/messages';
import { avatarUrl, canSeeDeliveryEmail } from '../serializers/users';
import type { ServerEvent } from './bus';
import type { QueueOptions } from './options';
import type { QueuedEvent } from './queue';

/** What shaping a batch of events for one queue may look up (fetched once per poll). */
interface ShapeContext {
  opts: QueueOptions;
  viewer: UserRow;
  users: Map<number, UserRow>;
}

type Shaper = (e: QueuedEvent, c: ShapeContext) => Record<string, unknown>;

/**
 * Per-queue wire forms, by event type. Every other event goes out as it
 * was published, with its id: adding an event kind needs an entry here
 * only when its form depends on the queue (apply_markdown,
 * client_gravatar, client_capabilities) or on who is looking.
 */
const SHAPERS: Record<string, Shaper> = {
  message: ({ id, event, extra }, { opts, viewer, users }) => {
    const message: Record<string, unknown> = { ...(event.message as Record<string, unknown>) };
    if (!opts.applyMarkdown) {
      message.content = event.raw_content;
      message.content_type = 'text/x-markdown';
    }
    if (message.type === 'stream') message.subject = topicForClient(String(message.subject), opts.capabilities.emptyTopicName);
    const sender = users.get(message.sender_id as number);
    if (opts.clientGravatar && sender) message.avatar_url = avatarUrl(sender, canSeeDeliveryEmail(sender, viewer));
    const out: Record<string, unknown> = { id, type: 'message', message, flags: extra?.flags ?? [] };
    if (extra?.local_message_id != null) out.local_message_id = extra.local_message_id;
    return out;
  },

  // Zulip's process_stream_typing_notification_event: "" reads as the display name for older clients.
  typing: ({ id, event }, { opts }) =>
    typeof event.topic === 'string'
      ? { ...event, id, topic: topicForClient(event.topic, opts.capabilities.emptyTopicName) }
      : { ...event, id },

  // Zulip's process_mark_message_unread_event: message_details name the empty topic for older clients too.
  update_message_flags: ({ id, event }, { opts }) => {
    const details = event.message_details as Record<string, { type: string; topic?: string }> | undefined;
    if (!details || opts.capabilities.emptyTopicName) return { ...event, id };
    const shaped: Record<string, unknown> = {};
    for (const [messageId, d] of Object.entries(details)) {
      shaped[messageId] = d.type === 'stream' && d.topic === '' ? { ...d, topic: topicForClient('', false) } : d;
    }
    return { ...event, id, message_details: shaped };
  },

  // realm_user/add is published once for everyone; whether the real email shows depends on who looks.
  realm_user: ({ id, event }, { opts, viewer, users }) => {
    const person = event.person as Record<string, unknown> | undefined;
    const row = event.op === 'add' && person ? users.get(person.user_id as number) : undefined;
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

/** The user rows shaping needs: message senders (for client_gravatar) and added users. */
function usersToLoad(events: QueuedEvent[], opts: QueueOptions): number[] {
  const ids = new Set<number>();
  for (const { event } of events) {
    if (event.type === 'message' && opts.clientGravatar) ids.add((event.message as { sender_id: number }).sender_id);
    if (event.type === 'realm_user' && event.op === 'add') ids.add((event.person as { user_id: number }).user_id);
  }
  return [...ids];
}

/** The events of one poll as this queue's client receives them (one query at most). */
export async function shapeEvents(
  db: Knex,
  viewer: UserRow,
  opts: QueueOptions,
  events: QueuedEvent[],
): Promise<Array<Record<string, unknown>>> {
  const ids = usersToLoad(events, opts);
  const users = ids.length ? await getUsersByIds(db, ids) : new Map<number, UserRow>();
  const c: ShapeContext = { opts, viewer, users };
  return events.map((e) => (SHAPERS[e.event.type] ?? passThrough)(e, c));
}

/** The queue's event id wins over any `id` an event might carry. */
const passThrough: Shaper = ({ id, event }) => ({ ...(event as ServerEvent), id });
