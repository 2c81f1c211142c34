import fs from 'node:fs';
import path from 'node:path';

/**
 * A results file's path without its extension, `<dir>/<date>-<name>`, or
 * `<date>-<name>-2`, `-3`… when a run of the same day already wrote one
 * (any of `extensions`): a second run the same day adds its numbers rather
 * than replacing the first's.
 */
export function freshResultBase(dir: string, started: Date, name: string, extensions: readonly string[] = ['.md']): string {
  fs.mkdirSync(dir, { recursive: true });
  const stem = path.join(dir, `${started.toISOString().slice(0, 10)}-${name}`);
  const taken = (base: string) => extensions.some((ext) => fs.existsSync(base + ext));
  if (!taken(stem)) return stem;
  for (let n = 2; ; n++) if (!taken(`${stem}-${n}`)) return `${stem}-${n}`;
}
