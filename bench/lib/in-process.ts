import { loadConfig, type Config } from '../../src/config';
import type { Target } from './dataset';

/**
 * The package or source folder a profiled frame's script belongs to
 * (`knex`, `src/actions`, `node:internal`…): how profile.ts and alloc.ts
 * group their figures.
 */
export function sourceOf(url: string): string {
  if (!url) return '(native/runtime)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  const d = /\/dist\/(src\/[^/]+|bench)\//.exec(url);
  if (d) return d[1]!;
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  return url.split('/').slice(-2).join('/');
}

/** Settings for a Parley run inside a bench script, on the dataset of `target`: a free port of 127.0.0.1, no log, no rate limits. */
export function inProcessConfig(target: Target, extra: Record<string, string> = {}): Config {
  return loadConfig({
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: target.dataDir,
    DATABASE_URL: target.databaseUrl ?? '',
    LOG_LEVEL: 'silent',
    RATE_LIMITS: 'off',
    ...extra,
  });
}
