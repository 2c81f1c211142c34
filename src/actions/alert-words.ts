import type { Schema } from '../contract';
import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { checkAlertWordCount, checkAlertWords, containsAlertWord, newAlertWords } from '../domain/alert-words';
import type { EventBody } from '../events/bus';
import { deleteAlertWords, insertAlertWords, listAlertWords, listAlertWordsOf, refreshAlertWordCount } from '../queries/alert-words';
import type { RealmRow, UserRow } from '../queries/rows';

type Q = Parameters<typeof listAlertWords>[0];

/** GET /users/me/alert_words. */
export function getAlertWords(ctx: AppContext, user: UserRow): Promise<string[]> {
  return listAlertWords(ctx.db, user.id);
}

/**
 * POST and DELETE /users/me/alert_words: add the words the user does not
 * have yet (case aside), or remove the ones given (case aside); the answer
 * and an alert_words event to the user's clients carry the whole list.
 */
export async function doChangeAlertWords(ctx: AppContext, user: UserRow, op: 'add' | 'remove', raw: readonly string[]): Promise<string[]> {
  const words = checkAlertWords(raw);
  return inTransaction(ctx.db, async (tx) => {
    if (op === 'add') {
      const existing = await listAlertWords(tx.trx, user.id);
      const added = newAlertWords(existing, words);
      checkAlertWordCount(existing.length + added.length);
      await insertAlertWords(tx.trx, user.realm_id, user.id, added);
    } else {
      await deleteAlertWords(tx.trx, user.id, words);
    }
    await refreshAlertWordCount(tx.trx, user.realm_id);
    const list = await listAlertWords(tx.trx, user.id);
    const event: EventBody<Schema<'AlertWordsEvent'>> = { type: 'alert_words', alert_words: list };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [user.id] }));
    return list;
  });
}

/**
 * The receivers (other than the sender) whose alert words the content
 * contains, for the has_alert_word flag. Nothing is read when the
 * organization has no alert words.
 */
export async function listAlertedUsers(
  q: Q,
  realm: Pick<RealmRow, 'id' | 'alert_word_count'>,
  receivers: readonly number[],
  senderId: number,
  content: string,
): Promise<Set<number>> {
  const alerted = new Set<number>();
  if (realm.alert_word_count === 0) return alerted;
  const words = await listAlertWordsOf(
    q,
    realm.id,
    receivers.filter((id) => id !== senderId),
  );
  const lowered = content.toLowerCase();
  for (const [userId, list] of words) if (list.some((w) => containsAlertWord(lowered, w))) alerted.add(userId);
  return alerted;
}
