import net from 'node:net';
import { createDb, mysqlConnectionOptions } from '../../src/db/connection';
import { freshMigratedMysqlDatabase, type TestDb } from './databases';

/**
 * A TCP proxy in front of the test MariaDB that breaks, on command, the
 * connection that carries the next COMMIT (a COMMIT's packet is, for a send,
 * its whole transaction: src/db/mysql/pipelined-client.ts), in one of the
 * ways a network or a database node fails:
 * - `arm()`: the COMMIT reaches the server, which commits; its answer is
 *   dropped and the connection closed. The client cannot know the outcome.
 * - `dropBeforeNextCommit()`: the connection is closed the moment the packet
 *   arrives, before any of it is passed on: a pooled connection that had died
 *   unseen (a node killed, a proxy failing over). Nothing was committed.
 * - `orphanNextCommit()`: the packet is passed on and the client's side closed
 *   at once, while the server's side stays open and its answers go nowhere:
 *   the server goes on running the packet (it may be waiting for a lock) and
 *   may commit after the client has given up.
 * - `stallOpenConnections()`: every connection open now goes silent both
 *   ways without closing (a half-open socket, a hung proxy); connections
 *   opened later work.
 * Everything else flows through untouched.
 */
export interface CommitCutter {
  /** host:port to give the client in place of the database's. */
  port: number;
  /** Cut the answer to the next COMMIT that goes through. */
  arm(): void;
  /** Close the connection of the next COMMIT before passing any of its packet on. */
  dropBeforeNextCommit(): void;
  /** Pass the next COMMIT on, then close the client's side only. */
  orphanNextCommit(): void;
  /** Stop passing anything, either way, on the connections open now. */
  stallOpenConnections(): void;
  /** How many connections were broken so far, whichever the way. */
  readonly cuts: number;
  close(): Promise<void>;
}

// A COM_QUERY packet (command byte 0x03) whose text starts with COMMIT, or
// ends with it: a transaction's held writes travel in COMMIT's packet
// (src/db/mysql/pipelined-client.ts).
const COMMIT = Buffer.from('\x03COMMIT', 'latin1');
const LAST_COMMIT = Buffer.from(';\nCOMMIT', 'latin1');

type Mode = 'pass' | 'cut-answer' | 'drop-before' | 'orphan';

/** A cutter in front of the database a mysql:// URL names (host and port, or its ?socket=). */
export async function startCommitCutter(databaseUrl: string): Promise<CommitCutter> {
  const o = mysqlConnectionOptions(databaseUrl);
  const target: net.NetConnectOpts = o.socketPath ? { path: o.socketPath } : { host: o.host!, port: o.port! };
  let mode: Mode = 'pass';
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const stalls = new Set<() => void>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    sockets.add(client).add(upstream);
    let cutNextReply = false;
    let orphaned = false;
    let stalled = false;
    const stall = () => {
      stalled = true;
    };
    stalls.add(stall);
    client.on('data', (chunk) => {
      if (stalled) return;
      if (mode !== 'pass' && (chunk.includes(COMMIT) || chunk.includes(LAST_COMMIT))) {
        const now = mode;
        mode = 'pass';
        if (now === 'drop-before') {
          cuts++;
          client.destroy();
          upstream.destroy();
          return;
        }
        if (now === 'orphan') {
          cuts++;
          orphaned = true;
          upstream.write(chunk);
          client.destroy();
          return;
        }
        cutNextReply = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (stalled || orphaned) return;
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
      stalls.delete(stall);
    };
    // An orphaned connection's server side lives on until the server closes it.
    client.on('close', () => orphaned || end()).on('error', () => orphaned || end());
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    arm: () => {
      mode = 'cut-answer';
    },
    dropBeforeNextCommit: () => {
      mode = 'drop-before';
    },
    orphanNextCommit: () => {
      mode = 'orphan';
    },
    stallOpenConnections: () => {
      for (const stall of stalls) stall();
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

/** A fresh, migrated MySQL database whose pool reaches it through a new cutter; dropping it closes the cutter. */
export async function databaseBehindCutter(): Promise<{ testDb: TestDb; cutter: CommitCutter }> {
  const mysql = await freshMigratedMysqlDatabase();
  const cutter = await startCommitCutter(mysql.url).catch(async (err: unknown) => {
    await mysql.drop();
    throw err;
  });
  const db = createDb({ databaseUrl: throughCutter(mysql.url, cutter), dataDir: '' });
  const testDb: TestDb = {
    db,
    drop: async () => {
      await db.destroy();
      await cutter.close();
      await mysql.drop();
    },
  };
  return { testDb, cutter };
}

/**
 * Breaks the connection of the next COMMIT as `how` says, runs `work`, and
 * fails unless exactly that one connection was broken meanwhile.
 */
export async function withOneCut<T>(
  cutter: CommitCutter,
  how: 'arm' | 'dropBeforeNextCommit' | 'orphanNextCommit',
  work: () => Promise<T>,
): Promise<T> {
  cutter[how]();
  const before = cutter.cuts;
  const result = await work();
  const cut = cutter.cuts - before;
  if (cut !== 1) throw new Error(`${cut} connections were broken, not the one that carried the COMMIT`);
  return result;
}
