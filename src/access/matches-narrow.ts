import type { Knex } from 'knex';
import type { Data, Params } from '../contract';
import { parseNarrow } from '../domain/narrow';
import { fetchNarrowByIds, type NarrowQuery } from '../queries/narrow';
import { searchHighlighter } from '../serializers/highlight';
import { type PageSources, renderPage } from './message-dicts';
import { resolveNarrow } from './narrow';
import type { Caller } from './viewer';

/**
 * GET /messages/matches_narrow: which of the given messages the narrow
 * matches. As in Zulip, only messages the caller received count (their
 * personal rows: a narrow naming a channel whose history the caller may read
 * still does not reach messages sent before they joined), so the narrow runs
 * in personal mode, its history channels becoming a filter. Each match comes
 * with its rendered content and its topic (HTML-escaped, as stored: an empty
 * topic stays empty), highlighted for a search narrow.
 */
export async function getMessagesMatchingNarrow(
  db: Knex,
  sources: PageSources,
  viewer: Caller,
  p: Params<'check-messages-match-narrow'>,
): Promise<Data<'check-messages-match-narrow'>> {
  const { query, searchWords } = await resolveNarrow(db, viewer, parseNarrow(p.narrow), sources.channels);
  const personal: NarrowQuery = {
    viewerId: query.viewerId,
    historyRecipients: null,
    filters:
      query.historyRecipients === null
        ? query.filters
        : [...query.filters, { kind: 'recipient', ids: query.historyRecipients, negated: false }],
    withMessages: !sources.dicts,
  };
  const ids = [...new Set(p.msg_ids.filter((id) => id > 0))];
  const rows = await fetchNarrowByIds(db, personal, ids);
  const rendered = await renderPage(
    db,
    sources,
    viewer,
    rows.map((r) => ({ id: r.id, flags: r.flags, row: r.message })),
    { viewer: viewer.user, applyMarkdown: true, clientGravatar: true, allowEmptyTopicName: true },
  );
  const highlight = searchHighlighter(searchWords);
  const messages: Data<'check-messages-match-narrow'>['messages'] = {};
  for (const { dict } of rendered) {
    messages[String(dict.id)] = { match_content: highlight.html(dict.rendered_content), match_subject: highlight.text(dict.topic) };
  }
  return { messages };
}
