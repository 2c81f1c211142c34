import { toApiRealmDomain } from '../../serializers/realm-domains';
import type { Knex } from 'knex';
import type { AppContext } from '../../context';
import type { SubscriberListMode } from '../../access/subscriber-lists';
import type { Caller } from '../../access/viewer';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../../domain/version';
import { getRealmById, getRealmUserDefaultsRaw } from '../../queries/realms';
import { listChannelSubscriptions, listRealmEmoji, listSavedSnippets, SubscriptionSettings } from '../../queries/register';
import { toApiRealmEmojiMap } from '../../serializers/custom-emoji';
import { listAlertWords } from '../../queries/alert-words';
import { listLinkifiers } from '../../queries/linkifiers';
import { listClientDevices } from '../../queries/client-devices';
import { nowSeconds } from '../../queries/ids';
import { toApiClientDevices } from '../../serializers/devices';
import { getMaxMessageIdForUser } from '../../queries/users';
import { listUserTopicPolicies, listUserTopics } from '../../queries/user-topics';
import { VisibilityPolicy } from '../../domain/user-topics';
import { toApiMutedTopics, toApiUserTopic } from '../../serializers/user-topics';
import type { QueueOptions } from '../options';
import { loadRealmGroups } from '../../access/realm-groups';
import { realmState } from './realm';
import { channelFoldersState, defaultStreamsState, streamsState } from './channels';
import { FIXED_PARTS } from './fixed';
import { draftsState } from './drafts';
import { DeliveryType, listUndelivered } from '../../queries/scheduled-messages';
import { toApiReminder, toApiScheduledMessage } from '../../serializers/scheduled-messages';
import { recentDmState, starredMessagesState } from './messages';
import { presenceState, userStatusState } from './presence';
import { loadRealmChannels, subscriptionState } from './subscriptions';
import { unreadState } from './unread';
import { listMutedUsers } from '../../queries/muted-users';
import { toApiMutedUsers } from '../../serializers/muted-users';
import type { InitialState, StatePart } from './types';
import { customProfileFieldsState, realmBotsState, realmUserSettingsDefaultsState, realmUserState, userSettingsState } from './users';

export interface StateRequest {
  /** fetch_event_types, else event_types, else null (everything). */
  fetchEventTypes: ReadonlySet<string> | null;
  includeSubscribers: SubscriberListMode;
  queue: QueueOptions;
  /** slim_presence and presence_history_limit_days. */
  presence?: { slim: boolean; historyLimitDays?: number };
}

/** Whether the state asked for includes unread_msgs (Zulip sends it for `message` with `update_message_flags`). */
export const wantsUnreadState = (fetchEventTypes: ReadonlySet<string> | null): boolean =>
  fetchEventTypes === null || (fetchEventTypes.has('message') && fetchEventTypes.has('update_message_flags'));

/**
 * The initial state of POST /register for the requested kinds, as Zulip's
 * fetch_initial_state_data names them: `realm`, `realm_user`, `realm_bot`,
 * `custom_profile_fields`, `user_settings`, `realm_user_settings_defaults`,
 * `subscription`, `stream`, `default_streams`, `channel_folders`,
 * `realm_user_groups`, `message` (max_message_id), `message` with
 * `update_message_flags` (unread_msgs), `starred_messages`,
 * `recent_private_conversations`, `saved_snippets`, `drafts`, `scheduled_messages`,
 * `reminders`, `alert_words`,
 * `realm_emoji`, `realm_linkifiers`, `realm_playgrounds`, `presence`,
 * `user_status`, `user_topic`, `muted_topics`, `muted_users`,
 * and Zulip's empty values for the kinds of objects Parley does not have
 * (./fixed.ts). Every key of a requested kind is sent.
 * A fixed number of statements whatever the organization's size.
 */
export async function buildInitialState(ctx: AppContext, caller: Caller, r: StateRequest): Promise<InitialState> {
  const { user } = caller;
  const want = (kind: string) => r.fetchEventTypes === null || r.fetchEventTypes.has(kind);
  const { db } = ctx;
  const caps = r.queue.capabilities;
  const state: InitialState = {
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_version: ZULIP_VERSION,
    zulip_merge_base: ZULIP_MERGE_BASE,
  };
  // Read now, after the queue exists (not the row authentication read): a change committed in
  // between is then either in this state or in the queue. Each is read only when a requested kind
  // needs it: a client registering for messages alone (event_types ["message"]) costs two
  // statements, not the whole organization's group memberships.
  const realm = once(() => getRealmById(db, user.realm_id).then((r) => r!));
  // The memberships are those the request's authentication read (the caller cache's).
  const viewer = () => Promise.resolve(caller);
  const groups = once(() => loadRealmGroups(db, user.realm_id));
  const parts: Array<Promise<Partial<InitialState>>> = [];
  const add = (p: Promise<Partial<InitialState>> | Partial<InitialState>) => parts.push(Promise.resolve(p));

  // The channels with their counts and traffic, for every kind that lists channels.
  const channels = once(() => loadRealmChannels(db, user.realm_id));

  if (want('realm')) {
    const cfg = {
      externalUrl: ctx.config.externalUrl,
      maxFileUploadSizeMib: ctx.config.maxFileUploadSizeMib,
      heartbeatMs: ctx.queues.limits.heartbeatMs,
      webPublicStreamsEnabled: ctx.config.webPublicStreamsEnabled,
      pushNotificationsEnabled: ctx.config.pushRelayUrl !== null,
    };
    add(Promise.all([realm(), groups()]).then(([rl, g]) => realmState(rl, g, cfg)));
  }
  if (want('realm_user')) {
    const o = { clientGravatar: r.queue.clientGravatar, webPublicStreamsEnabled: ctx.config.webPublicStreamsEnabled };
    add(Promise.all([viewer(), realm()]).then(([v, rl]) => realmUserState(db, v, rl, o)));
  }
  if (want('realm_bot')) add(viewer().then((v) => realmBotsState(db, v)));
  if (want('custom_profile_fields')) add(customProfileFieldsState(db, user.realm_id));
  if (want('user_settings')) add({ user_settings: userSettingsState(user) });
  if (want('realm_user_settings_defaults')) {
    add(getRealmUserDefaultsRaw(db, user.realm_id).then((raw) => ({ realm_user_settings_defaults: realmUserSettingsDefaultsState(raw) })));
  }
  if (want('realm_user_groups')) add(groups().then((g) => ({ realm_user_groups: g.userGroups(caps.includeDeactivatedGroups) })));
  const wantUnread = wantsUnreadState(r.fetchEventTypes);
  if (want('subscription') || wantUnread) {
    const subs = listChannelSubscriptions(db, user.id);
    if (want('subscription')) {
      const o = {
        includeSubscribers: r.includeSubscribers,
        archivedChannels: caps.archivedChannels,
        notificationSettingsNull: caps.notificationSettingsNull,
      };
      // The channel objects are serializers/subscriptions.ts's, which build them as records for now: the
      // one part of the state the compiler cannot yet check against the contract.
      // Started now, read beside the subscriber lists once the rest is in.
      const realmChannels = channels();
      add(
        Promise.all([subs, viewer(), groups()]).then(
          async ([rows, v, g]) => (await subscriptionState(db, v, g.lookup, rows, realmChannels, o)) as StatePart<SubscriptionKey>,
        ),
      );
    }
    if (wantUnread) add(subs.then((rows) => unreadFor(db, user.id, rows, caps.emptyTopicName)));
  }
  if (want('stream')) {
    add(Promise.all([viewer(), groups(), channels()]).then(([v, g, ch]) => streamsState(v, g.lookup, ch, caps.archivedChannels)));
  }
  if (want('default_streams')) add(Promise.all([viewer(), channels()]).then(([v, ch]) => defaultStreamsState(v, ch)));
  if (want('channel_folders')) add(channelFoldersState(db, user.realm_id));
  if (want('message')) add(getMaxMessageIdForUser(db, user.id).then((max_message_id) => ({ max_message_id })));
  if (want('starred_messages')) add(starredMessagesState(db, user.id));
  if (want('recent_private_conversations')) add(recentDmState(db, user.id));
  if (want('saved_snippets')) add(listSavedSnippets(db, user.id).then((saved_snippets) => ({ saved_snippets })));
  if (want('drafts')) add(draftsState(db, user.id));
  // Scheduled messages and reminders are rows of one table: one statement reads both.
  const undelivered = [
    ...(want('scheduled_messages') ? [DeliveryType.SEND_LATER] : []),
    ...(want('reminders') ? [DeliveryType.REMIND] : []),
  ];
  if (undelivered.length) {
    add(
      listUndelivered(db, user.id, undelivered).then((rows) => ({
        ...(want('scheduled_messages') && {
          scheduled_messages: rows.filter((r) => r.delivery_type === DeliveryType.SEND_LATER).map(toApiScheduledMessage),
        }),
        ...(want('reminders') && { reminders: rows.filter((r) => r.delivery_type === DeliveryType.REMIND).map(toApiReminder) }),
      })),
    );
  }
  if (want('device')) add(listClientDevices(db, user.id).then((rows) => ({ devices: toApiClientDevices(rows, nowSeconds()) })));
  if (want('alert_words')) add(listAlertWords(db, user.id).then((alert_words) => ({ alert_words })));
  if (want('presence')) {
    // The modern form for clients that asked for it (slim_presence) or that declare
    // simplified_presence_events, which Zulip's fetch_initial_state_data takes as a request for it.
    const slim = (r.presence?.slim ?? r.queue.slimPresence ?? false) || caps.simplifiedPresenceEvents;
    add(viewer().then((v) => presenceState(ctx, v, { slim, historyLimitDays: r.presence?.historyLimitDays })));
  }
  if (want('user_status')) add(viewer().then((v) => userStatusState(db, v)));
  // Domains and playgrounds come from this node's caches (src/cache/realm-domains.ts, playgrounds.ts): no statement once warm.
  if (want('realm_domains')) {
    add(ctx.caches.realmDomains.get(user.realm_id).then((rows) => ({ realm_domains: rows.map(toApiRealmDomain) })));
  }
  if (want('realm_emoji'))
    add(listRealmEmoji(db, user.realm_id).then((rows) => ({ realm_emoji: toApiRealmEmojiMap(user.realm_id, rows) })));
  // Zulip's get_user_topics: policies in channels that are not archived; the legacy muted_topics lists the muted ones.
  if (want('user_topic')) {
    add(listUserTopics(db, user.id).then((rows) => ({ user_topics: rows.map((r) => toApiUserTopic(r, caps.emptyTopicName)) })));
  }
  // A client naming user_topic as well gets no muted_topics (Zulip sends the legacy list only to
  // clients that may not know user_topic), unless it asked for everything.
  if (want('muted_topics') && (r.fetchEventTypes === null || !want('user_topic'))) {
    add(
      listUserTopics(db, user.id, VisibilityPolicy.MUTED).then((rows) => ({ muted_topics: toApiMutedTopics(rows, caps.emptyTopicName) })),
    );
  }
  // Zulip sends the linkifiers only to clients that understand URL templates (the older
  // url_format_string form is gone); the others get an empty list.
  if (want('realm_linkifiers')) {
    add(
      caps.linkifierUrlTemplate
        ? listLinkifiers(db, user.realm_id).then((realm_linkifiers) => ({ realm_linkifiers }))
        : { realm_linkifiers: [] },
    );
  }
  if (want('realm_playgrounds')) add(ctx.caches.playgrounds.get(user.realm_id).then((list) => ({ realm_playgrounds: [...list] })));
  if (want('muted_users')) add(listMutedUsers(db, user.id).then((rows) => ({ muted_users: toApiMutedUsers(rows) })));
  for (const [kind, part] of Object.entries(FIXED_PARTS)) if (want(kind)) add(part());

  for (const part of await Promise.all(parts)) Object.assign(state, part);
  return state;
}

/**
 * The first call starts `load`; every call shares its promise. A failure
 * counts as handled at once (whoever awaits the promise later still gets
 * it): a read started early and awaited after another part failed must not
 * be an unhandled rejection.
 */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    if (!p) {
      p = load();
      p.catch(() => undefined);
    }
    return p;
  };
}

type SubscriptionKey = 'subscriptions' | 'unsubscribed' | 'never_subscribed';

/** Unread messages of channels one left do not count; muted channels and topics count apart. */
async function unreadFor(
  db: Knex,
  userId: number,
  subs: SubscriptionSettings[],
  allowEmptyTopicName: boolean,
): Promise<StatePart<'unread_msgs'>> {
  const unread_msgs = await unreadState(db, {
    userId,
    inactiveRecipients: new Set(subs.filter((s) => !s.active).map((s) => s.recipient_id)),
    mutedRecipients: new Set(subs.filter((s) => s.active && s.is_muted).map((s) => s.recipient_id)),
    topicPolicies: await listUserTopicPolicies(db, userId),
    allowEmptyTopicName,
  });
  return { unread_msgs };
}
