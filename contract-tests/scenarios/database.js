'use strict';
/*
 * Direct access to the dredd server's database (contract-tests/run.sh exports
 * where it is), for the few scenarios that need an organization or channel
 * setting no endpoint changes yet: a fixture, as in the jest tests.
 */
const path = require('node:path');

/*
 * A row changed behind the server's back may sit in its caches (src/cache/):
 * like an operator after hand-edited SQL (`cli cache flush`), every statement
 * is followed by a flush the server reads from cache_invalidations within
 * CACHE_POLL_MS (250 ms by default); the wait covers a few of its polls.
 */
const FLUSH = ['INSERT INTO cache_invalidations (created_at, payload) VALUES (?, ?)', [0, JSON.stringify({ kind: 'all' })]];
const FLUSH_WAIT_MS = 1000;

/** Runs one statement (`?` placeholders) against the server's database, then flushes the server's caches. */
async function runSql(sql, params = []) {
  const flush = [FLUSH[0], [Math.floor(Date.now() / 1000), FLUSH[1][1]]];
  const url = process.env.DREDD_DATABASE_URL;
  if (url) {
    const mysql = require('mysql2/promise');
    const connection = await mysql.createConnection(url);
    try {
      await connection.execute(sql, params);
      await connection.execute(...flush);
    } finally {
      await connection.end();
    }
  } else {
    const dir = process.env.DREDD_DATA_DIR;
    if (!dir) throw new Error('DREDD_DATA_DIR is not set: run dredd through contract-tests/run.sh');
    const Database = require('@rocicorp/zero-sqlite3');
    const db = new Database(path.join(dir, 'parley.sqlite3'));
    try {
      db.pragma('busy_timeout = 5000');
      db.prepare(sql).run(...params);
      db.prepare(flush[0]).run(...flush[1]);
    } finally {
      db.close();
    }
  }
  await new Promise((resolve) => setTimeout(resolve, FLUSH_WAIT_MS));
}

/** The scenarios file loader (index.js) reads every file here: this one holds no scenarios. */
module.exports = { scenarios: {}, runSql };
