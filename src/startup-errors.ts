import { ConfigError, hostPort } from './config/checks';

/**
 * Why the server could not start, in one line an operator can act on: what
 * it tried (the database, the address to listen on) and what answered. A
 * start-up failure is nearly always configuration or the machine's state, so
 * a stack trace would only hide the cause (ADR 0030).
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** The database a DATABASE_URL names, without its password; the SQLite file otherwise. */
export function describeDatabase(databaseUrl: string | null, sqliteFile: string): string {
  if (!databaseUrl) return sqliteFile;
  try {
    const u = new URL(databaseUrl);
    u.password = '';
    u.search = u.searchParams.has('socket') ? `?socket=${u.searchParams.get('socket')}` : '';
    return u.toString();
  } catch {
    return 'DATABASE_URL';
  }
}

/** A driver's or the OS's error as a short reason: its code's meaning where known, else its first line. */
export function reasonOf(err: unknown): string {
  const e = err as { code?: unknown; sqlMessage?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code === 'ECONNREFUSED') return 'connection refused (is the database server running, on that host and port?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'unknown host';
  if (code === 'ETIMEDOUT') return 'no answer (timed out)';
  if (code === 'ENOENT') return 'no such file or socket';
  if (code === 'ER_BAD_DB_ERROR') return `${String(e.sqlMessage)} (create the database first: Parley creates its tables, not the database)`;
  if (typeof e?.sqlMessage === 'string') return e.sqlMessage;
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0]!.trim() || (code ? code : 'unknown error');
}

/** Binding the listener failed: which address, and what to change. */
export function listenFailure(err: unknown, what: string, host: string, port: number): StartupError {
  const code = (err as { code?: unknown })?.code;
  const where = hostPort(host, port);
  if (code === 'EADDRINUSE')
    return new StartupError(`Parley failed to start: ${where} is already in use; stop what listens there or set ${what}`);
  if (code === 'EADDRNOTAVAIL') return new StartupError(`Parley failed to start: ${host} is not an address of this machine (HOST)`);
  if (code === 'EACCES')
    return new StartupError(`Parley failed to start: not permitted to listen on ${where} (ports below 1024 need privileges)`);
  return new StartupError(`Parley failed to start: cannot listen on ${where}: ${reasonOf(err)}`);
}

/** The line printed for any error that stopped the start; the stack only when LOG_LEVEL asks for it. */
export function startupFailureLine(err: unknown, logLevel: string | undefined): string {
  if (err instanceof ConfigError || err instanceof StartupError) return err.message;
  const verbose = logLevel === 'debug' || logLevel === 'trace';
  if (verbose && err instanceof Error && err.stack) return `Parley failed to start: ${err.stack}`;
  return `Parley failed to start: ${reasonOf(err)}${verbose ? '' : ' (LOG_LEVEL=debug prints the stack)'}`;
}
