/**
 * The layers of docs/ARCHITECTURE.md, enforced (`make lint`, part of `make test`).
 * Each folder of src/ may import only the folders listed for it. The layer
 * rules count imports that survive compilation: any layer may name a row or
 * wire type (type-only imports, and imports used only as types, are left out
 * of them). The engine rules below count type imports too (ADR 0034).
 * knex is imported only by queries/ and db/.
 */
const LAYERS = {
  ports: ['ports', 'domain', 'errors'],
  domain: ['domain', 'errors'],
  db: ['db', 'ports', 'domain', 'errors', 'config'],
  queries: ['queries', 'db', 'domain', 'errors'],
  markdown: ['markdown', 'domain', 'errors'],
  emails: ['emails', 'domain', 'errors'],
  mail: ['mail', 'domain', 'errors', 'config'],
  integrations: ['integrations', 'domain', 'errors'],
  serializers: ['serializers', 'domain', 'errors'],
  access: ['access', 'queries', 'serializers', 'markdown', 'domain', 'errors'],
  events: ['events', 'integrations', 'ports', 'access', 'queries', 'serializers', 'domain', 'errors'],
  storage: ['storage', 'domain', 'errors'],
  actions: [
    'actions',
    'integrations',
    'emails',
    'mail',
    'ports',
    'access',
    'events',
    'queries',
    'serializers',
    'markdown',
    'db',
    'domain',
    'errors',
    'config',
    'storage',
    'cache',
  ],
  handlers: ['handlers', 'integrations', 'actions', 'access', 'events', 'serializers', 'markdown', 'domain', 'errors', 'http/handler'],
  // actions/soft-deactivation: the authentication step catches an idle caller up before any handler (ADR 0058).
  http: [
    'http',
    'integrations',
    'emails',
    'handlers',
    'access',
    'queries',
    'serializers',
    'domain',
    'errors',
    'storage',
    'cache',
    'actions/soft-deactivation',
  ],
  cache: ['cache', 'ports', 'queries', 'db', 'domain', 'errors'],
  // The incoming email gateway's SMTP listener: it parses mail and hands it to actions.
  gateway: ['gateway', 'actions', 'domain', 'errors', 'config'],
  cli: ['cli', 'actions', 'mail', 'access', 'queries', 'db', 'domain', 'errors', 'config', 'context', 'server', 'cache'],
};

const alternatives = (names) => names.map((n) => (n.includes('/') ? `${n}\\.ts` : `${n}(/|\\.ts)`)).join('|');

/** Dependencies that compilation erases: a type named, nothing loaded. */
const TYPES_ONLY = ['type-only', 'pre-compilation-only'];

module.exports = {
  forbidden: [
    ...Object.entries(LAYERS).map(([layer, allowed]) => ({
      name: `layer-${layer}`,
      comment: `src/${layer}/ may import only: ${allowed.join(', ')}`,
      severity: 'error',
      from: { path: `^src/${layer}/` },
      to: { path: '^src/', pathNot: `^src/(${alternatives(allowed)})`, dependencyTypesNot: TYPES_ONLY },
    })),
    {
      name: 'engine-behind-its-port',
      comment:
        'The database engines (src/db/mysql, src/db/sqlite, src/db/internal) are reached only through the transaction API of src/db (transaction.ts, held-writes.ts, invalidations.ts, connection.ts): nothing outside src/db imports them, not even a type (ADR 0034)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '^src/db/(mysql|sqlite|internal)/' },
    },
    {
      name: 'db-and-cache-below-events',
      comment:
        'src/db and src/cache take the event bus and invalidations through src/ports, never naming src/events, not even a type (ADR 0034)',
      severity: 'error',
      from: { path: '^src/(db|cache)/' },
      to: { path: '^src/events/' },
    },
    {
      name: 'knex-only-in-queries-and-db',
      comment: 'SQL lives in src/queries (and src/db): only they import knex',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(queries|db)/' },
      to: { path: '^node_modules/knex/', dependencyTypesNot: TYPES_ONLY },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, dependencyTypesNot: TYPES_ONLY, viaOnly: { dependencyTypesNot: TYPES_ONLY } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type imports are seen (the engine rules count them); the layer rules leave them out (TYPES_ONLY).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.test\\.ts$' },
  },
};
