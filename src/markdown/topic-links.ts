/**
 * A topic's links (a message's `topic_links`), as Zulip's topic_links
 * computes them: every linkifier's matches, each linkifier in order, then
 * the raw URLs in the topic; where two overlap, the earlier linkifier wins
 * and any linkifier wins over a raw URL; the result in the order of the
 * topic's text.
 */
import type MarkdownIt from 'markdown-it';
import { searchLinkifier, type CompiledLinkifier } from '../domain/linkifiers';

export interface TopicLink {
  text: string;
  url: string;
}

type LinkifyIt = MarkdownIt['linkify'];

interface Found extends TopicLink {
  /** Zulip's index: for a linkifier, where its whole match starts (the boundary before the text included). */
  index: number;
}

/** Zulip splits the topic at these characters before looking for a URL at the start of each piece. */
const URL_SPLITTER = /[ !;),'"]/g;

function overlap(a: Found, b: Found): boolean {
  return (b.index <= a.index && a.index < b.index + b.text.length) || (a.index <= b.index && b.index < a.index + a.text.length);
}

export function topicLinks(topic: string, linkifiers: readonly CompiledLinkifier[], linkify: LinkifyIt): TopicLink[] {
  if (topic === '') return [];
  // Sorted by linkifier, then by index: each linkifier's matches are found in order already.
  const found: Found[] = [];
  for (const l of linkifiers) {
    let pos = 0;
    while (pos < topic.length) {
      const m = searchLinkifier(l, topic, pos);
      if (!m) break;
      // The boundary after a match may be the boundary before the next one.
      pos = m.end > pos ? m.end : pos + 1;
      found.push({ text: topic.slice(m.start, m.end), url: m.url, index: m.matchStart });
    }
  }
  let start = 0;
  for (const split of [...topic.matchAll(URL_SPLITTER), null]) {
    const end = split ? split.index : topic.length;
    const piece = topic.slice(start, end);
    const match = piece ? linkify.match(piece)?.[0] : undefined;
    // Zulip's web link pattern finds addresses, not e-mail addresses.
    if (match && match.index === 0 && match.schema !== 'mailto:') {
      const text = match.raw;
      found.push({ text, url: match.schema === '' ? `https://${text}` : text, index: start });
    }
    start = end + 1;
  }
  const applied: Found[] = [];
  for (const f of found) if (applied.every((a) => !overlap(a, f))) applied.push(f);
  return applied.sort((a, b) => a.index - b.index).map(({ text, url }) => ({ text, url }));
}
