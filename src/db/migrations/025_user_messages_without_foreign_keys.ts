import type { Knex } from 'knex';

/**
 * MariaDB: user_messages loses its two foreign keys (to messages and to
 * users). docs/adr/0020-user-messages-without-foreign-keys.md has the
 * measurements and what keeps the rows consistent without them.
 *
 * A send to a channel inserts a row per subscriber, and InnoDB checks each
 * row's two parents: two index lookups, and a shared lock on the parent
 * rows held until COMMIT, per row. That was a fifth of the database's time
 * per send. Nothing relies on the cascade: the one action that deletes
 * messages (archiveMessages) deletes their user_messages rows first, in the
 * same transaction, and users are deactivated, never deleted.
 *
 * Dropping a foreign key changes only the table's metadata (no copy). The
 * sparse flag tables keep theirs, which point at user_messages.
 *
 * SQLite keeps them: there a check is an in-process lookup, and changing a
 * table's constraints means copying the table.
 */
const isMysql = (knex: Knex) => knex.client.config.client === 'mysql2';

export async function up(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  await knex.raw(
    'ALTER TABLE user_messages DROP FOREIGN KEY user_messages_message_id_foreign, DROP FOREIGN KEY user_messages_user_id_foreign',
  );
}

export async function down(knex: Knex): Promise<void> {
  if (!isMysql(knex)) return;
  await knex.raw(
    'ALTER TABLE user_messages ' +
      'ADD CONSTRAINT user_messages_message_id_foreign FOREIGN KEY (message_id) REFERENCES messages (id) ON DELETE CASCADE, ' +
      'ADD CONSTRAINT user_messages_user_id_foreign FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE',
  );
}
