/**
 * The knex internals the database engines of src/db extend, copy or lean on
 * (src/db/mysql/knex-internals.d.ts, src/db/sqlite/knex-internals.d.ts, ADR
 * 0034). package.json pins knex exactly; this test fails when the installed
 * knex is another version, or when any of those internals changes shape: a
 * method gone, or the text of a function Parley copied or depends on
 * changed. On a knex upgrade: read each function named in a failure against
 * the Parley code named beside it, adapt that code, then record the new
 * fingerprint here.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import ClientBetterSQLite3 from 'knex/lib/dialects/better-sqlite3';
import ClientMySQL2 from 'knex/lib/dialects/mysql2';
import TransactionMySQL2 from 'knex/lib/dialects/mysql2/transaction';
import Runner from 'knex/lib/execution/runner';
import { createDb } from '../src/db/connection';
import { inTransaction } from '../src/db/transaction';

const KNEX_LIB = path.join(path.dirname(require.resolve('knex/package.json')), 'lib');

/** A short digest of a function's source text. */
const fingerprint = (text: string) => crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);

/** The source of a function knex keeps to itself (not exported): from `function name(` to the closing brace at the start of a line. */
function privateFunction(file: string, name: string): string {
  const text = fs.readFileSync(path.join(KNEX_LIB, file), 'utf8');
  const found = new RegExp(`^(async )?function ${name}\\(.*?^}$`, 'ms').exec(text);
  if (!found) throw new Error(`knex's ${file} no longer has function ${name}`);
  return found[0];
}

type Method = (...args: never[]) => unknown;
const method = (cls: { prototype: object }, name: string): string => {
  const fn = (cls.prototype as Record<string, Method | undefined>)[name];
  if (typeof fn !== 'function') throw new Error(`knex's ${String((cls as { name?: string }).name)} has no method ${name}`);
  return fn.toString();
};

/** The generic transaction class of knex, which the mysql2 one extends. */
const Transaction = Object.getPrototypeOf(TransactionMySQL2) as { prototype: object; name: string };

/**
 * Each internal, with what in Parley depends on it: what was copied, or
 * what statement text or field the engine relies on.
 */
const INTERNALS: Array<{ what: string; reliedOnBy: string; source: () => string }> = [
  {
    what: 'Transaction#_onAcquire',
    reliedOnBy: 'src/db/mysql/pipelined-client.ts PipelinedTransaction._onAcquire (a copy)',
    source: () => method(Transaction, '_onAcquire'),
  },
  {
    what: 'execution/transaction.js makeTransactor',
    reliedOnBy: 'src/db/mysql/transactor.ts makeTransactor (rebuilt on shared prototypes)',
    source: () => privateFunction('execution/transaction.js', 'makeTransactor'),
  },
  {
    what: 'execution/transaction.js makeTxClient',
    reliedOnBy:
      'src/db/mysql/transactor.ts makeTxClient (a copy); src/db/invalidations.ts (a transaction client shares its config); src/db/mysql/server-thread.ts (acquireConnection gives the transaction its own)',
    source: () => privateFunction('execution/transaction.js', 'makeTxClient'),
  },
  {
    what: 'Transaction#begin, #savepoint, #commit, #release, #rollback, #rollbackTo',
    reliedOnBy: 'src/db/mysql/pipelined-client.ts (the BEGIN it holds back, the COMMIT and ROLLBACK texts its pipeline recognises)',
    source: () => ['begin', 'savepoint', 'commit', 'release', 'rollback', 'rollbackTo'].map((m) => method(Transaction, m)).join('\n'),
  },
  {
    what: 'Transaction_MySQL2#query',
    reliedOnBy: 'src/db/mysql/pipelined-client.ts (a failed COMMIT packet reaches the transaction as a failed query)',
    source: () => method(TransactionMySQL2, 'query'),
  },
  {
    what: 'Client_MySQL2#transaction',
    reliedOnBy: 'src/db/mysql/pipelined-client.ts PipelinedMysqlClient.transaction (overridden)',
    source: () => method(ClientMySQL2, 'transaction'),
  },
  {
    what: 'knex-builder/make-knex.js',
    reliedOnBy: 'src/db/mysql/transactor.ts (takes its prototypes from a knex instance; PER_INSTANCE names what is per instance)',
    source: () => fs.readFileSync(path.join(KNEX_LIB, 'knex-builder/make-knex.js'), 'utf8'),
  },
  {
    what: 'Client_BetterSQLite3#_query, #acquireRawConnection',
    reliedOnBy: 'src/db/sqlite/routed-client.ts (_query replaced by one with a statement cache; acquireRawConnection extended)',
    source: () => ['_query', 'acquireRawConnection'].map((m) => method(ClientBetterSQLite3, m)).join('\n'),
  },
  {
    what: 'Runner#run and ensureConnectionCallback',
    reliedOnBy: 'src/db/sqlite/routed-client.ts RoutedRunner.run (what run does once it holds a connection, repeated for a reader)',
    source: () =>
      method(Runner, 'run') + '\n' + privateFunction('execution/internal/ensure-connection-callback.js', 'ensureConnectionCallback'),
  },
];

/** The fingerprints of knex 3.3.0's internals (see above before changing one). */
const EXPECTED: Record<string, string> = {
  'Transaction#_onAcquire': '6001e789330dff20',
  'execution/transaction.js makeTransactor': '9886cca59d2f6101',
  'execution/transaction.js makeTxClient': 'add547671aba6302',
  'Transaction#begin, #savepoint, #commit, #release, #rollback, #rollbackTo': 'fe45ca83fe230d66',
  'Transaction_MySQL2#query': 'f63d179821d3ebc2',
  'Client_MySQL2#transaction': '668c6adea606d026',
  'knex-builder/make-knex.js': '36a2ca79e0477bee',
  'Client_BetterSQLite3#_query, #acquireRawConnection': '14a4cc23b14c60a8',
  'Runner#run and ensureConnectionCallback': '097464f48fec47f0',
};

/** Methods the engines override or call, by class (the knex-internals.d.ts declarations). */
const METHODS: Array<[string, { prototype: object }, string[]]> = [
  ['Client_MySQL2', ClientMySQL2, ['transaction', 'releaseConnection', 'acquireConnection', 'query', 'stream']],
  [
    'Transaction_MySQL2',
    TransactionMySQL2,
    ['_onAcquire', 'begin', 'savepoint', 'commit', 'release', 'rollback', 'rollbackTo', 'isCompleted', 'query'],
  ],
  [
    'Client_BetterSQLite3',
    ClientBetterSQLite3,
    ['_driver', '_query', '_optSafeIntegers', '_formatBindings', 'acquireRawConnection', 'acquireConnection', 'runner', 'destroy'],
  ],
  ['Runner', Runner, ['run', 'query']],
];

describe('the knex internals the engines rely on', () => {
  it('is the knex package.json pins, exactly', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const lock = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
    };
    const pinned = pkg.dependencies.knex!;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(lock.packages['']!.dependencies!.knex).toBe(pinned);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect((require('knex/package.json') as { version: string }).version).toBe(pinned);
  });

  it('has every method the engines override or call', () => {
    const missing = METHODS.flatMap(([name, cls, methods]) =>
      methods.filter((m) => typeof (cls.prototype as Record<string, unknown>)[m] !== 'function').map((m) => `${name}#${m}`),
    );
    expect(missing).toEqual([]);
    // _onAcquire, makeTransactor and makeTxClient live in the generic transaction the mysql2 one extends.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect(Transaction).toBe(require('knex/lib/execution/transaction'));
  });

  it('has the functions the engines copied or depend on, unchanged', () => {
    const actual = Object.fromEntries(INTERNALS.map((i) => [i.what, fingerprint(i.source())]));
    const changed = INTERNALS.filter((i) => actual[i.what] !== EXPECTED[i.what]).map((i) => `${i.what} (re-check ${i.reliedOnBy})`);
    expect(changed).toEqual([]);
  });

  describe("on SQLite, where a transaction is knex's own", () => {
    let dir: string;
    let db: Knex;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-knex-internals-'));
      db = createDb({ databaseUrl: null, dataDir: dir });
    });
    afterAll(async () => {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("gives a transaction a client that shares its database client's config, and hands out the transaction's own connection", async () => {
      await inTransaction(db, async (tx) => {
        const client = tx.trx.client as { config: unknown; transacting?: boolean; acquireConnection(): Promise<unknown> };
        // src/db/invalidations.ts finds a transaction's sinks there.
        expect(client.config).toBe(db.client.config);
        expect(client.transacting).toBe(true);
        // src/db/mysql/server-thread.ts asks a transaction's client for its connection.
        const conn = await client.acquireConnection();
        expect(await client.acquireConnection()).toBe(conn);
        // src/db/invalidations.ts: a transaction opened without inTransaction publishes once this settles.
        expect(typeof (tx.trx.executionPromise as Promise<unknown> | undefined)?.then).toBe('function');
        expect((tx.trx as unknown as { isTransaction?: boolean }).isTransaction).toBe(true);
      });
    });
  });
});
