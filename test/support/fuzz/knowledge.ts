import fc from 'fast-check';
import { emojiCodeForName } from '../../../src/markdown/emoji';
import { HUGE_INTEGERS, objectOf, Raw } from './json';
import { nameLike, oddString, PROTOTYPE_KEYS } from './strings';
import type { World } from './world';

/**
 * What the contract cannot say and the fuzzer needs: which existing objects a
 * base request names (so that it is valid-looking and reaches the handler's
 * checks), which fields are references (a value naming nothing is refused
 * whatever else the request says), and which text values the server refuses
 * although the schema says only `string`.
 */

type Arb = fc.Arbitrary<unknown>;
type Pools = Record<string, (w: World) => Arb>;

const some = <T>(xs: readonly T[]) => fc.subarray([...xs], { minLength: 1, maxLength: Math.min(2, xs.length) });
const one = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const freshEmail = fc.integer({ min: 1, max: 1e6 }).map((n) => `fuzz${n}@example.com`);
const strongPassword = fc.constantFrom('correct-horse-battery', 'a much longer pass phrase 😀');

/** Narrow terms that exist and hold no conversation (so a `with` term is never ignored). */
export const harmlessTerms = (w: World) =>
  fc.oneof(
    one(['unread', 'starred', 'mentioned', 'resolved']).map((operand) => ({ operator: 'is', operand })),
    one(['link', 'image', 'reaction']).map((operand) => ({ operator: 'has', operand })),
    oddString.filter((s) => s.trim() !== '').map((operand) => ({ operator: 'search', operand })),
    one(w.userIds).map((operand) => ({ operator: 'sender', operand })),
    one(w.messageIds).map((operand) => ({ operator: 'id', operand })),
  );

/** A valid narrow of existing objects, object or legacy form. */
const narrow = (w: World) =>
  fc.array(
    fc.oneof(
      harmlessTerms(w),
      one(w.channelNames).map((operand) => ({ operator: 'channel', operand })),
      one(w.channelIds).map((operand) => ({ operator: 'stream', operand, negated: false })),
      one(['greetings', 'plans']).map((operand) => ['topic', operand]),
    ),
    { maxLength: 3 },
  );

/** Narrows a queue may filter events by (Zulip's check_narrow_for_events). */
const eventNarrow = (w: World) =>
  fc.array(
    fc.oneof(
      one(w.channelNames).map((operand) => ({ operator: 'channel', operand })),
      one(['greetings']).map((operand) => ({ operator: 'topic', operand })),
      one(['unread', 'starred']).map((operand) => ['is', operand]),
    ),
    { maxLength: 2 },
  );

const groupSetting = (w: World) =>
  fc.oneof(one(w.groupIds), fc.record({ direct_members: some(w.userIds), direct_subgroups: fc.constant([]) }));

/** Values base requests give these fields, by operation ('*': any operation). */
export const BASE_VALUES: Record<string, Pools> = {
  '*': {
    message_id: (w) => one(w.messageIds),
    user_id: (w) => one(w.userIds),
    stream_id: (w) => one(w.channelIds),
    user_group_id: (w) => one(w.groupIds),
    queue_id: (w) => fc.constant(w.queueId),
    invite_key: (w) => fc.constant(w.inviteKey),
    messages: (w) => some(w.messageIds),
    message_ids: (w) => some(w.messageIds),
    subscribers: (w) => some(w.userIds),
    principals: (w) => some(w.userIds),
    stream_ids: (w) => some(w.channelIds),
    group_ids: (w) => some(w.groupIds),
    narrow,
    anchor: (w) => one(['newest', 'oldest', 'first_unread', ...w.messageIds.map(String)]),
    anchor_date: () => one(['2024-01-31', '2024-01-31T10:00:00Z']),
    emoji_name: () => one(['smile', 'heart', '+1', 'octopus']),
    emoji_code: () => one(['1f604', '2764']),
    email: () => freshEmail,
    new_email: () => freshEmail,
    username: (w) => one(w.emails),
    password: () => strongPassword,
    event_types: () => some(['message', 'realm_user', 'subscription', 'typing', 'update_message_flags', 'reaction']),
    fetch_event_types: () => some(['message', 'realm_user', 'subscription', 'realm']),
    num_before: () => fc.integer({ min: 0, max: 5 }),
    num_after: () => fc.integer({ min: 0, max: 5 }),
    last_event_id: () => fc.constant(-1),
    dont_block: () => fc.constant(true),
    profile_data: () => fc.constant([]),
    ...Object.fromEntries(
      [
        'add_subscribers',
        'remove_subscribers',
        'administer_channel',
        'delete_any_message',
        'delete_own_message',
        'move_messages_out_of_channel',
        'move_messages_within_channel',
        'send_message',
        'subscribe',
        'resolve_topics',
        'create_topic',
      ].map((g) => [`can_${g}_group`, groupSetting]),
    ),
  },
  'send-message': {
    to: (w) => fc.oneof(one(w.channelNames), one(w.channelIds), some(w.userIds)),
  },
  'set-typing-status': { to: (w) => some(w.userIds) },
  'update-message-flags': { op: () => one(['add', 'remove']), flag: () => one(['read', 'starred', 'collapsed']) },
  'update-message-flags-for-narrow': { op: () => one(['add', 'remove']), flag: () => one(['read', 'starred']) },
  'update-subscription-property': {
    property: () => one(['pin_to_top', 'is_muted', 'desktop_notifications', 'color']),
    value: () => fc.oneof(fc.boolean(), fc.constant('#aa00ff')),
  },
  'update-subscription-settings': {
    subscription_data: (w) =>
      fc.array(fc.record({ stream_id: one(w.channelIds), property: one(['pin_to_top', 'is_muted']), value: fc.boolean() }), {
        minLength: 1,
        maxLength: 2,
      }),
  },
  unsubscribe: { subscriptions: (w) => some(w.channelNames) },
  'reactivate-user': { user_id: (w) => fc.constant(w.users.deactivated.id) },
  'register-queue': { narrow: eventNarrow },
};

/** How a reference field is given a value that names nothing: any of these, tagged for the report. */
export interface Reference {
  field: string;
  /** Other fields set so that the reference is checked (e.g. flags are only refused for missing messages when added). */
  with?: Record<string, unknown>;
  kind: 'integer' | 'integer-list' | 'text' | 'text-list' | 'dm';
}

const ids = (...fields: string[]): Reference[] => fields.map((field) => ({ field, kind: 'integer' }));
const idLists = (...fields: string[]): Reference[] => fields.map((field) => ({ field, kind: 'integer-list' }));
const GROUP_SETTINGS = ['can_add_subscribers_group', 'can_administer_channel_group', 'can_send_message_group', 'can_subscribe_group'];

/** Reference fields (path parameters included) whose missing target is refused, by operation. */
export const REFERENCES: Record<string, Reference[]> = {
  'get-message': ids('message_id'),
  'update-message': ids('message_id'),
  'delete-message': ids('message_id'),
  'get-message-history': ids('message_id'),
  'add-reaction': ids('message_id'),
  'remove-reaction': ids('message_id'),
  'report-message': ids('message_id'),
  'set-typing-status-for-message-edit': ids('message_id'),
  'delete-topic': ids('stream_id'),
  'get-user': ids('user_id'),
  'update-user': ids('user_id'),
  'deactivate-user': ids('user_id'),
  'reactivate-user': ids('user_id'),
  'get-is-user-group-member': ids('user_group_id', 'user_id'),
  'update-subscription-property': ids('stream_id'),
  'accept-invite-link': [{ field: 'invite_key', kind: 'text' }],
  'get-events': [{ field: 'queue_id', kind: 'text' }],
  'delete-queue': [{ field: 'queue_id', kind: 'text' }],
  'update-message-flags': [{ field: 'messages', kind: 'integer-list', with: { op: 'add', flag: 'starred' } }],
  'set-typing-status': [
    { field: 'to', kind: 'integer-list', with: { type: 'direct' } },
    { field: 'stream_id', kind: 'integer', with: { type: 'channel', topic: 'greetings' } },
  ],
  'send-message': [
    { field: 'to', kind: 'integer', with: { type: 'channel', topic: 'x' } },
    { field: 'to', kind: 'dm', with: { type: 'direct' } },
  ],
  'create-channel': [...idLists('subscribers'), ...ids('folder_id', ...GROUP_SETTINGS)],
  // Channel settings are only read when a channel is created: name a new one.
  subscribe: [
    ...idLists('principals'),
    ...ids('folder_id', ...GROUP_SETTINGS).map((r) => ({ ...r, with: { subscriptions: [{ name: 'fuzz new channel' }] } })),
  ],
  unsubscribe: [{ field: 'subscriptions', kind: 'text-list' }, ...idLists('principals')],
  'create-invite-link': idLists('stream_ids', 'group_ids'),
};

/**
 * Integer fields without a maximum where a huge value (beyond 2^53) may still
 * make a valid request: counts the server clamps, an event id past the last
 * one, a history limit, fields read only with another parameter (a channel
 * to create, a channel typing notification; REFERENCES covers those cases).
 */
export const HUGE_ACCEPTED: Record<string, string[]> = {
  'update-message-flags-for-narrow': ['num_before', 'num_after'],
  'get-events': ['last_event_id'],
  'register-queue': ['presence_history_limit_days'],
  subscribe: ['folder_id'],
  'set-typing-status': ['stream_id'],
};

/** Ids naming nothing: past every table, zero, negative, and (tagged `huge`) beyond what JS or SQL integers hold. */
export const missingIds = (w: World): fc.Arbitrary<{ value: number | Raw; huge: boolean }> =>
  fc.oneof(
    fc.constantFrom(w.missingId, 0, -1, 2 ** 31, -(2 ** 31) - 1).map((value) => ({ value, huge: false })),
    fc.constantFrom(...HUGE_INTEGERS, '-' + HUGE_INTEGERS[0]).map((t) => ({ value: new Raw(t), huge: true })),
  );

const notOneOf = (known: readonly string[]) => nameLike.filter((s) => !known.includes(s));

/** Text values the server refuses although the contract says only `string`, by operation and field. */
export const REFUSED_TEXT: Record<string, Record<string, Arb>> = {
  'update-message-flags': { op: notOneOf(['add', 'remove']), flag: notOneOf(['read', 'starred', 'collapsed']) },
  'update-message-flags-for-narrow': {
    op: notOneOf(['add', 'remove']),
    flag: notOneOf(['read', 'starred', 'collapsed']),
    anchor: oddString.filter((s) => !['newest', 'oldest', 'first_unread', 'date'].includes(s) && !/^-?\d+$/.test(s)),
  },
  'get-messages': { anchor: oddString.filter((s) => !['newest', 'oldest', 'first_unread', 'date'].includes(s) && !/^-?\d+$/.test(s)) },
  'update-subscription-property': {
    property: notOneOf([
      'color',
      'is_muted',
      'in_home_view',
      'pin_to_top',
      'desktop_notifications',
      'audible_notifications',
      'push_notifications',
      'email_notifications',
      'wildcard_mentions_notify',
    ]),
  },
  'add-reaction': { emoji_name: nameLike.filter((s) => emojiCodeForName(s) === undefined && s !== 'zulip') },
  'create-user': { email: oddString.filter((s) => !s.includes('@')), password: fc.constantFrom('', 'short') },
  'accept-invite-link': { email: oddString.filter((s) => !s.includes('@')), password: fc.constantFrom('', 'short') },
  'fetch-api-key': { password: nameLike.filter((s) => s !== 'correct-horse-battery') },
};

/** A narrow term the server refuses, tagged; `prototype` marks Object.prototype names as operator or operand. */
export interface BadTerm {
  why: string;
  term: unknown;
  prototype: boolean;
}

const KNOWN_OPERATORS = [
  'channel',
  'stream',
  'channels',
  'streams',
  'topic',
  'subject',
  'sender',
  'dm',
  'pm-with',
  'pm_with',
  'dm-including',
  'dm-with',
  'group-pm-with',
  'is',
  'has',
  'in',
  'id',
  'near',
  'with',
  'search',
  'mentions',
];
const isProto = (s: unknown) => (PROTOTYPE_KEYS as readonly unknown[]).includes(s);

/** Terms GET /messages and POST /messages/flags/narrow refuse. */
export const badMessageTerms = (w: World): fc.Arbitrary<BadTerm> =>
  fc.oneof(
    // Operators and the operands of is/has/in/channels are looked up by name: the likeliest to go wrong.
    {
      arbitrary: notOneOf(KNOWN_OPERATORS).map((op) => ({
        why: 'unknown operator',
        term: { operator: op, operand: 'x' },
        prototype: isProto(op),
      })),
      weight: 3,
    },
    {
      arbitrary: fc
        .tuple(fc.constantFrom('has', 'has', 'has', 'is', 'in', 'channels'), nameLike)
        .filter(([op, x]) => !VALID_OPERANDS[op]!.includes(x))
        .map(([operator, operand]) => ({ why: `unknown ${operator} operand`, term: { operator, operand }, prototype: isProto(operand) })),
      weight: 6,
    },
    fc
      .tuple(fc.constantFrom('channel', 'sender', 'dm', 'dm-including', 'mentions'), missingIds(w))
      .map(([operator, id]) => ({ why: `${operator} naming nothing`, term: { operator, operand: id.value }, prototype: false })),
    fc
      .tuple(
        fc.constantFrom('channel', 'sender', 'dm'),
        nameLike.filter((s) => namesNothing(w, s)),
      )
      .map(([operator, operand]) => ({ why: `${operator} naming nothing`, term: [operator, operand], prototype: false })),
    oddString
      .filter((s) => !Number.isInteger(Number(s)))
      .map((operand) => ({ why: 'id not a number', term: { operator: 'id', operand }, prototype: false })),
    fc.constantFrom('', ' ', '\t\n').map((operand) => ({ why: 'empty search', term: { operator: 'search', operand }, prototype: false })),
    missingIds(w).map((id) => ({ why: 'with naming nothing', term: { operator: 'with', operand: id.value }, prototype: false })),
    fc.constantFrom('channel', 'topic', 'is', 'sender').map((operator) => ({
      why: 'null operand',
      term: objectOf([
        ['operator', operator],
        ['operand', null],
      ]),
      prototype: false,
    })),
    // The deactivated account never makes requests: it is always someone else.
    fc.constant({ why: 'mentions someone else', term: { operator: 'mentions', operand: w.users.deactivated.id }, prototype: false }),
  );

/** Text that is no channel name, user id or email: every comma-separated item is non-empty and unknown. */
const namesNothing = (w: World, s: string) => {
  const items = s.split(',').map((x) => x.trim());
  return (
    items.length > 0 && items.every((x) => x !== '' && !/^\d+$/.test(x) && !w.channelNames.includes(x.toLowerCase()) && !x.includes('@'))
  );
};

const VALID_OPERANDS: Record<string, string[]> = {
  is: ['dm', 'private', 'starred', 'unread', 'mentioned', 'alerted', 'resolved', 'followed', 'muted'],
  has: ['link', 'image', 'attachment', 'reaction'],
  in: ['home', 'all'],
  channels: ['public', 'web-public'],
};

/** Terms POST /register refuses (an event queue filters only by channel, topic, sender and is). */
export const badEventTerms = (): fc.Arbitrary<BadTerm> =>
  fc.oneof(
    // Prototype names included: here they are refused before any lookup by name (tagged as such all the same).
    notOneOf(['channel', 'stream', 'topic', 'sender', 'is']).map((op) => ({
      why: 'operator not for events',
      term: { operator: op, operand: 'x' },
      prototype: isProto(op),
    })),
    fc.constant({ why: 'is:followed', term: ['is', 'followed'], prototype: false }),
    fc.constantFrom('channel', 'topic').map((operator) => ({
      why: 'null operand',
      term: objectOf([
        ['operator', operator],
        ['operand', null],
      ]),
      prototype: false,
    })),
  );

/**
 * Combinations of values, each valid alone, that the server refuses together
 * (or whatever the caller): conflicting parameters, duplicates of existing
 * objects, properties with the wrong kind of value. `undefined` removes a
 * parameter. Path parameters are named like the others.
 */
export const REFUSED_COMBINATIONS: Record<string, Array<(w: World) => fc.Arbitrary<Record<string, unknown>>>> = {
  'send-message': [
    (w) => one(w.channelNames).map((to) => ({ type: 'channel', to, topic: undefined, subject: undefined })),
    () => fc.constant({ topic: 'a', subject: 'b' }),
    () => fc.constantFrom([], [''], ',').map((to) => ({ type: 'direct', to })),
    (w) => fc.constant({ type: 'direct', to: [w.users.member.id, w.users.admin.email] }),
  ],
  'set-typing-status': [
    (w) => one(w.channelIds).map((stream_id) => ({ type: 'channel', stream_id, topic: undefined })),
    () => fc.constant({ type: 'direct', to: [] }),
  ],
  'get-messages': [
    () =>
      fc
        .constantFrom('not a date', '2024-02-30', '2024-13-01', '')
        // Without use_first_unread_anchor, which wins over anchor (as on Zulip's server) and leaves anchor_date unread.
        .map((anchor_date) => ({
          anchor: 'date',
          anchor_date,
          num_before: 1,
          num_after: 1,
          message_ids: undefined,
          use_first_unread_anchor: undefined,
        })),
    (w) => fc.constant({ message_ids: [w.messageIds[0]], anchor: 'newest' }),
    () => fc.constant({ anchor: 'newest', include_anchor: false, num_before: 2, num_after: 2, message_ids: undefined }),
    () => fc.constant({ anchor: 'newest', num_before: 3000, num_after: 3000, message_ids: undefined }),
    () => fc.constant({ client_gravatar: true, client_avatar_service: false }),
    () => fc.constant({ anchor: undefined, use_first_unread_anchor: undefined, message_ids: undefined, num_before: 1, num_after: 1 }),
  ],
  'update-message-flags-for-narrow': [() => fc.constant({ anchor: 'newest', include_anchor: false, num_before: 2, num_after: 2 })],
  'create-channel': [
    (w) =>
      one(w.channelNames)
        .chain((n) => fc.constantFrom(n, n.toUpperCase(), ` ${n} `))
        .map((name) => ({ name })),
  ],
  'create-user': [(w) => one(w.emails).map((email) => ({ email }))],
  'accept-invite-link': [
    (w) =>
      one(w.emails)
        .chain((e) => fc.constantFrom(e, e.toUpperCase()))
        .map((email) => ({ email })),
  ],
  subscribe: [(w) => one(w.channelNames).map((name) => ({ subscriptions: [{ name, color: 'not a colour' }] }))],
  'update-subscription-property': [
    () => fc.constantFrom(true, 'red', '#12345', '#gggggg').map((value) => ({ property: 'color', value })),
    () => fc.constantFrom('yes', '#aa00ff').map((value) => ({ property: 'pin_to_top', value })),
  ],
  'update-subscription-settings': [
    (w) =>
      fc.constant({
        subscription_data: [
          { stream_id: w.channelIds[0], property: 'pin_to_top', value: true },
          { stream_id: w.missingId, property: 'pin_to_top', value: true },
        ],
      }),
    (w) =>
      fc.constant({
        subscription_data: [
          { stream_id: w.channelIds[0], property: 'is_muted', value: true },
          { stream_id: w.channelIds[0], property: 'color', value: 'red' },
        ],
      }),
  ],
  'remove-reaction': [
    () => fc.constantFrom('octopus', 'tada').map((emoji_name) => ({ emoji_name, emoji_code: undefined, reaction_type: 'unicode_emoji' })),
  ],
  'update-user': [(w) => fc.constant({ profile_data: [{ id: w.missingId, value: 'x' }] })],
  'update-realm-user-settings-defaults': [
    () => fc.constantFrom('bogus', 'constructor', '').map((notification_sound) => ({ notification_sound })),
    () => fc.constantFrom('xx', 'toString', 'EN').map((default_language) => ({ default_language })),
    () =>
      fc
        .constantFrom(0, -5, 10_000_000)
        .map((email_notifications_batching_period_seconds) => ({ email_notifications_batching_period_seconds })),
  ],
  'reactivate-user': [(w) => one([w.users.owner.id, w.users.member.id, w.users.bot.id]).map((user_id) => ({ user_id }))],
  'deactivate-user': [(w) => fc.constant({ user_id: w.users.deactivated.id })],
};

/** Operations only organization administrators (or holders of a permission only they have) may call. */
export const ADMINISTRATORS_ONLY = [
  'update-realm-user-settings-defaults',
  'deactivate-user',
  'reactivate-user',
  'create-user',
  'update-user',
  'create-invite-link',
];
