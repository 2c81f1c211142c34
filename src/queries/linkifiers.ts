import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { invalidates } from '../db/invalidations';
import type { Linkifier, LinkifierFields } from '../domain/linkifiers';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

/** The unique key of a pattern in its organization (migration 033). */
const patternHash = (pattern: string) => createHash('sha256').update(pattern, 'utf8').digest('hex');

interface LinkifierRow {
  id: number;
  pattern: string;
  url_template: string;
  example_input: string | null;
  reverse_template: string | null;
  alternative_url_templates: string | null;
}

const COLUMNS = ['id', 'pattern', 'url_template', 'example_input', 'reverse_template', 'alternative_url_templates'] as const;

const toLinkifier = (r: LinkifierRow): Linkifier => ({
  id: Number(r.id),
  pattern: String(r.pattern),
  url_template: String(r.url_template),
  example_input: r.example_input === null ? null : String(r.example_input),
  reverse_template: r.reverse_template === null ? null : String(r.reverse_template),
  alternative_url_templates: r.alternative_url_templates === null ? [] : (JSON.parse(String(r.alternative_url_templates)) as string[]),
});

/** The columns a linkifier's values are written to (migration 034: the empty list of alternatives is stored as null). */
const toColumns = (f: LinkifierFields) => ({
  pattern: f.pattern,
  pattern_hash: patternHash(f.pattern),
  url_template: f.url_template,
  example_input: f.example_input,
  reverse_template: f.reverse_template,
  alternative_url_templates: f.alternative_url_templates.length ? JSON.stringify(f.alternative_url_templates) : null,
});

/** The organization's linkifiers in the order they apply: by `order`, then by id (Zulip's linkifiers_for_realm). */
export async function listLinkifiers(q: Q, realmId: number): Promise<Linkifier[]> {
  const rows = await q('realm_linkifiers')
    .where({ realm_id: realmId })
    .orderBy([{ column: 'order' }, { column: 'id' }])
    .select(...COLUMNS);
  return rows.map(toLinkifier);
}

/** Whether another linkifier of the organization has this pattern. */
export async function linkifierPatternTaken(q: Q, realmId: number, pattern: string, exceptId?: number): Promise<boolean> {
  const query = q('realm_linkifiers').where({ realm_id: realmId, pattern_hash: patternHash(pattern) });
  if (exceptId !== undefined) query.whereNot('id', exceptId);
  return (await query.first('id')) !== undefined;
}

/**
 * Every write drops the organization's compiled linkifiers
 * (src/cache/linkifiers.ts) on every node, and nothing else the
 * organization has cached (its users, its callers).
 */
function invalidateLinkifiers(q: Q, realmId: number): void {
  invalidates(q, { kind: 'linkifiers', realmId });
}

/** Adds a linkifier after the organization's last one. */
export async function insertLinkifier(q: Q, realmId: number, fields: LinkifierFields): Promise<number> {
  const last = await q('realm_linkifiers').where({ realm_id: realmId }).max({ m: 'order' }).first();
  const order = last?.m === null || last?.m === undefined ? 0 : Number(last.m) + 1;
  invalidateLinkifiers(q, realmId);
  return insertOne(q, 'realm_linkifiers', { realm_id: realmId, ...toColumns(fields), order });
}

export async function getLinkifier(q: Q, realmId: number, id: number): Promise<Linkifier | undefined> {
  const row = await q('realm_linkifiers')
    .where({ realm_id: realmId, id })
    .first(...COLUMNS);
  return row ? toLinkifier(row) : undefined;
}

export async function updateLinkifier(q: Q, realmId: number, id: number, fields: LinkifierFields): Promise<void> {
  invalidateLinkifiers(q, realmId);
  await q('realm_linkifiers').where({ realm_id: realmId, id }).update(toColumns(fields));
}

/** The number of rows deleted (0 for another organization's or a missing linkifier). */
export async function deleteLinkifier(q: Q, realmId: number, id: number): Promise<number> {
  invalidateLinkifiers(q, realmId);
  return q('realm_linkifiers').where({ realm_id: realmId, id }).delete();
}

/** Sets each linkifier's order to its index in `ids`. */
export async function reorderLinkifiers(q: Q, realmId: number, ids: readonly number[]): Promise<void> {
  invalidateLinkifiers(q, realmId);
  for (const [order, id] of ids.entries()) await q('realm_linkifiers').where({ realm_id: realmId, id }).update({ order });
}

/** The ids of the organization's linkifiers. */
export async function listLinkifierIds(q: Q, realmId: number): Promise<number[]> {
  const rows = await q('realm_linkifiers').where({ realm_id: realmId }).select('id');
  return rows.map((r) => Number(r.id));
}
