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
 * The encoded lists of a cached topic list (src/cache/topic-lists.ts), one
 * per way of naming the empty topic, made when first asked for. Kept by
 * the list itself: an invalidation replaces the list, so its text goes
 * with it. A busy channel's list is thousands of topics, which every app
 * asks for when the channel is opened (ADR 0056). Kept as UTF-8 bytes: a
 * response copies them, and no request encodes the list's text again.
 */
const listText = keptTexts<readonly TopicSummarySource[], Buffer>();

export const encodeTopicSummaries = (
  rows: readonly TopicSummarySource[],
  allowEmptyTopicName: boolean,
): EncodedJson<Array<Schema<'TopicSummary'>>> =>
  new EncodedJson(
    listText(rows, allowEmptyTopicName ? 'allowEmpty' : 'named', () =>
      Buffer.from(JSON.stringify(rows.map((r) => toApiTopicSummary(r, allowEmptyTopicName))), 'utf8'),
    ),
  );
