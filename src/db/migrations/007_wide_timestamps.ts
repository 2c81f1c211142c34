import type { Knex } from 'knex';

/**
 * Every time is stored as UNIX seconds. Migration 001 made those columns
 * INT, which on MariaDB ends on 2038-01-19 (the year-2038 problem): an
 * invitation expiring in 2040 could not be stored. They become BIGINT.
 * SQLite's INTEGER already holds 64 bits, so there is nothing to change there.
 * One ALTER per table, so each table is rebuilt once.
 */
const TIME_COLUMNS: Record<string, Array<[column: string, nullable: boolean]>> = {
  realms: [['date_created', false]],
  user_groups: [['date_created', true]],
  users: [
    ['date_joined', false],
    ['last_active_time', true],
  ],
  channel_folders: [['date_created', false]],
  channels: [['date_created', false]],
  messages: [
    ['date_sent', false],
    ['last_edit_time', true],
    ['last_moved_time', true],
  ],
  message_edits: [['timestamp', false]],
  attachments: [['create_time', false]],
  archived_messages: [
    ['date_sent', false],
    ['archived_at', false],
  ],
  saved_snippets: [['date_created', false]],
  multiuse_invites: [
    ['date_created', false],
    ['expires_at', true],
  ],
  push_devices: [['date_created', false]],
  push_tokens: [['date_created', false]],
  audit_log: [['event_time', false]],
};

async function retype(knex: Knex, type: 'BIGINT' | 'INT'): Promise<void> {
  if (knex.client.config.client !== 'mysql2') return;
  for (const [table, columns] of Object.entries(TIME_COLUMNS)) {
    const changes = columns.map(([c, nullable]) => `MODIFY \`${c}\` ${type} ${nullable ? 'NULL' : 'NOT NULL'}`).join(', ');
    await knex.raw(`ALTER TABLE \`${table}\` ${changes}`);
  }
}

export async function up(knex: Knex): Promise<void> {
  await retype(knex, 'BIGINT');
}

export async function down(knex: Knex): Promise<void> {
  await retype(knex, 'INT');
}
