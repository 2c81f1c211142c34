import type { Knex } from 'knex';

/**
 * Starred, mentioned and DM rows move from indexes over all of user_messages
 * to tables holding only the rows that have the flag (src/domain/sparse-flags.ts,
 * ADR 0014). On MariaDB the three indexes on virtual generated columns of
 * migration 001 put each of a send's rows into three more B-trees; on SQLite
 * they were already partial (migration 005) — both now read the same tables.
 *
 * The flags column keeps every bit: the side tables are an index of it, kept
 * by the code that writes flags (src/queries/sparse-flags.ts). A side row
 * references its user_messages row and goes with it (ON DELETE CASCADE), so
 * no path that drops user_messages rows (deletion, archiving, a move that
 * takes access away) can leave one behind.
 *
 * The data is copied per user in batches of BATCH rows through the old
 * indexes (so only flagged rows are read), before they are dropped. Fixed
 * here rather than taken from the domain: a migration must not change later.
 */
const FLAGS = [
  { table: 'user_message_starred', column: 'is_starred', expr: '(flags & 2) <> 0' },
  { table: 'user_message_mentioned', column: 'is_mentioned', expr: '(flags & 120) <> 0' },
  { table: 'user_message_dm', column: 'is_private', expr: '(flags & 2048) <> 0' },
];
const BATCH = 10_000;
/** Progress is printed for copies of at least this many rows (never in tests). */
const REPORT_FROM = 10_000;

const isMysql = (knex: Knex) => knex.client.config.client === 'mysql2';

/** `batch`: rows per statement of the copy (a test makes it small to cross batch boundaries). */
export async function up(knex: Knex, batch = BATCH): Promise<void> {
  for (const f of FLAGS) {
    await knex.schema.createTable(f.table, (t) => {
      t.integer('user_id').unsigned().notNullable();
      t.integer('message_id').unsigned().notNullable();
      // (user_id, message_id): a user's flagged messages in id order, the narrow's scan.
      t.primary(['user_id', 'message_id']);
      t.foreign(['user_id', 'message_id']).references(['user_id', 'message_id']).inTable('user_messages').onDelete('CASCADE');
    });
  }
  const userIds = (await knex('users').orderBy('id').pluck('id')).map(Number);
  for (const f of FLAGS) await copyFlag(knex, f, userIds, batch);
  if (isMysql(knex)) {
    // One ALTER: dropping the indexes and their virtual columns is metadata only.
    await knex.raw(
      `ALTER TABLE user_messages ${FLAGS.map((f) => `DROP INDEX user_messages_${f.column}, DROP COLUMN ${f.column}`).join(', ')}`,
    );
  } else {
    for (const f of FLAGS) {
      await knex.raw(`DROP INDEX user_messages_${f.column}`);
      await knex.raw(`ALTER TABLE user_messages DROP COLUMN ${f.column}`);
    }
  }
}

/** Copies one flag's rows, user by user, `batch` rows a statement, through the flag's index (literal `= 1`: SQLite's index is partial). */
async function copyFlag(knex: Knex, f: (typeof FLAGS)[number], userIds: number[], batch: number): Promise<void> {
  const [{ n }] = await knex('user_messages').whereRaw(`${f.column} = 1`).count({ n: '*' });
  const total = Number(n);
  if (total === 0) return;
  const report = total >= REPORT_FROM;
  let copied = 0;
  let lastReport = 0;
  for (const userId of userIds) {
    let after = 0;
    for (;;) {
      const rows: Array<{ user_id: number; message_id: number }> = await knex('user_messages')
        .where('user_id', userId)
        .whereRaw(`${f.column} = 1`)
        .where('message_id', '>', after)
        .orderBy('message_id')
        .limit(batch)
        .select('user_id', 'message_id');
      // 500 rows a statement: SQLite's limit on compound SELECT terms (knex's multi-row insert).
      for (let i = 0; i < rows.length; i += 500) await knex(f.table).insert(rows.slice(i, i + 500));
      copied += rows.length;
      if (rows.length < batch) break;
      after = Number(rows[rows.length - 1]!.message_id);
    }
    if (report && copied - lastReport >= REPORT_FROM) {
      lastReport = copied;
      process.stderr.write(`migration 022: ${f.table} ${copied} of ${total} rows\n`);
    }
  }
  if (report) process.stderr.write(`migration 022: ${f.table} ${copied} rows copied\n`);
}

export async function down(knex: Knex): Promise<void> {
  const mysql = isMysql(knex);
  for (const f of FLAGS) {
    if (mysql) await knex.raw(`ALTER TABLE user_messages ADD COLUMN ${f.column} TINYINT AS (${f.expr}) VIRTUAL`);
    else await knex.raw(`ALTER TABLE user_messages ADD COLUMN ${f.column} INTEGER GENERATED ALWAYS AS (${f.expr}) VIRTUAL`);
    // Migration 001's full index on MariaDB, 005's partial one on SQLite.
    if (mysql) await knex.raw(`CREATE INDEX user_messages_${f.column} ON user_messages (user_id, ${f.column}, message_id)`);
    else await knex.raw(`CREATE INDEX user_messages_${f.column} ON user_messages (user_id, message_id) WHERE ${f.column} = 1`);
    await knex.schema.dropTable(f.table);
  }
}
