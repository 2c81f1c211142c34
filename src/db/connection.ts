import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { PipelinedMysqlClient } from './mysql/pipelined-client';
import { idleCheck } from './mysql/idle-check';
import { IDENTIFY_SQL, rememberThread } from './mysql/server-thread';
import { RoutedSqliteClient } from './sqlite/routed-client';

export type Db = Knex;
export type Dialect = 'sqlite' | 'mysql';

export function dialectOf(db: Knex): Dialect {
  const client = String(db.client.config.client);
  return client === 'mysql2' || client === 'mysql' ? 'mysql' : 'sqlite';
}

/** The statement head that inserts rows and skips those whose key is already there. */
export function insertIgnoreInto(db: Knex | Knex.Transaction): string {
  return dialectOf(db as Knex) === 'mysql' ? 'INSERT IGNORE INTO' : 'INSERT OR IGNORE INTO';
}

/** The SQLite database of a configuration without DATABASE_URL. */
export function sqliteFileOf(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'parley.sqlite3');
}

/**
 * Knex for SQLite (default, a file under dataDir) or MySQL/MariaDB (DATABASE_URL=mysql://…).
 * SQLite gets one writer and `sqliteReaders` read-only connections (sqlite/routed-client.ts).
 */
export function createDb(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'dbPoolMax' | 'sqliteReaders'>>,
  sqliteFile?: string,
  log?: Logger,
): Knex {
  if (config.databaseUrl) return knexFactory({ ...mysqlConfig(config.databaseUrl, config.dbPoolMax ?? 10), log: knexLog(log) });
  const filename = sqliteFile ?? sqliteFileOf(config);
  if (filename !== ':memory:') fs.mkdirSync(path.dirname(filename), { recursive: true });
  const sqliteConfig: Knex.Config & { readers: number } = {
    client: RoutedSqliteClient,
    connection: { filename },
    useNullAsDefault: true,
    readers: config.sqliteReaders ?? 1,
    // The writer: the driver is synchronous, and one writing connection
    // serialises transactions, which is what makes read-modify-write safe
    // without FOR UPDATE. Its pragmas are set as the client opens it.
    pool: { min: 1, max: 1 },
  };
  return knexFactory(sqliteConfig);
}

/**
 * mysql2 connection options from a DATABASE_URL: mysql://user:pass@host:port/db,
 * or ?socket=/run/mysqld/mysqld.sock for a database on the same machine. Over
 * loopback TCP the client process pays for both ends of the TCP stack on every
 * statement; the Unix socket costs far less.
 */
export function mysqlConnectionOptions(url: string): {
  socketPath?: string;
  host?: string;
  port?: number;
  user: string;
  password: string;
  database: string;
} {
  const u = new URL(url);
  // mariadb:// is the same protocol under MariaDB's name.
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:')
    throw new Error(`DATABASE_URL must start with mysql:// or mariadb://, got ${u.protocol}`);
  const socketPath = u.searchParams.get('socket');
  return {
    ...(socketPath ? { socketPath } : { host: u.hostname, port: u.port ? Number(u.port) : 3306 }),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.replace(/^\//, ''),
  };
}

/**
 * knex's own messages, into the process's log rather than the console (where
 * they broke the JSON lines). Its warning about a failed connection repeats,
 * stack and all, the error its caller receives and reports (a 503, or the
 * start-up line), so it is debug detail.
 */
function knexLog(log: Logger | undefined): Knex.Config['log'] {
  const quiet = () => undefined;
  if (!log) return { warn: quiet, error: quiet, deprecate: quiet, debug: quiet };
  return {
    warn: (message: unknown) => log.debug({ knex: String(message).slice(0, 2000) }, 'database client warning'),
    error: (message: unknown) => log.error({ knex: String(message).slice(0, 2000) }, 'database client error'),
    deprecate: quiet,
    debug: quiet,
  };
}

function mysqlConfig(url: string, poolMax: number): Knex.Config {
  return {
    // knex's mysql2 client, with transactions that send fewer packets (ADR 0018).
    client: PipelinedMysqlClient,
    // While the database is unreachable the pool keeps trying to connect until
    // this runs out; knex's 60 s default would hold a request (and its client)
    // for a minute. Ten seconds rides out a proxy's failover or a Galera node's
    // eviction (about 4 s), then the request gets a 503 (src/errors.ts).
    acquireConnectionTimeout: 10_000,
    connection: {
      ...mysqlConnectionOptions(url),
      // No `charset` here: knex would then append `default character set` to
      // every CREATE TABLE and tables would lose the database's unicode_ci collation.
      supportBigNumbers: true,
      // Flags are < 2^53, so numbers stay exact.
      bigNumberStrings: false,
      // A transaction sends its BEGIN and held writes in the packet of its next
      // statement (mysql/pipelined-client.ts, ADR 0018).
      multipleStatements: true,
    },
    pool: {
      min: 0,
      max: poolMax,
      // A connection left idle a while is pinged, within a bound, before use (mysql/idle-check.ts).
      validate: idleCheck(),
      afterCreate(
        conn: { query(sql: string, cb: (err: Error | null, results?: unknown) => void): void },
        done: (err: Error | null, conn: unknown) => void,
      ) {
        // eq_range_index_dive_limit: IN lists of up to 200 ids (a page's reactions,
        // senders) made the optimizer probe the index once per id just to estimate
        // rows: 35% of such a statement's time, measured; index statistics estimate
        // as well for these lookups.
        // group_concat_max_len: authentication reads the caller's groups and channels
        // as group_concat lists (src/queries/auth.ts); MySQL's default of 1,024 bytes
        // would cut them silently (the server clamps this value to its own maximum).
        // In the same packet, the connection's server thread: what proves a
        // COMMIT lost on it did not commit (mysql/server-thread.ts, ADR 0026).
        conn.query(`SET SESSION eq_range_index_dive_limit = 10, group_concat_max_len = 4294967295; ${IDENTIFY_SQL}`, (err, results) => {
          if (!err) rememberThread(conn, results);
          done(err, conn);
        });
      },
    },
  };
}
