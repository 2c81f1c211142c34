import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { mysqlConnectionOptions } from '../connection';
import { BackupAborted, BackupError } from './errors';

/**
 * Running MariaDB's own client programs (mariadb-dump, mariadb) against the
 * server DATABASE_URL names.
 *
 * Credentials go in an option file readable only by us (mode 0600, in a
 * private temporary directory), never on the command line, where any user of
 * the machine could read them from the process list. The file is passed with
 * --defaults-file, so it is the only option file read: a ~/.my.cnf or
 * /etc/mysql/ setting cannot redirect the programs to another server or user
 * than the one the Parley server itself uses (mysql2 reads no option files).
 */
export interface ClientFiles {
  /** Pass as the first argument of every program. */
  defaultsArg: string;
  cleanup(): void;
}

export function writeClientOptions(databaseUrl: string): ClientFiles {
  const o = mysqlConnectionOptions(databaseUrl);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-mariadb-'));
  const file = path.join(dir, 'client.cnf');
  const lines = ['[client]', `user=${quote(o.user)}`, `password=${quote(o.password)}`];
  if (o.socketPath) lines.push(`socket=${quote(o.socketPath)}`);
  // Without protocol=tcp the client would take host=localhost to mean its default socket.
  else lines.push(`host=${quote(o.host!)}`, `port=${o.port}`, 'protocol=tcp');
  fs.writeFileSync(file, lines.join('\n') + '\n', { mode: 0o600 });
  return {
    defaultsArg: `--defaults-file=${file}`,
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** Option-file values: double-quoted, with backslash and double quote escaped. */
function quote(value: string): string {
  if (/[\n\r]/.test(value)) throw new BackupError('DATABASE_URL holds a line break; MariaDB option files cannot carry it.');
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * Runs a MariaDB client program; `feed` writes its stdin, `drain` reads its
 * stdout (each a pipeline that resolves when done). Resolves when the program
 * and both pipelines are done; rejects with the program's first error line.
 */
export async function runClient(
  program: string,
  args: string[],
  io: { feed?: (stdin: Writable) => Promise<void>; drain?: (stdout: Readable) => Promise<void>; signal?: AbortSignal },
): Promise<void> {
  const child = spawn(program, args, { stdio: [io.feed ? 'pipe' : 'ignore', io.drain ? 'pipe' : 'ignore', 'pipe'] });
  const stderr: Buffer[] = [];
  child.stderr!.on('data', (b: Buffer) => stderr.push(b));
  const onAbort = () => child.kill('SIGTERM');
  io.signal?.addEventListener('abort', onAbort);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new BackupError(`${program} not found: install the MariaDB client programs (Debian: mariadb-client).`)
          : err,
      ),
    );
    child.on('close', (code) => resolve(code));
  });
  const streams: Promise<void>[] = [];
  if (io.feed) streams.push(io.feed(child.stdin!));
  if (io.drain) streams.push(io.drain(child.stdout!));
  let streamError: unknown = null;
  const streamsDone = Promise.all(streams).then(
    () => undefined,
    (err) => {
      streamError = err;
      child.kill('SIGTERM');
    },
  );
  try {
    const code = await exited;
    await streamsDone;
    if (io.signal?.aborted) throw new BackupAborted('Interrupted.');
    // A non-zero exit explains itself on stderr (a broken pipe on our side only follows from it).
    if (code !== 0) {
      const first =
        Buffer.concat(stderr)
          .toString('utf8')
          .split('\n')
          .find((l) => l.trim()) ?? `exit code ${code}`;
      throw new BackupError(`${program} failed: ${first.trim()}`);
    }
    if (streamError) throw streamError;
  } finally {
    io.signal?.removeEventListener('abort', onAbort);
  }
}
