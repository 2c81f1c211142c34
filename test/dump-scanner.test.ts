import fc from 'fast-check';
import { DumpScanner } from '../src/db/backup/dump-scanner';

/**
 * The scanner counts rows in mariadb-dump's output for the manifest. Dumps are
 * written here the way mariadb-dump writes them (its string escaping, both the
 * one-line and the row-per-line INSERT layouts) and fed in arbitrary chunks.
 * test/backup.test.ts checks it against real dumps.
 */

type Value = string | number | null;
interface Table {
  name: string;
  rows: Value[][];
}

/** mariadb-dump's escaping of string values (mysql_real_escape_string). */
function literal(v: Value): string {
  if (v === null) return 'NULL';
  if (typeof v === 'number') return String(v);
  const escaped = v.replace(
    // eslint-disable-next-line no-control-regex -- SQL dumps escape these control characters
    /[\0\n\r\\'"\x1a]/g,
    (c) => ({ '\0': '\\0', '\n': '\\n', '\r': '\\r', '\\': '\\\\', "'": "\\'", '"': '\\"', '\x1a': '\\Z' })[c]!,
  );
  return `'${escaped}'`;
}

function dump(tables: Table[], rowPerLine: boolean): string {
  const out = ['/*M!999999\\- enable the sandbox mode */ ', '-- MariaDB dump 10.19', ''];
  for (const t of tables) {
    out.push(
      `DROP TABLE IF EXISTS \`${t.name}\`;`,
      `CREATE TABLE \`${t.name}\` (`,
      "  `id` int(10) unsigned NOT NULL DEFAULT '0',",
      "  `x` text DEFAULT (concat('a','b')),",
      '  PRIMARY KEY (`id`)',
      ') ENGINE=InnoDB;',
      '',
    );
    if (!t.rows.length) continue;
    out.push(`LOCK TABLES \`${t.name}\` WRITE;`);
    const tuples = t.rows.map((r) => `(${r.map(literal).join(',')})`);
    out.push(
      rowPerLine ? `INSERT INTO \`${t.name}\` VALUES\n${tuples.join(',\n')};` : `INSERT INTO \`${t.name}\` VALUES ${tuples.join(',')};`,
    );
    out.push('UNLOCK TABLES;', '');
  }
  out.push('-- Dump completed on 2026-01-01 00:00:00', '');
  return out.join('\n');
}

function scan(text: string, cuts: number[]): ReturnType<DumpScanner['finish']> {
  const bytes = Buffer.from(text, 'utf8');
  const scanner = new DumpScanner();
  let at = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b)) {
    scanner.push(bytes.subarray(at, cut));
    at = cut;
  }
  scanner.push(bytes.subarray(at));
  return scanner.finish();
}

const tricky = fc.string({
  unit: fc.constantFrom('a', ' ', "'", '"', '\\', '(', ')', ';', ',', '\n', '\r', '\0', '`', '\x1a', 'é', '😀', 'INSERT INTO `x` VALUES ('),
});
const value: fc.Arbitrary<Value> = fc.oneof(tricky, fc.integer(), fc.constant(null));
const table: fc.Arbitrary<Table> = fc.record({
  name: fc.stringMatching(/^[a-z_]{1,12}$/),
  rows: fc.array(fc.array(value, { minLength: 1, maxLength: 4 }), { maxLength: 6 }),
});

describe('DumpScanner', () => {
  it("counts every table's rows whatever the values, layout and chunking", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(table, { selector: (t) => t.name, maxLength: 5 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 20 }),
        (tables, rowPerLine, cuts) => {
          const summary = scan(dump(tables, rowPerLine), cuts);
          expect(summary.tables).toEqual(Object.fromEntries(tables.map((t) => [t.name, t.rows.length])));
          expect(summary.completed).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads the applied migrations from knex_migrations', () => {
    const text = dump(
      [
        {
          name: 'knex_migrations',
          rows: [
            [1, '001_initial', 1, '2026-01-01 00:00:00'],
            [2, "002_it's", 1, '2026-01-01 00:00:00'],
          ],
        },
        { name: 'users', rows: [[1, 'Ann']] },
      ],
      true,
    );
    for (const cuts of [[], [17], [400, 401, 402, 403]]) {
      expect(scan(text, cuts)).toEqual({
        tables: { knex_migrations: 2, users: 1 },
        migrations: ['001_initial', "002_it's"],
        completed: true,
      });
    }
  });

  it('notices a dump cut short', () => {
    const text = dump([{ name: 'users', rows: [[1, 'Ann']] }], false);
    expect(scan(text.slice(0, text.indexOf('-- Dump completed')), []).completed).toBe(false);
  });
});
