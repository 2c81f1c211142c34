import type { Knex } from 'knex';

/**
 * The data model (docs/architecture/data-model.md). Portable across SQLite
 * and MySQL/MariaDB:
 * - times are integer UNIX seconds (drivers disagree on DATETIME types);
 * - every FK column is unsigned (MySQL refuses signed → unsigned FKs);
 * - no defaults on TEXT columns (knex drops them on MySQL); code sets them;
 * - case-insensitive uniqueness uses a lower-cased *_key column, because
 *   SQLite compares case-sensitively and MySQL's unicode_ci does not.
 * FKs that would form a cycle (realms ↔ user_groups, users ↔ recipients)
 * are plain indexed columns; the actions keep them consistent.
 */

const fk = (t: Knex.CreateTableBuilder, col: string, table: string, nullable = false, onDelete = 'CASCADE') => {
  const c = t.integer(col).unsigned();
  if (nullable) c.nullable();
  else c.notNullable();
  c.references('id').inTable(table).onDelete(onDelete);
  return c;
};

/** Realm-level group settings (Zulip's realm permission groups). */
export const REALM_GROUP_SETTINGS = [
  'can_access_all_users_group',
  'can_add_custom_emoji_group',
  'can_add_subscribers_group',
  'can_create_bots_group',
  'can_create_groups',
  'can_create_public_channel_group',
  'can_create_private_channel_group',
  'can_create_web_public_channel_group',
  'can_create_write_only_bots_group',
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'can_invite_users_group',
  'can_manage_all_groups',
  'can_manage_billing_group',
  'can_mention_many_users_group',
  'can_move_messages_between_channels_group',
  'can_move_messages_between_topics_group',
  'can_resolve_topics_group',
  'can_set_delete_message_policy_group',
  'can_set_topics_policy_group',
  'can_summarize_topics_group',
  'create_multiuse_invite_group',
  'direct_message_initiator_group',
  'direct_message_permission_group',
] as const;

/** Channel-level group settings. */
export const CHANNEL_GROUP_SETTINGS = [
  'can_add_subscribers_group',
  'can_administer_channel_group',
  'can_create_topic_group',
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'can_move_messages_out_of_channel_group',
  'can_move_messages_within_channel_group',
  'can_remove_subscribers_group',
  'can_resolve_topics_group',
  'can_send_message_group',
  'can_subscribe_group',
] as const;

/** User-group-level group settings. */
export const GROUP_GROUP_SETTINGS = [
  'can_add_members_group',
  'can_join_group',
  'can_leave_group',
  'can_manage_group',
  'can_mention_group',
  'can_remove_members_group',
] as const;

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';

  await knex.schema.createTable('realms', (t) => {
    t.increments('id').unsigned().primary();
    t.string('string_id', 40).notNullable().unique();
    t.string('name', 40).notNullable();
    t.text('description').notNullable();
    t.integer('date_created').notNullable();
    t.boolean('deactivated').notNullable().defaultTo(false);
    t.boolean('invite_required').notNullable().defaultTo(true);
    t.boolean('emails_restricted_to_domains').notNullable().defaultTo(false);
    t.boolean('disallow_disposable_email_addresses').notNullable().defaultTo(true);
    t.boolean('password_auth_enabled').notNullable().defaultTo(true);
    t.boolean('allow_message_editing').notNullable().defaultTo(true);
    t.integer('message_content_edit_limit_seconds').nullable();
    t.integer('message_content_delete_limit_seconds').nullable();
    t.integer('move_messages_within_stream_limit_seconds').nullable();
    t.integer('move_messages_between_streams_limit_seconds').nullable();
    t.string('message_edit_history_visibility_policy', 10).notNullable().defaultTo('all');
    t.string('topics_policy', 24).notNullable().defaultTo('allow_empty_topic');
    t.integer('moderation_request_channel_id').unsigned().nullable();
    t.integer('new_stream_announcements_stream_id').unsigned().nullable();
    t.integer('signup_announcements_stream_id').unsigned().nullable();
    t.integer('waiting_period_threshold').notNullable().defaultTo(0);
    t.boolean('enable_spectator_access').notNullable().defaultTo(false);
    t.string('default_language', 50).notNullable().defaultTo('en');
    t.integer('message_retention_days').nullable();
    t.integer('max_invites').nullable();
    for (const s of REALM_GROUP_SETTINGS) t.integer(s).unsigned().nullable();
  });

  await knex.schema.createTable('user_groups', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    // NULL name = anonymous group backing a {direct_members, direct_subgroups} value.
    t.string('name', 100).nullable();
    t.text('description').nullable();
    t.boolean('is_system_group').notNullable().defaultTo(false);
    t.integer('creator_id').unsigned().nullable();
    t.integer('date_created').nullable();
    t.boolean('deactivated').notNullable().defaultTo(false);
    for (const s of GROUP_GROUP_SETTINGS) t.integer(s).unsigned().nullable();
    t.unique(['realm_id', 'name']);
  });

  await knex.schema.createTable('users', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    t.string('email', 254).notNullable(); // API email
    t.string('delivery_email', 254).notNullable();
    t.string('email_key', 254).notNullable(); // lower-cased delivery_email, for uniqueness
    t.string('full_name', 100).notNullable();
    t.smallint('role').unsigned().notNullable().defaultTo(400);
    t.boolean('is_bot').notNullable().defaultTo(false);
    t.smallint('bot_type').nullable();
    t.integer('bot_owner_id').unsigned().nullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.boolean('is_imported_stub').notNullable().defaultTo(false);
    t.boolean('is_mirror_dummy').notNullable().defaultTo(false);
    t.string('api_key', 32).notNullable();
    t.string('password_hash', 255).nullable();
    t.boolean('can_create_users').notNullable().defaultTo(false);
    t.boolean('can_change_user_emails').notNullable().defaultTo(false);
    t.string('timezone', 40).notNullable().defaultTo('');
    t.string('avatar_source', 1).notNullable().defaultTo('G');
    t.integer('avatar_version').notNullable().defaultTo(1);
    t.integer('date_joined').notNullable();
    t.integer('last_active_time').nullable();
    t.boolean('long_term_idle').notNullable().defaultTo(false);
    // The user's personal recipient (1:1 DMs); set right after insert.
    t.integer('recipient_id').unsigned().nullable();
    // Personal settings as JSON text (see docs/adr/0003); no default on TEXT.
    t.text('settings').notNullable();
    t.unique(['realm_id', 'email_key']);
    t.index(['realm_id', 'email']);
    t.index(['email_key']); // login: one lookup across organizations
  });

  await knex.schema.createTable('realm_user_defaults', (t) => {
    t.integer('realm_id').unsigned().primary().references('id').inTable('realms').onDelete('CASCADE');
    t.text('settings').notNullable();
  });

  await knex.schema.createTable('group_members', (t) => {
    fk(t, 'group_id', 'user_groups');
    fk(t, 'user_id', 'users');
    t.primary(['group_id', 'user_id']);
    t.index(['user_id']);
  });

  await knex.schema.createTable('group_subgroups', (t) => {
    fk(t, 'supergroup_id', 'user_groups');
    fk(t, 'subgroup_id', 'user_groups');
    t.primary(['supergroup_id', 'subgroup_id']);
    t.index(['subgroup_id']);
  });

  // type: 1 personal (type_id = user), 2 channel (type_id = channel), 3 DM group (type_id = dm_groups.id)
  await knex.schema.createTable('recipients', (t) => {
    t.increments('id').unsigned().primary();
    t.smallint('type').notNullable();
    t.integer('type_id').unsigned().notNullable();
    t.unique(['type', 'type_id']);
  });

  await knex.schema.createTable('dm_groups', (t) => {
    t.increments('id').unsigned().primary();
    t.string('huddle_hash', 64).notNullable().unique();
    t.integer('group_size').notNullable();
    t.integer('recipient_id').unsigned().nullable();
  });

  await knex.schema.createTable('channel_folders', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    t.string('name', 60).notNullable();
    t.text('description').notNullable();
    t.text('rendered_description').notNullable();
    t.integer('order').notNullable().defaultTo(0);
    t.integer('creator_id').unsigned().nullable();
    t.integer('date_created').notNullable();
    t.boolean('is_archived').notNullable().defaultTo(false);
  });

  await knex.schema.createTable('channels', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    t.string('name', 60).notNullable();
    t.string('name_key', 60).notNullable(); // lower-cased name: channel names are unique case-insensitively
    t.text('description').notNullable();
    t.text('rendered_description').notNullable();
    t.boolean('invite_only').notNullable().defaultTo(false);
    t.boolean('is_web_public').notNullable().defaultTo(false);
    t.boolean('history_public_to_subscribers').notNullable().defaultTo(true);
    t.boolean('is_default').notNullable().defaultTo(false);
    t.integer('message_retention_days').nullable();
    t.boolean('deactivated').notNullable().defaultTo(false);
    t.integer('first_message_id').unsigned().nullable();
    t.integer('creator_id').unsigned().nullable();
    t.integer('date_created').notNullable();
    fk(t, 'recipient_id', 'recipients', true, 'SET NULL');
    t.string('topics_policy', 24).notNullable().defaultTo('inherit');
    fk(t, 'folder_id', 'channel_folders', true, 'SET NULL');
    t.boolean('is_recently_active').notNullable().defaultTo(true);
    t.integer('subscriber_count').notNullable().defaultTo(0);
    for (const s of CHANNEL_GROUP_SETTINGS) fk(t, s, 'user_groups', true, 'SET NULL');
    t.unique(['realm_id', 'name_key']);
  });

  await knex.schema.createTable('subscriptions', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'user_id', 'users');
    fk(t, 'recipient_id', 'recipients');
    t.boolean('active').notNullable().defaultTo(true); // cleared on unsubscribe; settings survive
    t.boolean('is_user_active').notNullable().defaultTo(true);
    t.boolean('is_muted').notNullable().defaultTo(false);
    t.string('color', 10).notNullable().defaultTo('#c2c2c2');
    t.boolean('pin_to_top').notNullable().defaultTo(false);
    // NULL = inherit the user's setting.
    t.boolean('desktop_notifications').nullable();
    t.boolean('audible_notifications').nullable();
    t.boolean('push_notifications').nullable();
    t.boolean('email_notifications').nullable();
    t.boolean('wildcard_mentions_notify').nullable();
    t.unique(['user_id', 'recipient_id']);
    t.index(['recipient_id', 'active']);
  });

  await knex.schema.createTable('messages', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    fk(t, 'sender_id', 'users');
    fk(t, 'recipient_id', 'recipients');
    t.smallint('type').notNullable().defaultTo(1); // 1 normal, 2 resolve-topic notification
    t.string('topic', 60).notNullable().defaultTo('');
    t.string('topic_key', 60).notNullable().defaultTo(''); // lower-cased topic: topic narrows are case-insensitive
    t.text('content', 'mediumtext').notNullable();
    t.text('rendered_content', 'mediumtext').nullable();
    t.integer('rendered_content_version').nullable();
    t.integer('date_sent').notNullable();
    t.string('sending_client', 30).notNullable().defaultTo('API');
    t.integer('last_edit_time').nullable();
    t.integer('last_moved_time').nullable();
    t.boolean('is_me_message').notNullable().defaultTo(false);
    t.boolean('has_attachment').notNullable().defaultTo(false);
    t.boolean('has_image').notNullable().defaultTo(false);
    t.boolean('has_link').notNullable().defaultTo(false);
    // Channel + topic narrows and topic moves; and the channel feed.
    t.index(['recipient_id', 'topic_key', 'id'], 'messages_recipient_topic_id');
    t.index(['recipient_id', 'id'], 'messages_recipient_id');
    t.index(['sender_id', 'id'], 'messages_sender_id');
    t.index(['realm_id', 'date_sent'], 'messages_realm_date');
  });

  // flags is Zulip's bitfield (bit positions in src/domain/flags.ts).
  await knex.schema.createTable('user_messages', (t) => {
    t.bigIncrements('id').unsigned().primary();
    fk(t, 'user_id', 'users');
    fk(t, 'message_id', 'messages');
    t.bigInteger('flags').notNullable().defaultTo(0);
    t.unique(['user_id', 'message_id']);
    t.index(['message_id']);
  });
  // MySQL has no partial indexes, so "unread", "starred" and "mentioned" are
  // virtual generated columns with indexes (SQLite supports the same syntax).
  // Lookups such as first_unread are then index range scans on both databases.
  const genCols: Array<[string, string]> = [
    ['is_unread', '(flags & 1) = 0'],
    ['is_starred', '(flags & 2) <> 0'],
    ['is_mentioned', '(flags & 120) <> 0'], // mentioned | stream_wildcard | topic_wildcard | group_mentioned
    ['is_private', '(flags & 2048) <> 0'],
  ];
  for (const [col, expr] of genCols) {
    if (mysql) {
      await knex.raw(`ALTER TABLE user_messages ADD COLUMN ${col} TINYINT AS (${expr}) VIRTUAL`);
    } else {
      await knex.raw(`ALTER TABLE user_messages ADD COLUMN ${col} INTEGER GENERATED ALWAYS AS (${expr}) VIRTUAL`);
    }
    await knex.raw(`CREATE INDEX user_messages_${col} ON user_messages (user_id, ${col}, message_id)`);
  }

  await knex.schema.createTable('message_edits', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'message_id', 'messages');
    t.integer('user_id').unsigned().nullable();
    t.integer('timestamp').notNullable();
    t.text('prev_content', 'mediumtext').nullable();
    t.text('prev_rendered_content', 'mediumtext').nullable();
    t.string('prev_topic', 60).nullable();
    t.string('topic', 60).nullable();
    t.integer('prev_stream').unsigned().nullable();
    t.integer('stream').unsigned().nullable();
    t.index(['message_id', 'id']);
  });

  await knex.schema.createTable('realm_emoji', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    t.string('name', 60).notNullable();
    t.string('file_name', 255).nullable();
    t.integer('author_id').unsigned().nullable();
    t.boolean('deactivated').notNullable().defaultTo(false);
    t.index(['realm_id', 'name']);
  });

  await knex.schema.createTable('reactions', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'message_id', 'messages');
    fk(t, 'user_id', 'users');
    t.string('emoji_name', 60).notNullable();
    t.string('emoji_code', 60).notNullable();
    t.string('reaction_type', 30).notNullable();
    // emoji_name is not part of the key: the same emoji under two names is one reaction.
    t.unique(['message_id', 'user_id', 'reaction_type', 'emoji_code']);
  });

  await knex.schema.createTable('attachments', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    fk(t, 'owner_id', 'users');
    t.string('file_name', 255).notNullable();
    t.string('path_id', 255).notNullable().unique();
    t.bigInteger('size').notNullable();
    t.string('content_type', 255).nullable();
    t.integer('create_time').notNullable();
    t.boolean('is_realm_public').notNullable().defaultTo(false);
    t.boolean('is_web_public').notNullable().defaultTo(false);
    t.index(['owner_id']);
  });

  await knex.schema.createTable('attachment_messages', (t) => {
    fk(t, 'attachment_id', 'attachments');
    fk(t, 'message_id', 'messages');
    t.primary(['attachment_id', 'message_id']);
    t.index(['message_id']);
  });

  // Deleted messages are moved here, not dropped, so a deletion can be undone.
  await knex.schema.createTable('archived_messages', (t) => {
    t.integer('id').unsigned().primary(); // the original message id
    t.integer('realm_id').unsigned().notNullable();
    t.integer('sender_id').unsigned().notNullable();
    t.integer('recipient_id').unsigned().notNullable();
    t.smallint('type').notNullable();
    t.string('topic', 60).notNullable();
    t.text('content', 'mediumtext').notNullable();
    t.text('rendered_content', 'mediumtext').nullable();
    t.integer('date_sent').notNullable();
    t.string('sending_client', 30).notNullable();
    t.integer('archived_at').notNullable();
    t.smallint('archive_type').notNullable(); // 1 retention policy, 2 manual
    t.text('user_messages').notNullable(); // JSON [[user_id, flags], ...]
  });

  await knex.schema.createTable('saved_snippets', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    fk(t, 'user_id', 'users');
    t.string('title', 60).notNullable();
    t.text('content').notNullable();
    t.integer('date_created').notNullable();
    t.index(['user_id', 'id']);
  });

  await knex.schema.createTable('multiuse_invites', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    fk(t, 'referred_by_id', 'users');
    t.string('link_key', 40).notNullable().unique();
    t.smallint('invited_as').notNullable().defaultTo(400);
    t.integer('date_created').notNullable();
    t.integer('expires_at').nullable(); // NULL = never expires
    t.boolean('include_realm_default_subscriptions').notNullable().defaultTo(false);
    t.text('welcome_message_custom_text').nullable();
    t.boolean('revoked').notNullable().defaultTo(false);
    t.integer('max_uses').nullable();
    t.integer('use_count').notNullable().defaultTo(0);
  });

  await knex.schema.createTable('multiuse_invite_channels', (t) => {
    fk(t, 'invite_id', 'multiuse_invites');
    fk(t, 'channel_id', 'channels');
    t.primary(['invite_id', 'channel_id']);
  });

  await knex.schema.createTable('multiuse_invite_groups', (t) => {
    fk(t, 'invite_id', 'multiuse_invites');
    fk(t, 'group_id', 'user_groups');
    t.primary(['invite_id', 'group_id']);
  });

  // E2EE push registrations (POST /mobile_push/register).
  await knex.schema.createTable('push_devices', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'user_id', 'users');
    t.bigInteger('device_id').notNullable();
    t.bigInteger('push_key_id').nullable();
    t.text('push_key').nullable();
    t.string('token_kind', 10).nullable();
    t.string('token_id', 64).nullable();
    t.text('bouncer_public_key').nullable();
    t.text('encrypted_push_registration').nullable();
    t.integer('date_created').notNullable();
    t.unique(['user_id', 'device_id']);
  });

  // Legacy (pre-E2EE) APNs/FCM tokens.
  await knex.schema.createTable('push_tokens', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'user_id', 'users');
    t.string('kind', 10).notNullable();
    t.string('token', 255).notNullable();
    t.string('ios_app_id', 255).nullable();
    t.integer('date_created').notNullable();
    t.unique(['user_id', 'kind', 'token']);
  });

  await knex.schema.createTable('custom_profile_fields', (t) => {
    t.increments('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    t.string('name', 40).notNullable();
    t.string('hint', 80).notNullable().defaultTo('');
    t.smallint('field_type').notNullable(); // Zulip's field type codes
    t.text('field_data').notNullable();
    t.integer('order').notNullable().defaultTo(0);
    t.boolean('display_in_profile_summary').notNullable().defaultTo(false);
    t.boolean('required').notNullable().defaultTo(false);
    t.boolean('editable_by_user').notNullable().defaultTo(true);
  });

  await knex.schema.createTable('custom_profile_values', (t) => {
    fk(t, 'user_id', 'users');
    fk(t, 'field_id', 'custom_profile_fields');
    t.text('value').notNullable();
    t.text('rendered_value').nullable();
    t.primary(['user_id', 'field_id']);
  });

  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id').unsigned().primary();
    fk(t, 'realm_id', 'realms');
    t.integer('acting_user_id').unsigned().nullable();
    t.integer('modified_user_id').unsigned().nullable();
    t.integer('modified_channel_id').unsigned().nullable();
    t.integer('modified_group_id').unsigned().nullable();
    t.smallint('event_type').notNullable();
    t.integer('event_time').notNullable();
    t.text('extra_data').nullable();
    t.index(['realm_id', 'event_time']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'audit_log',
    'custom_profile_values',
    'custom_profile_fields',
    'push_tokens',
    'push_devices',
    'multiuse_invite_groups',
    'multiuse_invite_channels',
    'multiuse_invites',
    'saved_snippets',
    'archived_messages',
    'attachment_messages',
    'attachments',
    'reactions',
    'realm_emoji',
    'message_edits',
    'user_messages',
    'messages',
    'subscriptions',
    'channels',
    'channel_folders',
    'dm_groups',
    'recipients',
    'group_subgroups',
    'group_members',
    'realm_user_defaults',
    'users',
    'user_groups',
    'realms',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
