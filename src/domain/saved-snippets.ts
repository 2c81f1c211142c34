import { ApiError } from '../errors';
import { MAX_MESSAGE_LENGTH } from './topics';

/** Zulip's SavedSnippet.MAX_TITLE_LENGTH, in Unicode code points. */
export const MAX_SNIPPET_TITLE_LENGTH = 60;
export const MAX_SNIPPET_CONTENT_LENGTH = MAX_MESSAGE_LENGTH;

/**
 * Unicode's White_Space characters: what Zulip's parameter parser trims
 * before checking a snippet's lengths. JavaScript's trim() differs on two
 * (it keeps U+0085 and removes U+FEFF), hence the explicit set.
 */
const EDGE_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

/**
 * A snippet's title or content as stored: trimmed, then non-empty and at
 * most `max` code points, with Zulip's messages for its parameters.
 */
export function checkSnippetText(name: 'title' | 'content', value: string, max: number): string {
  const trimmed = value.replace(EDGE_SPACE, '');
  if (trimmed === '') throw new ApiError(`${name} cannot be blank`);
  // Code points, not UTF-16 units: an emoji counts once, as in Zulip.
  let length = 0;
  for (const _ of trimmed) if (++length > max) throw new ApiError(`${name} is too long (limit: ${max} characters)`);
  return trimmed;
}
