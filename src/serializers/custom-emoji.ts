import type { Schema } from '../contract';
import { emojiSourceUrl, emojiStillUrl } from '../domain/custom-emoji';
import type { RealmEmojiListRow } from '../queries/register';

/** A realm_emoji row as the queries read it. */
export type RealmEmojiSource = RealmEmojiListRow;

/**
 * The organization's custom emoji keyed by ID, as GET /realm/emoji,
 * POST /register's realm_emoji and the realm_emoji event send them.
 * still_url is set only for animated emoji, as in Zulip.
 */
export function toApiRealmEmojiMap(realmId: number, rows: readonly RealmEmojiSource[]): Record<string, Schema<'RealmEmoji'>> {
  const out: Record<string, Schema<'RealmEmoji'>> = {};
  for (const e of rows) {
    // Rows made before uploads existed have no file name; Zulip's default file name was `<id>.png`.
    const fileName = e.file_name ?? `${e.id}.png`;
    out[String(e.id)] = {
      id: String(e.id),
      name: e.name,
      source_url: emojiSourceUrl(realmId, fileName),
      still_url: e.is_animated ? emojiStillUrl(realmId, fileName) : null,
      deactivated: e.deactivated,
      author_id: e.author_id,
    };
  }
  return out;
}
