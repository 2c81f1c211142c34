// Removes the template databases this run's workers made (test/support/template-databases.ts):
// the SQLite files under the run's directory, and the MySQL databases named after the run.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
module.exports = async () => {
  const run = process.env.PARLEY_TEST_RUN;
  if (!run) return;
  fs.rmSync(path.join(os.tmpdir(), `parley-test-templates-${run}`), { recursive: true, force: true });
  const url = process.env.TEST_MYSQL_URL && process.env.TEST_MYSQL_URL.trim();
  if (!url) return;
  const mysql = require('mysql2/promise');
  const u = new URL(url);
  const socketPath = u.searchParams.get('socket');
  const conn = await mysql.createConnection({
    ...(socketPath ? { socketPath } : { host: u.hostname, port: Number(u.port || 3306) }),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  });
  try {
    const [rows] = await conn.query('SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name LIKE ?', [
      `parley\\_tpl\\_${run}\\_%`,
    ]);
    for (const { name } of rows) await conn.query(`DROP DATABASE \`${name}\``);
  } finally {
    await conn.end();
  }
};
