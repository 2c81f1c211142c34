import type { Schema } from '../contract';
import { EncodedJson, keptTexts } from './encoded-json';
import { topicForClient } from './message-dicts';

/** A channel's topic as GET /users/me/{stream_id}/topics lists it. */
export interface TopicSummarySource {
  topic: string;
  max_id: number;
}

export const toApiTopicSummary = (r: TopicSummarySource, allowEmptyTopicName: boolean): Schema<'TopicSummary'> => ({
  name: topicForClient(r.topic, allowEmptyTopicName),
  max_id: r.max_id,
});

/**
 * Bytes under half of node's buffer pool would be a slice of a shared 8 KiB
 * block, kept alive by a small list for as long as the list is cached: a
 * short list stays text (encoding it is cheap).
 */
const keptForm = (text: string): string | Buffer =>
  Buffer.byteLength(text, 'utf8') < Buffer.poolSize >>> 1 ? text : Buffer.from(text, 'utf8');

/**
 * The encoded lists of a cached topic list (src/cache/topic-lists.ts), one
 * per way of naming the empty topic, made when first asked for. Kept by
 * the list itself: an invalidation replaces the list, so its text goes
 * with it. A busy channel's list is thousands of topics, which every app
 * asks for when the channel is opened (ADR 0056). A long list is kept as
 * UTF-8 bytes: a response copies them, and no request encodes its text
 * again.
 */
const listText = keptTexts<readonly TopicSummarySource[], string | Buffer>();

export const encodeTopicSummaries = (
  rows: readonly TopicSummarySource[],
  allowEmptyTopicName: boolean,
): EncodedJson<Array<Schema<'TopicSummary'>>> =>
  new EncodedJson(
    listText(rows, allowEmptyTopicName ? 'allowEmpty' : 'named', () =>
      keptForm(JSON.stringify(rows.map((r) => toApiTopicSummary(r, allowEmptyTopicName)))),
    ),
  );
