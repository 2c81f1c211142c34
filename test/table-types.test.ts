/**
 * generated/tables.d.ts against the databases themselves (docs/adr/0037-typed-tables.md):
 * the row types read from each database's catalogue after the migrations are
 * the file checked in, so SQLite and MariaDB agree on every column's type,
 * nullability and default, and `npm run gen` was run after the last migration.
 * And the types are what the drivers return: 0/1 for a boolean, numbers for
 * integers of every width.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TableRow } from '../generated/tables';
import { readTables, renderTables } from '../scripts/table-types';
import { eachDatabase, freshDatabase, TestDb } from './support/databases';

const GENERATED = path.join(__dirname, '..', 'generated', 'tables.d.ts');

eachDatabase('table types', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('are the checked-in generated/tables.d.ts', async () => {
    expect(renderTables(await readTables(t.db))).toBe(fs.readFileSync(GENERATED, 'utf8'));
  });

  it('describe what the driver returns: booleans as 0/1, integers and big integers as numbers', async () => {
    const id = 4_000_000_001; // above 2^31: the unsigned id column
    await t
      .db('realms')
      .insert({ id, string_id: 'typed', name: 'Typed', description: '', date_created: 1_700_000_000, invite_required: false });
    const row: TableRow<'realms'> | undefined = await t.db('realms').where({ id }).first();
    expect(row).toBeDefined();
    expect(row!.deactivated).toBe(0);
    expect(row!.invite_required).toBe(0);
    expect(row!.allow_message_editing).toBe(1);
    expect(row!.id).toBe(id);
    expect(row!.message_retention_days).toBeNull();
    expect(typeof row!.date_created).toBe('number');
    // A BIGINT column above 2^32 (audit_log's id is a big increment): a number, not a string or a BigInt.
    await t.db('audit_log').insert({ id: 2 ** 40, realm_id: id, event_type: 1, event_time: 1_700_000_000 });
    const audit = await t.db('audit_log').where({ realm_id: id }).first('id', 'extra_data');
    expect(audit).toEqual({ id: 2 ** 40, extra_data: null });
  });
});
