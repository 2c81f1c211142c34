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
  /** Linkifiers with RFC 6570 URL templates (feature level 176); others get an empty realm_linkifiers. */
  linkifierUrlTemplate: boolean;
}

/*
 * Queues share what they were registered with whenever it is the same:
 * one frozen capabilities object per combination, one event_types set per
 * list, one empty narrow. 100,000 idle queues then hold 100,000 small
 * records, not 100,000 copies of each (bench/longpoll.ts measures it).
 */
const capabilityObjects = new Map<string, ClientCapabilities>();
const eventTypeSets = new Map<string, ReadonlySet<string>>();
/**
 * Distinct event_types lists kept for sharing, and the longest list (as its
 * key) that is: clients send a few dozen names, and what is kept is never
 * dropped, so what any caller can pin stays small (1,000 keys of 2,000
 * characters). Past either a list gets a set of its own.
 */
const MAX_SHARED_EVENT_TYPE_SETS = 1_000;
const MAX_SHARED_EVENT_TYPES_KEY = 2_000;
const NO_NARROW: EventNarrow = Object.freeze([]);

export function parseCapabilities(raw: Record<string, boolean> | undefined): ClientCapabilities {
  const c = raw ?? {};
  const parsed: ClientCapabilities = {
    notificationSettingsNull: c.notification_settings_null === true,
    bulkMessageDeletion: c.bulk_message_deletion === true,
    streamTypingNotifications: c.stream_typing_notifications === true,
    emptyTopicName: c.empty_topic_name === true,
    archivedChannels: c.archived_channels === true,
    includeDeactivatedGroups: c.include_deactivated_groups === true,
    simplifiedPresenceEvents: c.simplified_presence_events === true,
    linkifierUrlTemplate: c.linkifier_url_template === true,
  };
  const key = Object.values(parsed).map(Number).join('');
  let shared = capabilityObjects.get(key);
  if (!shared) capabilityObjects.set(key, (shared = Object.freeze(parsed)));
  return shared;
}

function eventTypeSet(names: readonly string[]): ReadonlySet<string> {
  const key = [...new Set(names)].sort().join('\n');
  let set = eventTypeSets.get(key);
  if (!set) {
    set = new Set(names);
    if (eventTypeSets.size < MAX_SHARED_EVENT_TYPE_SETS && key.length <= MAX_SHARED_EVENT_TYPES_KEY) eventTypeSets.set(key, set);
  }
  return set;
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
    eventTypes: p.event_types ? eventTypeSet(p.event_types) : null,
    narrow: narrow.length ? narrow : NO_NARROW,
    applyMarkdown: p.apply_markdown ?? false,
    clientGravatar: p.client_gravatar ?? true,
    allPublicStreams,
    publicChannels: !guest && (allPublicStreams || narrow.length > 0),
    capabilities: parseCapabilities(p.client_capabilities),
    slimPresence: p.slim_presence ?? false,
  };
}
