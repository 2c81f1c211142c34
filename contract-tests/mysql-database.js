#!/usr/bin/env node
// A database of its own for a dredd run on MariaDB, on TEST_MYSQL_URL's server:
//   node contract-tests/mysql-database.js create NAME   → prints its DATABASE_URL
//   node contract-tests/mysql-database.js drop NAME
'use strict';
const mysql = require('mysql2/promise');

async function main() {
  const [action, name] = process.argv.slice(2);
  if (!['create', 'drop'].includes(action) || !/^parley_\w+$/.test(name || '')) {
    throw new Error('usage: mysql-database.js create|drop parley_NAME');
  }
  const base = new URL(process.env.TEST_MYSQL_URL || '');
  const connection = await mysql.createConnection({
    host: base.hostname,
    port: Number(base.port || 3306),
    user: decodeURIComponent(base.username),
    password: decodeURIComponent(base.password),
  });
  try {
    if (action === 'create') {
      await connection.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
      const url = new URL(base.toString());
      url.pathname = `/${name}`;
      process.stdout.write(`${url}\n`);
    } else {
      await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
    }
  } finally {
    await connection.end();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
