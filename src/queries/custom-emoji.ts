import type { Knex } from 'knex';
import { insertOne } from './ids';
import { mapBools } from './rows';

type Q = Knex | Knex.Transaction;

export interface ActiveEmojiRow {
  id: number;
  name: string;
  file_name: string | null;
  author_id: number | null;
}

/** The active custom emoji of this name (at most one is active per name). */
export async function getActiveEmojiByName(q: Q, realmId: number, name: string): Promise<ActiveEmojiRow | undefined> {
  const row = await q('realm_emoji').where({ realm_id: realmId, name, deactivated: false }).first('id', 'name', 'file_name', 'author_id');
  return row ? mapBools<ActiveEmojiRow>(row) : undefined;
}

/** The active custom emoji among these names, in one query (message rendering). */
export async function listActiveEmojiByNames(q: Q, realmId: number, names: readonly string[]): Promise<ActiveEmojiRow[]> {
  if (names.length === 0) return [];
  const rows = await q('realm_emoji')
    .where({ realm_id: realmId, deactivated: false })
    .whereIn('name', [...names])
    .select('id', 'name', 'file_name', 'author_id');
  return rows.map((r) => mapBools<ActiveEmojiRow>(r));
}

export async function insertRealmEmoji(
  q: Q,
  row: { realm_id: number; name: string; file_name: string; author_id: number; is_animated: boolean },
): Promise<number> {
  return insertOne(q, 'realm_emoji', { ...row, deactivated: false });
}

export async function deactivateRealmEmoji(q: Q, id: number): Promise<void> {
  await q('realm_emoji').where({ id }).update({ deactivated: true });
}
