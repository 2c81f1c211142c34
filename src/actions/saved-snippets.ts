import type { AppContext } from '../context';
import type { Data, Params, Schema } from '../contract';
import { inTransaction } from '../db/transaction';
import { AuditEventType } from '../domain/audit';
import { checkSnippetText, MAX_SNIPPET_CONTENT_LENGTH, MAX_SNIPPET_TITLE_LENGTH } from '../domain/saved-snippets';
import { ApiError } from '../errors';
import type { EventBody } from '../events/bus';
import { insertAuditLog } from '../queries/audit';
import { listSavedSnippets } from '../queries/register';
import type { UserRow } from '../queries/rows';
import { deleteOwnSavedSnippet, findOwnSavedSnippetForUpdate, insertSavedSnippet, updateSavedSnippet } from '../queries/saved-snippets';
import { toApiSavedSnippet } from '../serializers/saved-snippets';

/**
 * Saved snippets belong to one user: every event goes to the owner's queues
 * alone, and another user's snippet is answered exactly as a missing one.
 * Zulip answers that with a 404 (code BAD_REQUEST), unlike most of its
 * missing-or-forbidden objects, which are 400s.
 */
const snippetDoesNotExist = () => new ApiError('Saved snippet does not exist.', 'BAD_REQUEST', 404);

// Zulip reads content before title, so with both wrong the content's error wins.
const checkContent = (content: string) => checkSnippetText('content', content, MAX_SNIPPET_CONTENT_LENGTH);
const checkTitle = (title: string) => checkSnippetText('title', title, MAX_SNIPPET_TITLE_LENGTH);

/** GET /saved_snippets: the caller's snippets, oldest first. */
export async function getSavedSnippets(ctx: AppContext, user: UserRow): Promise<Data<'get-saved-snippets'>> {
  const rows = await listSavedSnippets(ctx.db, user.id);
  return { saved_snippets: rows.map(toApiSavedSnippet) };
}

/** POST /saved_snippets. */
export async function doCreateSavedSnippet(
  ctx: AppContext,
  user: UserRow,
  p: Params<'create-saved-snippet'>,
): Promise<Data<'create-saved-snippet'>> {
  const content = checkContent(p.content);
  const title = checkTitle(p.title);
  const snippet = await inTransaction(ctx.db, async (tx) => {
    const row = await insertSavedSnippet(tx.trx, { realmId: user.realm_id, userId: user.id, title, content });
    // Zulip records the creation (not edits or deletions) in the audit log.
    await insertAuditLog(tx.trx, {
      realmId: user.realm_id,
      actorId: user.id,
      userId: user.id,
      eventType: AuditEventType.SAVED_SNIPPET_CREATED,
      extra: { saved_snippet_id: row.id },
    });
    const event: EventBody<Schema<'SavedSnippetsEvent'>> = { type: 'saved_snippets', op: 'add', saved_snippet: toApiSavedSnippet(row) };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [user.id] }));
    return row;
  });
  return { saved_snippet_id: snippet.id };
}

/** PATCH /saved_snippets/{id}: the fields sent are trimmed, checked and stored. */
export async function doEditSavedSnippet(
  ctx: AppContext,
  user: UserRow,
  p: Params<'edit-saved-snippet'>,
): Promise<Data<'edit-saved-snippet'>> {
  const changes: { title?: string; content?: string } = {};
  if (p.content !== undefined) changes.content = checkContent(p.content);
  if (p.title !== undefined) changes.title = checkTitle(p.title);
  // Zulip returns before looking the snippet up when nothing is to change:
  // no event, and success even for an id that is not the caller's (which
  // reveals nothing, since every id answers the same).
  if (changes.title === undefined && changes.content === undefined) return {};
  await inTransaction(ctx.db, async (tx) => {
    const row = await findOwnSavedSnippetForUpdate(tx.trx, user.id, p.saved_snippet_id);
    if (!row) throw snippetDoesNotExist();
    await updateSavedSnippet(tx.trx, row.id, changes);
    // Sent even when the values did not change, as Zulip does.
    const event: EventBody<Schema<'SavedSnippetsEvent'>> = {
      type: 'saved_snippets',
      op: 'update',
      saved_snippet: toApiSavedSnippet({ ...row, ...changes }),
    };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [user.id] }));
  });
  return {};
}

/** DELETE /saved_snippets/{id}. */
export async function doDeleteSavedSnippet(
  ctx: AppContext,
  user: UserRow,
  p: Params<'delete-saved-snippet'>,
): Promise<Data<'delete-saved-snippet'>> {
  await inTransaction(ctx.db, async (tx) => {
    if ((await deleteOwnSavedSnippet(tx.trx, user.id, p.saved_snippet_id)) === 0) throw snippetDoesNotExist();
    const event: EventBody<Schema<'SavedSnippetsRemoveEvent'>> = {
      type: 'saved_snippets',
      op: 'remove',
      saved_snippet_id: p.saved_snippet_id,
    };
    tx.afterCommit(() => ctx.bus.publish({ event, userIds: [user.id] }));
  });
  return {};
}
