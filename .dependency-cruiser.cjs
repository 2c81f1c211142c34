/**
 * The layers of docs/ARCHITECTURE.md, enforced (`make lint`, part of `make test`).
 * Each folder of src/ may import only the folders listed for it; type-only
 * imports are erased before the check (tsPreCompilationDeps: false), so any
 * layer may name a row or wire type. knex is imported only by queries/ and db/.
 */
const LAYERS = {
  domain: ['domain', 'errors'],
  db: ['db', 'domain', 'errors', 'config'],
  queries: ['queries', 'db', 'domain', 'errors'],
  markdown: ['markdown', 'domain', 'errors'],
  serializers: ['serializers', 'domain', 'errors'],
  access: ['access', 'queries', 'serializers', 'markdown', 'domain', 'errors'],
  events: ['events', 'access', 'queries', 'serializers', 'domain', 'errors'],
  storage: ['storage', 'domain', 'errors'],
  actions: ['actions', 'access', 'events', 'queries', 'serializers', 'markdown', 'db', 'domain', 'errors', 'config', 'storage', 'cache'],
  handlers: ['handlers', 'actions', 'access', 'events', 'serializers', 'markdown', 'domain', 'errors', 'http/handler'],
  http: ['http', 'handlers', 'access', 'queries', 'domain', 'errors', 'storage', 'cache'],
  cache: ['cache', 'queries', 'db', 'domain', 'errors'],
  cli: ['cli', 'actions', 'access', 'queries', 'db', 'domain', 'errors', 'config', 'context', 'server', 'cache'],
};

const alternatives = (names) => names.map((n) => (n.includes('/') ? `${n}\\.ts` : `${n}(/|\\.ts)`)).join('|');

module.exports = {
  forbidden: [
    ...Object.entries(LAYERS).map(([layer, allowed]) => ({
      name: `layer-${layer}`,
      comment: `src/${layer}/ may import only: ${allowed.join(', ')}`,
      severity: 'error',
      from: { path: `^src/${layer}/` },
      to: { path: '^src/', pathNot: `^src/(${alternatives(allowed)})` },
    })),
    {
      name: 'knex-only-in-queries-and-db',
      comment: 'SQL lives in src/queries (and src/db): only they import knex',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(queries|db)/' },
      to: { path: '^node_modules/knex/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.test\\.ts$' },
  },
};
