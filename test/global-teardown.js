// Removes the template databases this run made (test/support/template-databases.ts):
// the SQLite files under the run's directory, and the MySQL databases named after the run;
// and prunes the modules test/support/register-ts.js compiled long ago.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
module.exports = async () => {
  const run = process.env.PARLEY_TEST_RUN;
  if (!run) return;
  fs.rmSync(path.join(os.tmpdir(), `parley-test-templates-${run}`), { recursive: true, force: true });
  pruneCompiled();
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

/**
 * test/support/register-ts.js keeps compiled modules by the hash of their source: every
 * edit adds some. Those written more than two days ago go (one still in use is compiled
 * again once).
 */
function pruneCompiled() {
  const dir = path.join(os.tmpdir(), 'parley-register-ts-cache');
  const old = Date.now() - 2 * 24 * 3600 * 1000;
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      if (fs.statSync(file).mtimeMs < old) fs.rmSync(file, { force: true });
    } catch {
      // Removed by another run's teardown meanwhile.
    }
  }
}
