import v8 from 'node:v8';

/**
 * V8 flags the server sets on itself as it starts: imported first by
 * src/main.ts, so they hold before the first request is parsed.
 *
 * `--no-allocation-site-pretenuring` (ADR 0025): V8 watches each allocation
 * site, and once most of a site's objects survive a young-generation
 * collection, it allocates that site's objects straight in the old
 * generation. Under load, the sites of a send's transaction (its knex client
 * and transactor, its statements' text) are caught alive in the middle of a
 * request at a collection and get tenured; from then on every send leaves
 * them for a mark-compact, though they live a few milliseconds. Measured:
 * 6.4 → 3.7 KB per send that no young collection frees, and half the
 * mark-compacts during the POST rows of the 1m benchmark.
 *
 * Set at run time rather than on node's command line, so every way of
 * starting the server (make run, the cluster scripts, a service manager)
 * gets it; V8 reads this flag at each collection, not only at start.
 */
export const RUNTIME_V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

for (const flag of RUNTIME_V8_FLAGS) v8.setFlagsFromString(flag);
