import knexFactory, { type Knex } from 'knex';
import { mysqlConnectionOptions } from '../../src/db/connection';

/** A database made on a MySQL server for tests, and the administrative connection that made it. */
export interface MysqlDatabase {
  name: string;
  /** Its DATABASE_URL. */
  url: string;
  /** One connection to the server with no database selected (information_schema, SHOW CREATE TABLE). */
  admin: Knex;
  /** Drops the database and closes the connection. */
  drop(): Promise<void>;
  /** Closes the connection, leaving the database (a template, which the run's teardown drops). */
  close(): Promise<void>;
}

/**
 * Creates the empty database `name` on the server of `serverUrl` (a mysql://
 * URL, its database part ignored; a `socket` parameter honoured), with the
 * character set the migrations expect. `replace` drops one of that name first.
 */
export async function createMysqlDatabase(serverUrl: string, name: string, opts: { replace?: boolean } = {}): Promise<MysqlDatabase> {
  const { database: _none, ...connection } = mysqlConnectionOptions(serverUrl);
  const admin = knexFactory({ client: 'mysql2', connection, pool: { min: 0, max: 1 } });
  try {
    if (opts.replace) await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } catch (err) {
    await admin.destroy();
    throw err;
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    admin,
    drop: async () => {
      await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.destroy();
    },
    close: () => admin.destroy(),
  };
}
