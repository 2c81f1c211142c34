'use strict';
/*
 * GET /health: healthy as the server runs; 503 while the record of the newest
 * migration is taken out of the server's database (as if this version had
 * been started on a database one migration behind), put back right after.
 */
const path = require('node:path');
const { refusal } = require('./core');
const { runSql } = require('./database');
const { MIGRATION_NAMES } = require(path.join(__dirname, '..', '..', 'dist', 'src', 'db', 'migrate.js'));

const NEWEST = MIGRATION_NAMES[MIGRATION_NAMES.length - 1];

const migrationsPending = refusal(
  'SERVER_NOT_READY',
  'Database migrations are pending',
  async (req) => {
    req.user = null;
    await runSql('DELETE FROM knex_migrations WHERE name = ?', [NEWEST]);
  },
  { status: 'failed' },
);
migrationsPending.after = () =>
  runSql('INSERT INTO knex_migrations (name, batch, migration_time) SELECT ?, MAX(batch), CURRENT_TIMESTAMP FROM knex_migrations', [
    NEWEST,
  ]);

const scenarios = {
  'get-health': {
    200: (req) => {
      req.user = null;
    },
    503: migrationsPending,
  },
};

module.exports = { scenarios };
