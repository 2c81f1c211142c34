import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { createBackup } from '../db/backup/backup';
import { BackupError } from '../db/backup/errors';
import { DIALECT_NAME } from '../db/backup/manifest';
import { restoreBackup } from '../db/backup/restore';
import { stderrProgress } from './progress';

export const BACKUP_USAGE = `  backup --output FILE [--force]
                                           write a consistent backup of the database and DATA_DIR/uploads
                                           to FILE (a .tar.gz) while the server runs; --force replaces FILE
  restore --input FILE [--force]
                                           restore a backup into DATA_DIR / DATABASE_URL (stop the server
                                           first); --force replaces a database that already holds data`;

/** `backup` and `restore`: they neither migrate nor open the server's context first. */
export async function backupCommand(command: 'backup' | 'restore', args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { output: { type: 'string' }, input: { type: 'string' }, force: { type: 'boolean', default: false } },
    strict: true,
  });
  const config = loadConfig();
  const progress = stderrProgress();
  // The first SIGINT/SIGTERM stops the work and cleans up; the partial files go with it.
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (command === 'backup') {
      if (!values.output) throw new BackupError('--output FILE is required');
      const { file, bytes, manifest } = await createBackup(config, {
        output: values.output,
        force: values.force,
        progress,
        signal: abort.signal,
      });
      progress.end();
      const uploads = manifest.uploads ? `, ${manifest.uploads.files} uploaded files` : '';
      process.stdout.write(
        `Wrote ${file} (${(bytes / (1 << 20)).toFixed(1)} MiB): ${DIALECT_NAME[manifest.dialect]} database at ${manifest.migration}, ` +
          `${manifest.tables.messages ?? 0} messages${uploads}.\n`,
      );
    } else {
      if (!values.input) throw new BackupError('--input FILE is required');
      const { manifest, target, applied } = await restoreBackup(config, {
        input: values.input,
        force: values.force,
        progress,
        signal: abort.signal,
      });
      progress.end();
      const migrations = applied.length ? `; applied migrations ${applied.join(', ')}` : '';
      process.stdout.write(`Restored the backup of ${manifest.created_at} into ${target}${migrations}.\n`);
    }
    return 0;
  } catch (err) {
    progress.end();
    if (abort.signal.aborted) {
      process.stderr.write(command === 'backup' ? 'Interrupted: no backup was written.\n' : 'Interrupted: the target was not changed.\n');
      return 130;
    }
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
