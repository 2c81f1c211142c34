import type { Knex } from 'knex';
import type { Playground } from '../domain/playgrounds';
import { invalidates } from '../db/invalidations';
import { insertOne } from './ids';

type Q = Knex | Knex.Transaction;

const COLUMNS = ['id', 'name', 'pygments_language', 'url_template'] as const;

const toPlayground = (r: { id: number; name: string; pygments_language: string; url_template: string }): Playground => ({
  id: Number(r.id),
  name: String(r.name),
  pygments_language: String(r.pygments_language),
  url_template: String(r.url_template),
});

/** The organization's playgrounds, oldest first. */
export async function listPlaygrounds(q: Q, realmId: number): Promise<Playground[]> {
  const rows = await q('realm_playgrounds')
    .where({ realm_id: realmId })
    .orderBy('id')
    .select(...COLUMNS);
  return rows.map(toPlayground);
}

export async function playgroundTaken(q: Q, realmId: number, pygmentsLanguage: string, name: string): Promise<boolean> {
  const row = await q('realm_playgrounds').where({ realm_id: realmId, pygments_language: pygmentsLanguage, name }).first('id');
  return row !== undefined;
}

// Every write below drops the organization's cached playgrounds (src/cache/playgrounds.ts) on every node.
export async function insertPlayground(q: Q, realmId: number, p: Omit<Playground, 'id'>): Promise<number> {
  invalidates(q, { kind: 'playgrounds', realmId });
  return insertOne(q, 'realm_playgrounds', { realm_id: realmId, ...p });
}

export async function getPlayground(q: Q, realmId: number, id: number): Promise<Playground | undefined> {
  const row = await q('realm_playgrounds')
    .where({ realm_id: realmId, id })
    .first(...COLUMNS);
  return row ? toPlayground(row) : undefined;
}

export async function deletePlayground(q: Q, realmId: number, id: number): Promise<number> {
  invalidates(q, { kind: 'playgrounds', realmId });
  return q('realm_playgrounds').where({ realm_id: realmId, id }).delete();
}
