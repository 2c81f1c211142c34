import type { Schema } from '../contract';
import type { ScheduledMessageRow } from '../queries/scheduled-messages';

/**
 * A scheduled message as GET /scheduled_messages, POST /register and
 * scheduled_messages events show it. Zulip's `type` here is still the old
 * `stream`/`private`, `to` is a number for a channel and a list for a direct
 * message, and only a channel message has a `topic`.
 */
export function toApiScheduledMessage(row: ScheduledMessageRow): Schema<'ScheduledMessage'> {
  const common = {
    scheduled_message_id: row.id,
    content: row.content,
    rendered_content: row.rendered_content,
    scheduled_delivery_timestamp: row.scheduled_timestamp,
    failed: row.failed,
  };
  return row.channel_id !== null
    ? { ...common, type: 'stream', to: row.channel_id, topic: row.topic }
    : { ...common, type: 'private', to: row.to_user_ids };
}

/** A reminder as GET /reminders, POST /register and reminders events show it: always a direct message to its owner. */
export function toApiReminder(row: ScheduledMessageRow): Schema<'Reminder'> {
  return {
    reminder_id: row.id,
    type: 'private',
    to: [row.sender_id],
    content: row.content,
    rendered_content: row.rendered_content,
    scheduled_delivery_timestamp: row.scheduled_timestamp,
    failed: row.failed,
    reminder_target_message_id: row.reminder_target_message_id ?? 0,
  };
}
