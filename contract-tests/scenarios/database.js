'use strict';
/*
 * Direct access to the dredd server's database (contract-tests/run.sh exports
 * where it is), for the few scenarios that need an organization or channel
 * setting no endpoint changes yet: a fixture, as in the jest tests.
 */
const path = require('node:path');

/** Runs one statement (`?` placeholders) against the server's database. */
async function runSql(sql, params = []) {
  const url = process.env.DREDD_DATABASE_URL;
  if (url) {
    const mysql = require('mysql2/promise');
    const connection = await mysql.createConnection(url);
    try {
      await connection.execute(sql, params);
    } finally {
      await connection.end();
    }
    return;
  }
  const dir = process.env.DREDD_DATA_DIR;
  if (!dir) throw new Error('DREDD_DATA_DIR is not set: run dredd through contract-tests/run.sh');
  const Database = require('better-sqlite3');
  const db = new Database(path.join(dir, 'parley.sqlite3'));
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

/** The scenarios file loader (index.js) reads every file here: this one holds no scenarios. */
module.exports = { scenarios: {}, runSql };
