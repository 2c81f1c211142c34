/**
 * A backup or restore failure the operator can act on (a missing file, a
 * damaged archive, a target that already holds data): the CLI prints its
 * message as one line, without a stack trace.
 */
export class BackupError extends Error {
  override readonly name = 'BackupError';
}

/** The operator interrupted the work (SIGINT, SIGTERM). */
export class BackupAborted extends BackupError {}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new BackupAborted('Interrupted.');
}
