import type { Knex } from 'knex';
import * as m001 from './migrations/001_initial';
import * as m002 from './migrations/002_message_search';
import * as m003 from './migrations/003_exact_keys';
import * as m004 from './migrations/004_api_key_index';
import * as m005 from './migrations/005_sqlite_indexes';
import * as m006 from './migrations/006_audit_log';
import * as m007 from './migrations/007_wide_timestamps';
import * as m009 from './migrations/009_archive_details';
import * as m010 from './migrations/010_edit_history_marker';
import * as m011 from './migrations/011_push_token_length';
import * as m012 from './migrations/012_push_relay_device';
import * as m014 from './migrations/014_rate_limits';
import * as m015 from './migrations/015_presence_and_status';
import * as m016 from './migrations/016_user_topics';
import * as m017 from './migrations/017_submessages';
import * as m018 from './migrations/018_avatars';
import * as m019 from './migrations/019_custom_emoji';
import * as m020 from './migrations/020_alert_words';
import * as m021 from './migrations/021_search_terms';
import * as m022 from './migrations/022_sparse_flags';
import * as m023 from './migrations/023_cache_invalidations';
import * as m024 from './migrations/024_user_messages_key';
import * as m025 from './migrations/025_user_messages_without_foreign_keys';
import * as m026 from './migrations/026_unread_horizons';
import * as m027 from './migrations/027_client_devices';
import * as m028 from './migrations/028_first_login';
import * as m029 from './migrations/029_upload_quota';
import * as m030 from './migrations/030_retention';
import * as m031 from './migrations/031_realm_domains';
import * as m032 from './migrations/032_realm_icon_logo';
import * as m033 from './migrations/033_linkifiers_playgrounds';
import * as m034 from './migrations/034_linkifier_reverse';
import * as m035 from './migrations/035_profile_field_user_matching';
import * as m036 from './migrations/036_drafts';
import * as m037 from './migrations/037_scheduled_messages';
import * as m038 from './migrations/038_muted_users';
import * as m039 from './migrations/039_active_push_notifications';
import * as m040 from './migrations/040_bots';
import * as m041 from './migrations/041_outgoing_emails';
import * as m042 from './migrations/042_email_invites';
import * as m043 from './migrations/043_password_reset_tokens';
import * as m044 from './migrations/044_missed_message_emails';
import * as m045 from './migrations/045_email_gateway';
import * as m046 from './migrations/046_sessions';
import * as m047 from './migrations/047_channel_topics';
import * as m048 from './migrations/048_soft_deactivation';
import * as m049 from './migrations/049_message_receivers';

/**
 * Migrations are TypeScript modules listed here, so the same list runs from
 * dist/ in production and from source under jest (no knex CLI, no ts-node).
 */
const MIGRATIONS: Record<string, { up(k: Knex): Promise<void>; down(k: Knex): Promise<void> }> = {
  '001_initial': m001,
  '002_message_search': m002,
  '003_exact_keys': m003,
  '004_api_key_index': m004,
  '005_sqlite_indexes': m005,
  '006_audit_log': m006,
  '007_wide_timestamps': m007,
  '009_archive_details': m009,
  '010_edit_history_marker': m010,
  '011_push_token_length': m011,
  '012_push_relay_device': m012,
  '014_rate_limits': m014,
  '015_presence_and_status': m015,
  '016_user_topics': m016,
  '017_submessages': m017,
  '018_avatars': m018,
  '019_custom_emoji': m019,
  '020_alert_words': m020,
  '021_search_terms': m021,
  '022_sparse_flags': m022,
  '023_cache_invalidations': m023,
  '024_user_messages_key': m024,
  '025_user_messages_without_foreign_keys': m025,
  '026_unread_horizons': m026,
  '027_client_devices': m027,
  '028_first_login': m028,
  '029_upload_quota': m029,
  '030_retention': m030,
  '031_realm_domains': m031,
  '032_realm_icon_logo': m032,
  '033_linkifiers_playgrounds': m033,
  '034_linkifier_reverse': m034,
  '035_profile_field_user_matching': m035,
  '036_drafts': m036,
  '037_scheduled_messages': m037,
  '038_muted_users': m038,
  '039_active_push_notifications': m039,
  '040_bots': m040,
  '041_outgoing_emails': m041,
  '042_email_invites': m042,
  '043_password_reset_tokens': m043,
  '044_missed_message_emails': m044,
  '045_email_gateway': m045,
  '046_sessions': m046,
  '047_channel_topics': m047,
  '048_soft_deactivation': m048,
  '049_message_receivers': m049,
};

/** Every migration this code knows, in the order they apply. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(MIGRATIONS).sort();

const source: Knex.MigrationSource<string> = {
  getMigrations: async () => [...MIGRATION_NAMES],
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS[name]!,
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: source })) as [number, string[]];
  return applied;
}

/**
 * Applies migrations up to and including `last` (tests build databases at an
 * older schema this way, to check that a restore brings them up to date).
 */
export async function migrateUpTo(db: Knex, last: string): Promise<void> {
  if (!MIGRATION_NAMES.includes(last)) throw new Error(`Unknown migration ${last}`);
  for (;;) {
    const [done] = (await db.migrate.list({ migrationSource: source })) as [Array<string | { name: string }>, unknown];
    const names = done.map((m) => (typeof m === 'string' ? m : m.name));
    if (names.includes(last)) return;
    await db.migrate.up({ migrationSource: source });
  }
}

export async function rollbackAll(db: Knex): Promise<void> {
  await db.migrate.rollback({ migrationSource: source }, true);
}
