import type { Schema } from '../contract';
import type { SavedSnippetRow } from '../queries/saved-snippets';

/** A saved snippet as GET /saved_snippets, POST /register and saved_snippets events show it. */
export function toApiSavedSnippet(row: SavedSnippetRow): Schema<'SavedSnippet'> {
  return { id: row.id, title: row.title, content: row.content, date_created: row.date_created };
}
