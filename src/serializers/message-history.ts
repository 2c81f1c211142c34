import type { Schema } from '../contract';
import type { EditRow, MessageRow } from '../queries/messages';
import type { RealmRow } from '../queries/rows';
import { htmlDiff } from './html-diff';
import { topicForClient } from './messages';

type Snapshot = Schema<'MessageHistoryEntry'>;

/**
 * GET /messages/{id}/history: the message's versions, oldest first. The
 * message_edits rows record only what each edit changed (the previous
 * values, and the new channel or topic), so the versions are rebuilt
 * backwards from the message as it is now: each edit's snapshot holds the
 * topic and content right after it, then the previous values become the
 * current ones for the next (older) edit. The last one reached is the
 * message as sent, which carries only its topic, content, rendering, sending
 * time and sender.
 *
 * With the organization's policy 'moves' only moves are shown: edits that
 * changed nothing but the content are left out, and no snapshot carries an
 * earlier content (prev_content, prev_rendered_content or a diff) — each
 * holds the current content — so a moves-only organization reveals its
 * moves and nothing of what was written before. (The caller refuses 'none'.)
 *
 * `edits` are the message's rows, most recent first (getEdits).
 */
export function toApiMessageHistory(
  row: MessageRow,
  edits: EditRow[],
  policy: RealmRow['message_edit_history_visibility_policy'],
  allowEmptyTopicName: boolean,
): Snapshot[] {
  const movesOnly = policy === 'moves';
  const topic = (t: string) => topicForClient(t, allowEmptyTopicName);
  let curTopic = row.topic;
  let curContent = row.content;
  let curRendered = row.rendered_content ?? '';
  const newestFirst: Snapshot[] = [];
  for (const e of edits) {
    const moved = e.prev_topic !== null || e.prev_stream !== null;
    if (movesOnly && !moved) continue;
    const snap: Snapshot = {
      topic: topic(curTopic),
      content: curContent,
      rendered_content: curRendered,
      timestamp: e.timestamp,
      user_id: e.user_id,
    };
    if (e.prev_topic !== null) {
      snap.prev_topic = topic(e.prev_topic);
      curTopic = e.prev_topic;
    }
    if (e.prev_stream !== null) {
      snap.prev_stream = e.prev_stream;
      // Written together with prev_stream (a move between channels).
      if (e.stream !== null) snap.stream = e.stream;
    }
    if (e.prev_content !== null && !movesOnly) {
      const prevRendered = e.prev_rendered_content ?? '';
      snap.prev_content = e.prev_content;
      snap.prev_rendered_content = prevRendered;
      snap.content_html_diff = htmlDiff(prevRendered, curRendered);
      curContent = e.prev_content;
      curRendered = prevRendered;
    }
    newestFirst.push(snap);
  }
  newestFirst.push({
    topic: topic(curTopic),
    content: curContent,
    rendered_content: curRendered,
    timestamp: row.date_sent,
    user_id: row.sender_id,
  });
  return newestFirst.reverse();
}
