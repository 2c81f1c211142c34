import type { Knex } from 'knex';

/**
 * Deleting a message moves it to the archive (src/queries/archive.ts), and
 * an archived message must be restorable as it was: archived_messages (001)
 * kept the text and the recipients' flags but not the edit and move times or
 * the has_* markers, and nothing kept the message's reactions, edit history
 * or links to uploaded files. These are added here, with the same columns as
 * the live tables and no foreign key to `messages` (the rows outlive it).
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  // Times are 64-bit (migration 007): BIGINT on MariaDB; SQLite's INTEGER already is.
  const time = (t: Knex.CreateTableBuilder | Knex.AlterTableBuilder, name: string) => (mysql ? t.bigInteger(name) : t.integer(name));

  await knex.schema.alterTable('archived_messages', (t) => {
    time(t, 'last_edit_time').nullable();
    time(t, 'last_moved_time').nullable();
    t.integer('rendered_content_version').nullable();
    t.boolean('is_me_message').notNullable().defaultTo(false);
    t.boolean('has_attachment').notNullable().defaultTo(false);
    t.boolean('has_image').notNullable().defaultTo(false);
    t.boolean('has_link').notNullable().defaultTo(false);
  });

  await knex.schema.createTable('archived_reactions', (t) => {
    t.integer('id').unsigned().primary(); // the original reaction id
    t.integer('message_id').unsigned().notNullable().index();
    t.integer('user_id').unsigned().notNullable();
    t.string('emoji_name', 60).notNullable();
    t.string('emoji_code', 60).notNullable();
    t.string('reaction_type', 30).notNullable();
  });

  await knex.schema.createTable('archived_message_edits', (t) => {
    t.integer('id').unsigned().primary(); // the original edit id
    t.integer('message_id').unsigned().notNullable();
    t.integer('user_id').unsigned().nullable();
    time(t, 'timestamp').notNullable();
    t.text('prev_content', 'mediumtext').nullable();
    t.text('prev_rendered_content', 'mediumtext').nullable();
    t.string('prev_topic', 60).nullable();
    t.string('topic', 60).nullable();
    t.integer('prev_stream').unsigned().nullable();
    t.integer('stream').unsigned().nullable();
    t.index(['message_id', 'id']);
  });

  // The upload itself stays in `attachments`: deleting a message only unlinks it (its owner deletes the file).
  await knex.schema.createTable('archived_attachment_messages', (t) => {
    t.integer('attachment_id').unsigned().notNullable();
    t.integer('message_id').unsigned().notNullable();
    t.primary(['attachment_id', 'message_id']);
    t.index(['message_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('archived_attachment_messages');
  await knex.schema.dropTable('archived_message_edits');
  await knex.schema.dropTable('archived_reactions');
  await knex.schema.alterTable('archived_messages', (t) => {
    for (const c of [
      'last_edit_time',
      'last_moved_time',
      'rendered_content_version',
      'is_me_message',
      'has_attachment',
      'has_image',
      'has_link',
    ])
      t.dropColumn(c);
  });
}
