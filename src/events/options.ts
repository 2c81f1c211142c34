import type { Params } from '../contract';
import { isGuestRole } from '../domain/roles';
import { ApiError } from '../errors';
import type { UserRow } from '../queries/rows';
import { checkNarrowForEvents, EventNarrow } from './narrow';

/** What a queue was registered with (POST /register), fixed for its life. */
export interface QueueOptions {
  userId: number;
  realmId: number;
  /** null: every event type. Unknown names simply never match (Zulip ignores them). */
  eventTypes: ReadonlySet<string> | null;
  narrow: EventNarrow;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  allPublicStreams: boolean;
  /**
   * Whether messages of public channels the user did not receive reach the
   * queue: with all_public_streams, and (as Zulip does) with any narrow,
   * so a narrowed view of a channel one is not subscribed to stays live.
   * Never for guests, who may not read unsubscribed channels.
   */
  publicChannels: boolean;
  capabilities: ClientCapabilities;
  /** presence events without the email (slim_presence). */
  slimPresence?: boolean;
}

/** The client_capabilities that change what a queue or the initial state carries. */
export interface ClientCapabilities {
  notificationSettingsNull: boolean;
  bulkMessageDeletion: boolean;
  streamTypingNotifications: boolean;
  emptyTopicName: boolean;
  archivedChannels: boolean;
  includeDeactivatedGroups: boolean;
  /** presence events in the modern format, keyed by user ID. */
  simplifiedPresenceEvents: boolean;
}

export function parseCapabilities(raw: Record<string, boolean> | undefined): ClientCapabilities {
  const c = raw ?? {};
  return {
    notificationSettingsNull: c.notification_settings_null === true,
    bulkMessageDeletion: c.bulk_message_deletion === true,
    streamTypingNotifications: c.stream_typing_notifications === true,
    emptyTopicName: c.empty_topic_name === true,
    archivedChannels: c.archived_channels === true,
    includeDeactivatedGroups: c.include_deactivated_groups === true,
    simplifiedPresenceEvents: c.simplified_presence_events === true,
  };
}

/** Zulip's defaults: apply_markdown false, client_gravatar true (since feature level 92). */
export function queueOptionsFor(user: UserRow, p: Params<'register-queue'>): QueueOptions {
  const guest = isGuestRole(user.role);
  const allPublicStreams = p.all_public_streams ?? false;
  if (allPublicStreams && guest) throw new ApiError('User not authorized for this query');
  const narrow = checkNarrowForEvents(p.narrow);
  return {
    userId: user.id,
    realmId: user.realm_id,
    eventTypes: p.event_types ? new Set(p.event_types) : null,
    narrow,
    applyMarkdown: p.apply_markdown ?? false,
    clientGravatar: p.client_gravatar ?? true,
    allPublicStreams,
    publicChannels: !guest && (allPublicStreams || narrow.length > 0),
    capabilities: parseCapabilities(p.client_capabilities),
    slimPresence: p.slim_presence ?? false,
  };
}
