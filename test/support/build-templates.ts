/**
 * Builds a jest run's template databases (test/support/template-databases.ts)
 * before its workers start: test/global-setup.js runs this file as
 * `node -r test/support/register-ts.js test/support/build-templates.ts`, with
 * PARLEY_TEST_RUN set. The SQLite template always; the MariaDB one when
 * TEST_MYSQL_URL is set; and the hash of the test cast's password. Each appears whole or not at all (built aside, then
 * renamed): a worker that finds none builds its own.
 */
import fs from 'node:fs';
import path from 'node:path';
import { hashPassword } from '../../src/domain/secrets';
import { CAST_PASSWORD } from './cast-password';
import { makeMysqlTemplate, makeSqliteTemplate, mysqlTemplatePrefix, runTemplateFiles } from './template-databases';

async function main(): Promise<void> {
  const run = process.env.PARLEY_TEST_RUN;
  if (!run) throw new Error('PARLEY_TEST_RUN is not set (test/global-setup.js sets it)');
  const files = runTemplateFiles(run);
  const sqliteDir = path.dirname(files.sqlite);
  const building = `${sqliteDir}.building`;
  await makeSqliteTemplate(building);
  fs.rmSync(sqliteDir, { recursive: true, force: true });
  fs.renameSync(building, sqliteDir);

  // The test cast's password hash (test/support/server.ts): scrypt at its production cost, once.
  fs.writeFileSync(`${files.castPasswordHash}.building`, await hashPassword(CAST_PASSWORD));
  fs.renameSync(`${files.castPasswordHash}.building`, files.castPasswordHash);

  const url = process.env.TEST_MYSQL_URL?.trim();
  if (url) {
    const script = await makeMysqlTemplate(url, `${mysqlTemplatePrefix(run)}run`);
    fs.writeFileSync(`${files.mysqlScript}.building`, script);
    fs.renameSync(`${files.mysqlScript}.building`, files.mysqlScript);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
