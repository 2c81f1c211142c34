import { signal } from '@preact/signals';
import type { Schemas } from '../api/client';

/**
 * What the client knows of the organization, from POST /register and kept
 * current by the event queue (./events.ts). Each piece is a signal: a
 * component reading it redraws when it changes. Maps are replaced, not
 * mutated, so a change is seen.
 */
export type User = Schemas['User'];
export type Subscription = Schemas['Subscription'];
export type Message = Schemas['Message'];
export type Register = Schemas['RegisterResponse'];
export type UserGroup = Schemas['UserGroup'];
export type RealmEmoji = Schemas['RealmEmoji'];

export interface Me {
  user_id: number;
  email: string;
  full_name: string;
  is_admin: boolean;
  avatar_url: string | null;
}

export const me = signal<Me | null>(null);
export interface Realm {
  name: string;
  icon: string | null;
  maxMessageLength: number;
  maxTopicLength: number;
  /** The largest file POST /user_uploads takes, MiB; null when the server did not say. */
  maxFileUploadMib: number | null;
  /** Where the server serves the names of the Unicode emoji it knows. */
  emojiDataUrl: string | null;
  /** Zulip's typing periods: renew "start" this often while typing; send "stop" after this long idle. */
  typingStartedWaitMs: number;
  typingStoppedWaitMs: number;
}

export const realm = signal<Realm>({
  name: '',
  icon: null,
  maxMessageLength: 10000,
  maxTopicLength: 60,
  maxFileUploadMib: null,
  emojiDataUrl: null,
  typingStartedWaitMs: 10_000,
  typingStoppedWaitMs: 5_000,
});
export const users = signal<ReadonlyMap<number, User>>(new Map());
export const subscriptions = signal<readonly Subscription[]>([]);
/** The organization's user groups (realm_user_groups), for mentions. */
export const userGroups = signal<readonly UserGroup[]>([]);
/** The organization's custom emoji (realm_emoji), by id. */
export const customEmoji = signal<ReadonlyMap<string, RealmEmoji>>(new Map());
/** Topics muted, unmuted or followed: `${channelId}:${topic lowercased}` → Zulip's visibility_policy. */
export const topicPolicies = signal<ReadonlyMap<string, number>>(new Map());
/** The same keys → the channel and topic as the server spells them (the key is lowercased), to list and unmute them. */
export const topicPolicyNames = signal<ReadonlyMap<string, { channelId: number; topic: string }>>(new Map());
/** Presence: user id → the last time seen active, seconds (slim presence). */
export const presence = signal<ReadonlyMap<number, { active: number; idle: number }>>(new Map());
/** The user's settings (user_settings of POST /register), as Zulip names them. */
export const settings = signal<Record<string, unknown>>({});
/** Who is typing where: conversation key → user ids. */
export const typing = signal<ReadonlyMap<string, readonly number[]>>(new Map());
export const connection = signal<'connecting' | 'live' | 'reconnecting'>('connecting');

export const VISIBILITY = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

export function topicKey(channelId: number, topic: string): string {
  return `${channelId}:${topic.toLowerCase()}`;
}

export function userName(id: number): string {
  return users.value.get(id)?.full_name ?? `User ${id}`;
}

export function channelName(id: number): string {
  return subscriptions.value.find((s) => s.stream_id === id)?.name ?? `channel ${id}`;
}

export function channelByName(name: string): Subscription | undefined {
  const n = name.toLowerCase();
  return subscriptions.value.find((s) => s.name.toLowerCase() === n);
}

export function replaceIn<K, V>(map: ReadonlyMap<K, V>, key: K, value: V | undefined): Map<K, V> {
  const next = new Map(map);
  if (value === undefined) next.delete(key);
  else next.set(key, value);
  return next;
}

/** A user by email (either the visible or the delivery address) or by full name, case-insensitively. */
export function userByEmailOrName(text: string): User | undefined {
  const t = text.toLowerCase();
  for (const u of users.value.values()) {
    if (u.email.toLowerCase() === t || u.delivery_email?.toLowerCase() === t) return u;
  }
  for (const u of users.value.values()) if (u.full_name.toLowerCase() === t) return u;
  return undefined;
}
