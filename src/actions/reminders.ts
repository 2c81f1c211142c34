import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { normalizeContent } from '../domain/topics';
import { ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { accessMessage } from '../access/messages';
import type { Caller } from '../access/viewer';
import type { UserRow } from '../queries/rows';
import {
  DeliveryType,
  deleteScheduledMessage,
  findOwnScheduledForUpdate,
  insertScheduledMessage,
  listUndelivered,
} from '../queries/scheduled-messages';
import { toApiReminder } from '../serializers/scheduled-messages';
import { formatReminderContent } from './reminder-content';
import { renderForRealm } from './render';
import { wakeScheduledDelivery } from './scheduled-delivery';
import { checkFutureTimestamp, checkSendable } from './scheduled-messages';

/** Zulip's MAX_REMINDER_NOTE_LENGTH (register's max_reminder_note_length). */
export const MAX_REMINDER_NOTE_LENGTH = 1000;

const doesNotExist = () => new ApiError('Reminder does not exist', 'BAD_REQUEST', 404);

/** As Zulip's normalize_note_text: trailing whitespace and leading blank lines go; then at most 1,000 characters. */
function normalizeNote(raw: string): string {
  const note = raw.trimEnd().replace(/^\n+/, '');
  if ([...note].length > MAX_REMINDER_NOTE_LENGTH) {
    throw new ApiError(`Maximum reminder note length: ${MAX_REMINDER_NOTE_LENGTH} characters`);
  }
  return note;
}

/** GET /reminders: the caller's reminders not yet delivered, earliest first. */
export async function getReminders(ctx: AppContext, user: UserRow): Promise<Data<'get-reminders'>> {
  const rows = await listUndelivered(ctx.db, user.id, [DeliveryType.REMIND]);
  return { reminders: rows.map(toApiReminder) };
}

/**
 * POST /reminders (Zulip's schedule_reminder_for_message): a reminder is a
 * scheduled direct message to oneself, checked as one, whose text quotes
 * the message; Notification Bot sends it (src/actions/scheduled-delivery.ts).
 */
export async function doCreateReminder(
  ctx: AppContext,
  caller: Caller,
  p: Params<'create-message-reminder'>,
  client: string,
): Promise<Data<'create-message-reminder'>> {
  checkFutureTimestamp(p.scheduled_delivery_timestamp);
  const found = await accessMessage(ctx.db, caller, p.message_id);
  const note = p.note === undefined ? null : normalizeNote(p.note) || null;
  const content = normalizeContent(await formatReminderContent(ctx.db, ctx.config, caller.realm, caller.user, found, note));
  // Zulip checks the reminder as a direct message from the user to themself.
  await checkSendable(ctx, caller, { kind: 'direct', recipients: [caller.user] }, content);
  const rendered = await renderForRealm(ctx.db, caller.realm.id, content, null, true, await ctx.caches.linkifiers.get(caller.realm.id));
  const row = await inTransaction(ctx.db, async (tx) => {
    const row = await insertScheduledMessage(tx.trx, {
      realm_id: caller.realm.id,
      sender_id: caller.user.id,
      delivery_type: DeliveryType.REMIND,
      channel_id: null,
      to_user_ids: [caller.user.id],
      topic: '',
      content,
      rendered_content: rendered.html,
      sending_client: client,
      read_by_sender: false,
      scheduled_timestamp: p.scheduled_delivery_timestamp,
      reminder_target_message_id: p.message_id,
      reminder_note: note,
    });
    const event: EventBody<Schema<'RemindersAddEvent'>> = { type: 'reminders', op: 'add', reminders: [toApiReminder(row)] };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [caller.user.id] }));
    return row;
  });
  wakeScheduledDelivery(ctx, row.scheduled_timestamp);
  return { reminder_id: row.id };
}

/** DELETE /reminders/{id}. */
export async function doDeleteReminder(ctx: AppContext, user: UserRow, p: Params<'delete-reminder'>): Promise<Data<'delete-reminder'>> {
  await inTransaction(ctx.db, async (tx) => {
    const row = await findOwnScheduledForUpdate(tx.trx, user.id, p.reminder_id, DeliveryType.REMIND);
    if (!row) throw doesNotExist();
    await deleteScheduledMessage(tx.trx, row.id);
    const event: EventBody<Schema<'RemindersRemoveEvent'>> = { type: 'reminders', op: 'remove', reminder_id: row.id };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [user.id] }));
  });
  return {};
}
