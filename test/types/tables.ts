/**
 * Compile-time checks of the typed tables (generated/tables.d.ts, ADR 0037),
 * run by `tsc --noEmit`, never executed. Each `@ts-expect-error` fails the
 * type check the day the line under it compiles, that is, the day knex stops
 * holding queries to the schema.
 */
import type { Knex } from 'knex';
import type { DbBool, TableRow } from '../../generated/tables';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

declare const db: Knex;

export async function checks(): Promise<void> {
  // A plain table name gives the table's row, booleans as the drivers return them.
  const user = await db('users').where({ id: 1 }).first();
  const typed: Equal<typeof user, TableRow<'users'> | undefined> = true;
  const active: DbBool | undefined = user?.is_active;
  // @ts-expect-error a boolean column is 0 or 1 when read, not a boolean.
  const asBoolean: boolean | undefined = user?.is_active;

  // Selected columns narrow the row, and pluck gives the column's type. (A name the table
  // lacks is not an error: knex lets it through as an alias, typed as a partial row.)
  const picked = await db('channels').where({ realm_id: 1 }).select('id', 'name');
  const pickedTyped: Array<Pick<TableRow<'channels'>, 'id' | 'name'>> = picked;
  // @ts-expect-error description was not selected.
  void picked[0]?.description;
  const ids = await db('channels').pluck('recipient_id');
  const idsTyped: Equal<typeof ids, Array<number | null>> = true;

  // Inserts take booleans and leave out what has a default; required columns must be there.
  await db('realms').insert({ string_id: 's', name: 'N', description: '', date_created: 1, invite_required: false });
  // @ts-expect-error realms.string_id has no default.
  await db('realms').insert({ name: 'N', description: '', date_created: 1 });
  // @ts-expect-error a number column takes no string.
  await db('users').where({ id: 1 }).update({ avatar_version: 'two' });
  // @ts-expect-error users has no column `nickname`.
  await db('users').where({ id: 1 }).update({ nickname: 'x' });

  void [typed, active, asBoolean, pickedTyped, ids, idsTyped];
}
