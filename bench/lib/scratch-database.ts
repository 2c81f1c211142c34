import knexFactory from 'knex';

/**
 * A new, empty MariaDB database on the server of `serverUrl` (a mysql://
 * URL, its path ignored; a `socket` query parameter is honoured) for a
 * one-shot benchmark: its DATABASE_URL, and how to drop it afterwards.
 */
export async function createScratchDatabase(serverUrl: string, prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = new URL(serverUrl);
  const name = `${prefix}_${process.pid}`;
  const socket = base.searchParams.get('socket');
  const admin = knexFactory({
    client: 'mysql2',
    connection: {
      host: base.hostname,
      port: Number(base.port || 3306),
      user: decodeURIComponent(base.username),
      password: decodeURIComponent(base.password),
      ...(socket ? { socketPath: socket } : {}),
    },
    pool: { min: 0, max: 1 },
  });
  await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  base.pathname = `/${name}`;
  return {
    url: base.toString(),
    drop: async () => {
      await admin.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.destroy();
    },
  };
}
