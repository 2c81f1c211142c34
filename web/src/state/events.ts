import { api, ApiFailure, ok, type Schemas } from '../api/client';

import { afterMove, forgetViews, onNewMessage, openNarrow, updateFlags, updateMessages, view } from './messages';
import { termOf } from '../lib/narrow';
import {
  connection,
  customEmoji,
  me,
  presence,
  realm,
  replaceIn,
  settings,
  subscriptions,
  topicKey,
  topicPolicies,
  topicPolicyNames,
  typing,
  userGroups,
  users,
  type Register,
} from './store';
import { channelTopics, loadTopics, noteTopicMessage } from './topics';
import { addUnread, dmKey, loadUnread, moveUnread, removeUnread, unreadWhere } from './unread';

/**
 * Real time: POST /register loads the state and opens an event queue, then
 * GET /events long-polls it and applies each event. When the server has
 * dropped the queue (BAD_EVENT_QUEUE_ID: idle too long, server restarted)
 * the client registers again and fetches the open narrow anew, so nothing
 * missed stays missing; a network failure is retried with a growing pause.
 */
type Event = Schemas['Event'];

let queueId: string | null = null;
let lastEventId = -1;
let generation = 0;
const listeners = new Set<(e: Event) => void>();

/** For features that follow events of their own (typing notices, drafts, …). */
export function onEvent(listener: (e: Event) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function register(): Promise<Register> {
  const state = await ok(
    api.POST('/register', {
      body: {
        apply_markdown: true,
        // Gravatar pictures are drawn as initials (the CSP forbids outside images): their URLs are not needed.
        client_gravatar: true,
        slim_presence: true,
        include_subscribers: false,
        all_public_streams: false,
        // The state this client reads, and no more: every channel's list (`stream`), bots, profile
        // fields, drafts and the like cost the server time at every page load and are never shown.
        // The queue still receives every kind of event.
        fetch_event_types: [
          'realm',
          'realm_user',
          'subscription',
          'message',
          'update_message_flags',
          'presence',
          'user_settings',
          'user_topic',
          'user_group',
          'realm_emoji',
        ],
        client_capabilities: {
          notification_settings_null: true,
          bulk_message_deletion: true,
          user_avatar_url_field_optional: false,
          stream_typing_notifications: true,
          user_settings_object: true,
          empty_topic_name: true,
          simplified_presence_events: true,
        },
      },
    }),
  );
  queueId = state.queue_id ?? null;
  lastEventId = state.last_event_id ?? -1;
  load(state);
  return state;
}

function load(state: Register): void {
  const s = state as Register & Record<string, unknown>;
  me.value = {
    user_id: state.user_id as number,
    email: state.email as string,
    full_name: state.full_name as string,
    is_admin: Boolean(state.is_admin),
    avatar_url: (state.avatar_url as string | null) ?? null,
  };
  realm.value = {
    name: (s.realm_name as string) ?? '',
    icon: (s.realm_icon_url as string) ?? null,
    maxMessageLength: state.max_message_length ?? 10000,
    maxTopicLength: state.max_topic_length ?? 60,
    maxFileUploadMib: state.max_file_upload_size_mib ?? null,
    emojiDataUrl: state.server_emoji_data_url ?? null,
    // Zulip's defaults: renew "start" every 10 s of typing, "stop" after 5 s idle.
    typingStartedWaitMs: state.server_typing_started_wait_period_milliseconds ?? 10_000,
    typingStoppedWaitMs: state.server_typing_stopped_wait_period_milliseconds ?? 5_000,
  };
  userGroups.value = state.realm_user_groups ?? [];
  customEmoji.value = new Map(Object.entries(state.realm_emoji ?? {}));
  const byId = new Map<number, Schemas['User']>();
  // Zulip's register lists active users in realm_users and the others in
  // realm_non_active_users, without is_active on either: it is set here from the list.
  for (const u of (s.realm_users as Schemas['User'][]) ?? []) byId.set(u.user_id, { ...u, is_active: true });
  for (const u of (s.realm_non_active_users as Schemas['User'][]) ?? []) byId.set(u.user_id, { ...u, is_active: false });
  users.value = byId;
  subscriptions.value = (s.subscriptions as Schemas['Subscription'][]) ?? [];
  const policies = new Map<string, number>();
  const names = new Map<string, { channelId: number; topic: string }>();
  for (const t of (s.user_topics as { stream_id: number; topic_name: string; visibility_policy: number }[]) ?? []) {
    policies.set(topicKey(t.stream_id, t.topic_name), t.visibility_policy);
    names.set(topicKey(t.stream_id, t.topic_name), { channelId: t.stream_id, topic: t.topic_name });
  }
  topicPolicies.value = policies;
  topicPolicyNames.value = names;
  const seen = new Map<number, { active: number; idle: number }>();
  for (const [id, p] of Object.entries((s.presences as Record<string, { active_timestamp: number; idle_timestamp: number }>) ?? {})) {
    seen.set(Number(id), { active: p.active_timestamp, idle: p.idle_timestamp });
  }
  presence.value = seen;
  settings.value = (s.user_settings as Record<string, unknown>) ?? {};
  if (state.unread_msgs) loadUnread(state.unread_msgs, state.user_id as number);
}

/** Registers, then polls until the page closes. */
export async function start(): Promise<void> {
  await register();
  void poll(++generation);
}

async function poll(gen: number): Promise<void> {
  let pause = 1000;
  while (gen === generation) {
    try {
      const page = await ok(api.GET('/events', { params: { query: { queue_id: queueId ?? '', last_event_id: lastEventId } } }));
      connection.value = 'live';
      pause = 1000;
      for (const e of page.events) {
        lastEventId = Math.max(lastEventId, e.id);
        apply(e);
      }
    } catch (e) {
      if (e instanceof ApiFailure && e.code === 'BAD_EVENT_QUEUE_ID') {
        await reregister();
        continue;
      }
      if (e instanceof ApiFailure && e.status === 401) return;
      connection.value = 'reconnecting';
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, 30_000);
    }
  }
}

/** A new queue and state; what the open list shows is fetched again. */
async function reregister(): Promise<void> {
  connection.value = 'reconnecting';
  await register();
  const current = forgetViews();
  if (current) await openNarrow(current);
}

function apply(e: Event): void {
  switch (e.type) {
    case 'message': {
      const myId = me.value?.user_id ?? 0;
      const flags = e.message.sender_id === myId ? [...e.flags, 'read'] : e.flags;
      addUnread(e.message, flags, myId);
      onNewMessage(e.message, flags);
      if (e.message.type === 'stream' && e.message.stream_id !== undefined)
        noteTopicMessage(e.message.stream_id, e.message.subject, e.message.id);
      break;
    }
    case 'update_message_flags':
      if (e.flag === 'read') {
        // Marking everything read (POST /mark_all_as_read) comes as `all: true` with no IDs, as in Zulip.
        if (e.op === 'add') removeUnread(e.all ? [...unreadWhere().keys()] : e.messages);
        // A message marked unread again returns to the counts when its view refetches it.
      }
      updateFlags(e.messages, e.flag, e.op, e.all);
      break;
    case 'update_message':
      applyMessageUpdate(e);
      break;
    case 'delete_message': {
      const ids = new Set(e.message_ids ?? (e.message_id !== undefined ? [e.message_id] : []));
      removeUnread([...ids]);
      updateMessages(ids, () => null);
      break;
    }
    case 'reaction':
      updateMessages(new Set([e.message_id]), (m) => {
        const reactions =
          e.op === 'add'
            ? [...m.reactions, { emoji_name: e.emoji_name, emoji_code: e.emoji_code, reaction_type: e.reaction_type, user_id: e.user_id }]
            : m.reactions.filter((r) => !(r.user_id === e.user_id && r.emoji_code === e.emoji_code && r.reaction_type === e.reaction_type));
        return { ...m, reactions: reactions as typeof m.reactions };
      });
      break;
    case 'realm_user':
      if (e.op === 'add') users.value = replaceIn(users.value, e.person.user_id, { ...(e.person as Schemas['User']), is_active: true });
      else if (e.op === 'update') {
        const u = users.value.get(e.person.user_id);
        if (u) users.value = replaceIn(users.value, u.user_id, { ...u, ...(e.person as Partial<Schemas['User']>) });
        const changed = e.person as Partial<Schemas['User']> & { user_id: number };
        if (me.value && changed.user_id === me.value.user_id && changed.full_name !== undefined) {
          me.value = { ...me.value, full_name: changed.full_name };
        }
      }
      break;
    case 'subscription':
      if (e.op === 'add') subscriptions.value = [...subscriptions.value, ...e.subscriptions];
      else if (e.op === 'remove') {
        const gone = new Set(e.subscriptions.map((s) => s.stream_id));
        subscriptions.value = subscriptions.value.filter((s) => !gone.has(s.stream_id));
      } else if (e.op === 'update') {
        subscriptions.value = subscriptions.value.map((s) => (s.stream_id === e.stream_id ? { ...s, [e.property]: e.value } : s));
      }
      break;
    case 'stream':
      if (e.op === 'update') {
        subscriptions.value = subscriptions.value.map((s) => (s.stream_id === e.stream_id ? { ...s, [e.property]: e.value } : s));
      }
      break;
    case 'user_topic':
      topicPolicies.value = replaceIn(topicPolicies.value, topicKey(e.stream_id, e.topic_name), e.visibility_policy || undefined);
      topicPolicyNames.value = replaceIn(
        topicPolicyNames.value,
        topicKey(e.stream_id, e.topic_name),
        e.visibility_policy ? { channelId: e.stream_id, topic: e.topic_name } : undefined,
      );
      break;
    case 'presence': {
      if (!('presences' in e)) break;
      const seen = new Map(presence.value);
      for (const [id, p] of Object.entries(e.presences)) {
        seen.set(Number(id), { active: p.active_timestamp, idle: p.idle_timestamp });
      }
      presence.value = seen;
      break;
    }
    case 'user_settings':
      if (e.op === 'update') settings.value = { ...settings.value, [e.property]: e.value };
      break;
    case 'typing':
      applyTyping(e);
      break;
    case 'realm_emoji':
      customEmoji.value = new Map(Object.entries(e.realm_emoji));
      break;
    case 'user_group':
      applyUserGroup(e);
      break;
    default:
      break;
  }
  for (const l of listeners) l(e);
}

/** Told when the open topic moved as a whole, so that the page can follow it (state/navigation.ts). */
let onOpenTopicMoved: (to: { channelId: number; topic: string }) => void = () => undefined;

export function followOpenTopicWith(follow: (to: { channelId: number; topic: string }) => void): void {
  onOpenTopicMoved = follow;
}

function applyMessageUpdate(e: Extract<Event, { type: 'update_message' }>): void {
  const ids = new Set(e.message_ids.length ? e.message_ids : [e.message_id]);
  // Where the moved messages were, read before they change: whether the open topic is the one moving.
  const open = view.value;
  const moved = open?.messages.find((m) => ids.has(m.id));
  const openTopic = open ? termOf(open.narrow, 'topic') : undefined;
  const openChannel = open ? termOf(open.narrow, 'channel') : undefined;
  const followTo =
    moved?.type === 'stream' &&
    e.propagate_mode !== undefined &&
    e.propagate_mode !== 'change_one' &&
    (e.new_stream_id !== undefined || e.subject !== undefined) &&
    openChannel?.operand === moved.stream_id &&
    openTopic !== undefined &&
    String(openTopic.operand).toLowerCase() === moved.subject.toLowerCase()
      ? { channelId: e.new_stream_id ?? (moved.stream_id as number), topic: e.subject ?? moved.subject }
      : null;
  if (e.new_stream_id !== undefined || e.subject !== undefined) {
    moveUnread([...ids], e.new_stream_id, e.subject);
    // Topics renamed, resolved or moved: the lists of the channels involved are fetched again.
    for (const channelId of [e.stream_id, e.new_stream_id]) {
      if (channelId !== undefined && channelTopics.value.has(channelId)) loadTopics(channelId).catch(() => undefined);
    }
  }
  updateMessages(ids, (m) => {
    const next = { ...m };
    if (e.message_id === m.id && e.rendered_content !== undefined) next.content = e.rendered_content;
    if (e.subject !== undefined) next.subject = e.subject;
    if (e.new_stream_id !== undefined) next.stream_id = e.new_stream_id;
    if (!e.rendering_only) next.last_edit_timestamp = e.edit_timestamp;
    return next;
  });
  if (e.new_stream_id !== undefined || e.subject !== undefined) afterMove(ids);
  // A topic renamed, resolved or moved while open: the page goes with it, as Zulip's does.
  if (followTo) onOpenTopicMoved(followTo);
}

function applyUserGroup(e: Extract<Event, { type: 'user_group' }>): void {
  const groups = userGroups.value;
  if (e.op === 'add') userGroups.value = [...groups, e.group];
  else if (e.op === 'remove') userGroups.value = groups.filter((g) => g.id !== e.group_id);
  else if (e.op === 'update') userGroups.value = groups.map((g) => (g.id === e.group_id ? { ...g, ...e.data } : g));
  else if (e.op === 'add_members' || e.op === 'remove_members') {
    userGroups.value = groups.map((g) => {
      if (g.id !== e.group_id) return g;
      const rest = g.members.filter((id) => !e.user_ids.includes(id));
      return { ...g, members: e.op === 'add_members' ? [...rest, ...e.user_ids] : rest };
    });
  }
}

const typingTimers = new Map<string, ReturnType<typeof setTimeout>>();

export function typingKey(channelId: number | undefined, topic: string | undefined, dmKeyText: string | undefined): string {
  return channelId !== undefined ? `s:${topicKey(channelId, topic ?? '')}` : `d:${dmKeyText}`;
}

function applyTyping(e: Extract<Event, { type: 'typing' }>): void {
  const myId = me.value?.user_id ?? 0;
  if (e.sender.user_id === myId) return;
  const key =
    e.message_type === 'stream'
      ? typingKey(e.stream_id, e.topic, undefined)
      : // The conversation as the compose box names it (state/compose.ts typingKeyOf): the participants other than me.
        typingKey(undefined, undefined, dmKey([...new Set([...(e.recipients ?? []).map((r) => r.user_id), e.sender.user_id])], myId));
  const who = (typing.value.get(key) ?? []).filter((id) => id !== e.sender.user_id);
  if (e.op === 'start') who.push(e.sender.user_id);
  typing.value = replaceIn(typing.value, key, who.length ? who : undefined);
  const timer = `${key}/${e.sender.user_id}`;
  clearTimeout(typingTimers.get(timer));
  // Zulip's clients drop a typist not heard from for 15 seconds.
  if (e.op === 'start') {
    typingTimers.set(
      timer,
      setTimeout(() => {
        const left = (typing.value.get(key) ?? []).filter((id) => id !== e.sender.user_id);
        typing.value = replaceIn(typing.value, key, left.length ? left : undefined);
      }, 15_000),
    );
  }
}
