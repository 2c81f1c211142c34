/**
 * How backup and restore report long work. The CLI draws it on stderr
 * (src/cli/progress.ts); tests and library callers may pass `silentProgress`.
 */
export interface Progress {
  /** A new step begins ("Copying the database"). */
  step(label: string): void;
  /** How far the current step is: `done` of `total` (when known) in `unit`. */
  advance(done: number, total: number | null, unit: 'bytes' | 'pages' | 'rows' | 'messages'): void;
  /** Something the operator should know that does not stop the work. */
  warn(message: string): void;
}

export const silentProgress: Progress = { step() {}, advance() {}, warn() {} };
