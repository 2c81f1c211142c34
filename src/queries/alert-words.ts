import type { Knex } from 'knex';
import { invalidates } from '../db/invalidations';
import { insertRows } from './ids';

type Q = Knex | Knex.Transaction;

/** The user's alert words, in the order they were added. */
export async function listAlertWords(q: Q, userId: number): Promise<string[]> {
  return q('alert_words').where({ user_id: userId }).orderBy('id').pluck('word');
}

export async function insertAlertWords(q: Q, realmId: number, userId: number, words: readonly string[]): Promise<void> {
  await insertRows(
    q,
    'alert_words',
    words.map((word) => ({ realm_id: realmId, user_id: userId, word, word_key: word.toLowerCase() })),
  );
}

export async function deleteAlertWords(q: Q, userId: number, words: readonly string[]): Promise<void> {
  if (words.length === 0) return;
  await q('alert_words')
    .where({ user_id: userId })
    .whereIn(
      'word_key',
      words.map((w) => w.toLowerCase()),
    )
    .del();
}

/** The alert words of these users (the receivers of a message), by user. */
export async function listAlertWordsOf(q: Q, realmId: number, userIds: readonly number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  if (userIds.length === 0) return out;
  const rows: Array<{ user_id: number; word: string }> = [];
  for (let i = 0; i < userIds.length; i += 500) {
    rows.push(
      ...(await q('alert_words')
        .where({ realm_id: realmId })
        .whereIn('user_id', userIds.slice(i, i + 500))
        .select('user_id', 'word')),
    );
  }
  for (const r of rows) {
    const list = out.get(r.user_id);
    if (list) list.push(r.word);
    else out.set(r.user_id, [r.word]);
  }
  return out;
}

/** Recounts the organization's alert words into realms.alert_word_count (in the changing transaction). */
export async function refreshAlertWordCount(q: Q, realmId: number): Promise<void> {
  const row = await q('alert_words').where({ realm_id: realmId }).count({ n: '*' }).first();
  await q('realms')
    .where({ id: realmId })
    .update({ alert_word_count: Number(row?.n ?? 0) });
  // Sending reads the count from the cached organization row.
  invalidates(q, { kind: 'realm', realmId });
}
