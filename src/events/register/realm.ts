import type { RealmGroupSetting } from '../../domain/group-settings';
import { MAX_CHANNEL_DESCRIPTION_LENGTH, MAX_CHANNEL_NAME_LENGTH } from '../../domain/channels';
import { EMPTY_TOPIC_DISPLAY_NAME, MAX_MESSAGE_LENGTH, MAX_TOPIC_LENGTH } from '../../domain/topics';
import { REPORT_MESSAGE_TYPES } from '../../domain/reports';
import type { RealmRow } from '../../queries/rows';
import { SERVER_SUPPORTED_PERMISSION_SETTINGS } from '../../serializers/permission-settings';
import type { GroupLookup } from '../../serializers/subscriptions';
import type { StatePart } from './state';

/** Zulip's ChannelFolder limits. */
const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;
const MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH = 1024;

/**
 * The typing and presence protocol constants Zulip's settings default to;
 * clients time their start/stop notifications and presence pings by them.
 */
const SERVER_TIMINGS: StatePart<
  | 'server_typing_started_expiry_period_milliseconds'
  | 'server_typing_stopped_wait_period_milliseconds'
  | 'server_typing_started_wait_period_milliseconds'
  | 'server_presence_ping_interval_seconds'
  | 'server_presence_offline_threshold_seconds'
> = {
  server_typing_started_expiry_period_milliseconds: 15_000,
  server_typing_stopped_wait_period_milliseconds: 5_000,
  server_typing_started_wait_period_milliseconds: 10_000,
  server_presence_ping_interval_seconds: 60,
  server_presence_offline_threshold_seconds: 140,
};

export interface RealmStateConfig {
  realmUrl: string;
  maxFileUploadSizeMib: number;
  heartbeatMs: number;
}

/** The realm's permission settings as the initial state names them: realm_<setting>. */
type RealmGroupKey = `realm_${RealmGroupSetting}`;

type RealmKey =
  | 'max_topic_length'
  | 'max_message_length'
  | 'max_stream_name_length'
  | 'max_stream_description_length'
  | 'max_channel_folder_name_length'
  | 'max_channel_folder_description_length'
  | 'max_file_upload_size_mib'
  | 'realm_empty_topic_display_name'
  | 'server_report_message_types'
  | 'server_supported_permission_settings'
  | keyof typeof SERVER_TIMINGS
  | 'event_queue_longpoll_timeout_seconds'
  | 'realm_name'
  | 'realm_description'
  | 'realm_url'
  | 'realm_uri'
  | 'realm_default_language'
  | 'realm_waiting_period_threshold'
  | 'realm_enable_spectator_access'
  | 'realm_presence_disabled'
  | 'realm_enable_read_receipts'
  | 'realm_allow_message_editing'
  | 'realm_message_content_edit_limit_seconds'
  | 'realm_move_messages_within_stream_limit_seconds'
  | 'realm_move_messages_between_streams_limit_seconds'
  | 'realm_message_content_delete_limit_seconds'
  | 'realm_message_edit_history_visibility_policy'
  | 'realm_allow_edit_history'
  | 'realm_topics_policy'
  | 'realm_mandatory_topics'
  | 'realm_moderation_request_channel_id'
  | RealmGroupKey;

/** The `realm` part of the initial state: limits, server constants and the organization's settings. */
export function realmState(realm: RealmRow, groups: GroupLookup, cfg: RealmStateConfig): StatePart<RealmKey> {
  return {
    max_topic_length: MAX_TOPIC_LENGTH,
    max_message_length: MAX_MESSAGE_LENGTH,
    max_stream_name_length: MAX_CHANNEL_NAME_LENGTH,
    max_stream_description_length: MAX_CHANNEL_DESCRIPTION_LENGTH,
    max_channel_folder_name_length: MAX_CHANNEL_FOLDER_NAME_LENGTH,
    max_channel_folder_description_length: MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH,
    max_file_upload_size_mib: cfg.maxFileUploadSizeMib,
    realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
    server_report_message_types: REPORT_MESSAGE_TYPES,
    server_supported_permission_settings: SERVER_SUPPORTED_PERMISSION_SETTINGS,
    ...SERVER_TIMINGS,
    // Zulip's EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS (90) is its heartbeat (at most 55 s) plus a margin.
    event_queue_longpoll_timeout_seconds: Math.ceil(cfg.heartbeatMs / 1000) + 40,
    realm_name: realm.name,
    realm_description: realm.description,
    realm_url: cfg.realmUrl,
    realm_uri: cfg.realmUrl,
    realm_default_language: realm.default_language,
    realm_waiting_period_threshold: realm.waiting_period_threshold,
    realm_enable_spectator_access: realm.enable_spectator_access,
    realm_presence_disabled: realm.presence_disabled,
    realm_enable_read_receipts: realm.enable_read_receipts,
    realm_allow_message_editing: realm.allow_message_editing,
    realm_message_content_edit_limit_seconds: realm.message_content_edit_limit_seconds,
    realm_move_messages_within_stream_limit_seconds: realm.move_messages_within_stream_limit_seconds,
    realm_move_messages_between_streams_limit_seconds: realm.move_messages_between_streams_limit_seconds,
    realm_message_content_delete_limit_seconds: realm.message_content_delete_limit_seconds,
    realm_message_edit_history_visibility_policy: realm.message_edit_history_visibility_policy,
    realm_allow_edit_history: realm.message_edit_history_visibility_policy !== 'none',
    realm_topics_policy: realm.topics_policy,
    realm_mandatory_topics: realm.topics_policy === 'disable_empty_topic',
    // Zulip sends -1, not null, for "no channel".
    realm_moderation_request_channel_id: realm.moderation_request_channel_id ?? -1,
    realm_can_access_all_users_group: groups.value(realm.can_access_all_users_group),
    realm_can_add_custom_emoji_group: groups.value(realm.can_add_custom_emoji_group),
    realm_can_add_subscribers_group: groups.value(realm.can_add_subscribers_group),
    realm_can_create_bots_group: groups.value(realm.can_create_bots_group),
    realm_can_create_groups: groups.value(realm.can_create_groups),
    realm_can_create_public_channel_group: groups.value(realm.can_create_public_channel_group),
    realm_can_create_private_channel_group: groups.value(realm.can_create_private_channel_group),
    realm_can_create_web_public_channel_group: groups.value(realm.can_create_web_public_channel_group),
    realm_can_create_write_only_bots_group: groups.value(realm.can_create_write_only_bots_group),
    realm_can_delete_any_message_group: groups.value(realm.can_delete_any_message_group),
    realm_can_delete_own_message_group: groups.value(realm.can_delete_own_message_group),
    realm_can_invite_users_group: groups.value(realm.can_invite_users_group),
    realm_can_manage_all_groups: groups.value(realm.can_manage_all_groups),
    realm_can_manage_billing_group: groups.value(realm.can_manage_billing_group),
    realm_can_mention_many_users_group: groups.value(realm.can_mention_many_users_group),
    realm_can_move_messages_between_channels_group: groups.value(realm.can_move_messages_between_channels_group),
    realm_can_move_messages_between_topics_group: groups.value(realm.can_move_messages_between_topics_group),
    realm_can_resolve_topics_group: groups.value(realm.can_resolve_topics_group),
    realm_can_set_delete_message_policy_group: groups.value(realm.can_set_delete_message_policy_group),
    realm_can_set_topics_policy_group: groups.value(realm.can_set_topics_policy_group),
    realm_can_summarize_topics_group: groups.value(realm.can_summarize_topics_group),
    realm_create_multiuse_invite_group: groups.value(realm.create_multiuse_invite_group),
    realm_direct_message_initiator_group: groups.value(realm.direct_message_initiator_group),
    realm_direct_message_permission_group: groups.value(realm.direct_message_permission_group),
  };
}
