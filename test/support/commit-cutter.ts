import net from 'node:net';
import { mysqlConnectionOptions } from '../../src/db/connection';

/**
 * A TCP proxy in front of the test MariaDB that can lose the answer to a
 * COMMIT: once armed, it passes the next COMMIT to the server, waits for the
 * server's reply (the transaction has then committed) and closes the
 * client's connection instead of passing the reply on. The client sees its
 * connection lost during COMMIT, the case whose outcome it cannot know.
 * Everything else flows through untouched.
 */
export interface CommitCutter {
  /** host:port to give the client in place of the database's. */
  port: number;
  /** Cut the answer to the next COMMIT that goes through. */
  arm(): void;
  /** How many COMMIT answers were cut so far. */
  readonly cuts: number;
  close(): Promise<void>;
}

// A COM_QUERY packet (command byte 0x03) whose text starts with COMMIT, or
// ends with it: a transaction's held writes travel in COMMIT's packet
// (src/db/mysql/pipelined-client.ts).
const COMMIT = Buffer.from('\x03COMMIT', 'latin1');
const LAST_COMMIT = Buffer.from(';\nCOMMIT', 'latin1');

/** A cutter in front of the database a mysql:// URL names (host and port, or its ?socket=). */
export async function startCommitCutter(databaseUrl: string): Promise<CommitCutter> {
  const o = mysqlConnectionOptions(databaseUrl);
  const target: net.NetConnectOpts = o.socketPath ? { path: o.socketPath } : { host: o.host!, port: o.port! };
  let armed = false;
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    sockets.add(client).add(upstream);
    let cutNextReply = false;
    client.on('data', (chunk) => {
      if (armed && (chunk.includes(COMMIT) || chunk.includes(LAST_COMMIT))) {
        armed = false;
        cutNextReply = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!cutNextReply) {
        client.write(chunk);
        return;
      }
      cuts++;
      client.destroy();
      upstream.destroy();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    arm: () => {
      armed = true;
    },
    get cuts() {
      return cuts;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The same database URL, through the cutter. */
export function throughCutter(databaseUrl: string, cutter: CommitCutter): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(cutter.port);
  url.searchParams.delete('socket');
  return url.toString();
}
