import type { Knex } from 'knex';
import type { AppContext } from '../context';
import { inTransaction, type Tx } from '../db/transaction';
import { ApiError } from '../errors';
import { absoluteLinks, missedMessagesEmail, type MissedConversation, type MissedMessagesData } from '../emails/missed-messages';
import { channelStateOf, emailTrigger, isMentionTrigger, presenceIdle, type EmailTrigger } from '../domain/push-triggers';
import { realmUrl } from '../domain/realm-address';
import { RecipientType } from '../domain/recipients';
import { randomToken } from '../domain/secrets';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/topics';
import { parseSettings } from '../domain/user-settings';
import { VisibilityPolicy } from '../domain/user-topics';
import type { Delivery, EventBus } from '../events/bus';
import type { QueueManager } from '../events/manager';
import { channelNarrowPath, encodeHashComponent } from '../markdown/channel-links';
import { releaseLease, renewLease, takeLease } from '../queries/leases';
import { getDmParticipantUsers, getFlagsForUser, getMessageRows, getUsersByIds, type MessageRow } from '../queries/messages';
import {
  addMissedMessages,
  countActiveAccountsOfAddress,
  deleteMissedMessages,
  findUnsubscribeToken,
  getUnsubscribeToken,
  insertUnsubscribeToken,
  listChannelEmailCandidates,
  listGroupNamesBySize,
  listUsersDue,
  lockDueMissedMessages,
  nextMissedMessageDue,
  type NewMissedMessage,
  type PendingMissedMessage,
} from '../queries/missed-message-emails';
import { listNotificationRecipientStates } from '../queries/notification-recipients';
import { getRealmById } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { READ } from '../queries/unread';
import { getUserById } from '../queries/users';
import type { MessageBusEvent } from '../serializers/messages';
import { queueEmail } from './email-queue';
import { newMissedMessageReplyTo } from './incoming-email';
import { HeldBack } from './held-back';
import { JobPool, silentLog, type JobLog } from './job-pool';
import { RefreshedIdSet } from './refreshed-id-set';
import { leaseHolder, LeaseLost } from './leased-loop';

/**
 * Missed-message emails (docs/architecture/missed-message-emails.md), in two
 * halves, as Zulip's event queue server and its missedmessage_emails worker:
 *
 * - Deciding, after each message's commit and off the request (ADR 0045):
 *   `MissedMessageNotifier` listens to the bus, picks the receivers who may
 *   be mailed at all, and a job reads their settings, subscription, topic
 *   policy and presence, applies Zulip's rules (src/domain/push-triggers.ts
 *   emailTrigger, the same code that decides push) and stores a pending row
 *   for each receiver who is offline. A receiver who is online is held back
 *   in memory until their last event queue expires with the message still
 *   unpolled in it (Zulip's missedmessage_hook).
 * - Mailing, by one process of a cluster (a lease): once a user's batch is
 *   due, the messages still unread and not deleted are grouped per
 *   conversation and one mail per conversation is queued, in the transaction
 *   that deletes the pending rows.
 */

/** Pending decisions; beyond it new ones are dropped (and logged) rather than growing memory without bound. */
const DECISION_QUEUE_LIMIT = 10_000;
const CONCURRENCY = 2;
/** Receivers whose settings one statement reads. */
const USERS_PER_DECISION = 200;
const HELD_BACK_PER_USER = 100;
const HELD_BACK_USERS = 10_000;
/** How often the "may be mailed channel messages" set is reread, for changes made by another process. */
const CANDIDATE_SET_REFRESH_MS = 60_000;

/**
 * The organization's message_content_allowed_in_email_notifications: Parley
 * has no such organization setting yet (POST /register reports it true), so
 * it is always allowed and the user's own setting alone decides.
 */
const REALM_ALLOWS_MESSAGE_CONTENT = true;

interface Held {
  trigger: EmailTrigger;
  mentionedUserGroupId: number | null;
  batchingPeriodSeconds: number;
}

/** The deciding half: pending rows for the receivers of each message who are away. */
export class MissedMessageNotifier {
  /**
   * Users who may be mailed a channel message that does not mention them:
   * with channel email notifications on, a subscription asking for mail, or
   * a followed topic. Everyone else is mailed only direct messages and
   * mentions, which the listener sees in the message's flags.
   */
  private readonly channelCandidates = new RefreshedIdSet(
    () => listChannelEmailCandidates(this.db),
    (err) => this.log.error({ err: errorText(err) }, 'missed-message emails: could not read the users mailed channel messages'),
    DECISION_QUEUE_LIMIT,
  );
  private readonly pool = new JobPool(CONCURRENCY, DECISION_QUEUE_LIMIT);
  private readonly heldBack = new HeldBack<Held>(HELD_BACK_PER_USER, HELD_BACK_USERS);
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly db: Knex,
    private readonly bus: EventBus,
    /** This process's event queues: whether a receiver has one open, and when their last one expires. */
    private readonly queues: Pick<QueueManager, 'hasMessageQueue' | 'onLastMessageQueueExpired'>,
    /** What the decision tells time by, in milliseconds (tests move it). */
    private readonly now: () => number = Date.now,
    private log: JobLog = silentLog,
  ) {}

  setLogger(log: JobLog): void {
    this.log = log;
  }

  start(): void {
    const unsubscribe = this.bus.subscribe((d) => this.onDelivery(d));
    const unhook = this.queues.onLastMessageQueueExpired((userId, held) => this.onQueueExpired(userId, held));
    this.unsubscribe = () => {
      unsubscribe();
      unhook();
    };
    this.channelCandidates.start(CANDIDATE_SET_REFRESH_MS);
  }

  stop(): void {
    this.unsubscribe?.();
    this.channelCandidates.stop();
    this.heldBack.clear();
    this.pool.stop();
  }

  /** Resolves once every decision queued so far is stored (tests, shutdown). */
  whenIdle(): Promise<void> {
    return this.pool.whenIdle();
  }

  /**
   * The bus listener, right after a message's transaction commits: in memory
   * only. A receiver is a candidate when it is not the sender, their copy is
   * unread (a copy from a muted sender arrives read: never mailed, as in
   * Zulip) and the message is direct, mentions them, or they may want
   * channel mail.
   */
  private onDelivery(d: Delivery): void {
    this.noteCandidates(d);
    // With several nodes every one sees every delivery: the node that made the change decides.
    if (d.remote || d.event.type !== 'message' || !d.perUser) return;
    const event = d.event as unknown as MessageBusEvent;
    const channelCandidates = this.channelCandidates.current;
    if (channelCandidates === null) {
      if (!this.channelCandidates.whenRead(() => this.onDelivery(d))) {
        this.log.error(
          { message: event.message.id },
          'missed-message emails: candidates not read yet and too many messages waiting, dropped',
        );
      }
      return;
    }
    const isDirect = event.message.type === 'private';
    const flagsOf = new Map<number, readonly string[]>();
    for (const userId of d.userIds) {
      if (userId === event.message.sender_id) continue;
      const flags = d.perUser(userId).flags ?? [];
      if (flags.includes('read')) continue;
      const mentioned = flags.some((f) => f === 'mentioned' || f === 'stream_wildcard_mentioned' || f === 'topic_wildcard_mentioned');
      if (isDirect || mentioned || channelCandidates.has(userId)) flagsOf.set(userId, flags);
    }
    const ids = [...flagsOf.keys()];
    for (let i = 0; i < ids.length; i += USERS_PER_DECISION) {
      const slice = ids.slice(i, i + USERS_PER_DECISION);
      this.enqueue(`decision on message ${event.message.id}`, () => this.decide(event, slice, flagsOf));
    }
  }

  /**
   * Changes that may get a user mailed channel messages, seen as they are
   * announced to the user's clients (on every node, so a change made on
   * another one counts at once too): channel email notifications turned on
   * in the settings or for a subscription, a topic followed by hand or by a
   * send's automatic policies (a message event's topic_policies_before).
   */
  private noteCandidates(d: Delivery): void {
    const e = d.event as { type: string; property?: string; value?: unknown; visibility_policy?: number; topic_policies_before?: object };
    const turnedOn =
      (e.type === 'user_settings' && e.property === 'enable_stream_email_notifications' && e.value === true) ||
      (e.type === 'subscription' && e.property === 'email_notifications' && e.value === true) ||
      (e.type === 'user_topic' && e.visibility_policy === VisibilityPolicy.FOLLOWED);
    if (turnedOn) for (const userId of d.userIds) this.channelCandidates.note(userId);
    if (e.type === 'message' && e.topic_policies_before) {
      for (const userId of Object.keys(e.topic_policies_before)) this.channelCandidates.note(Number(userId));
    }
  }

  /**
   * Zulip's rules for `userIds`: bots and deactivated users never; the
   * email trigger their settings give, or none; then the offline rule
   * (receiver_is_off_zulip, or idle by presence): a receiver with no event
   * queue here taking messages, or with no activity reported for 140
   * seconds (unless the organization turned presence off), is away and gets
   * a pending row; the others are held back until their queue expires.
   */
  private async decide(event: MessageBusEvent, userIds: number[], flagsOf: ReadonlyMap<number, readonly string[]>): Promise<void> {
    const m = event.message;
    const isDirect = m.type === 'private';
    const channel =
      isDirect || m.stream_id === undefined ? null : { channelId: m.stream_id, recipientId: m.recipient_id, topic: m.subject };
    const now = Math.floor(this.now() / 1000);
    const away: NewMissedMessage[] = [];
    for (const r of await listNotificationRecipientStates(this.db, userIds, channel)) {
      if (r.isBot || !r.isActive) continue;
      const settings = parseSettings(r.settings);
      const trigger = emailTrigger(
        flagsOf.get(r.id) ?? [],
        isDirect,
        settings,
        channelStateOf(r.subscription, event.topic_policies_before?.[r.id]),
      );
      if (trigger === null) continue;
      const held: Held = {
        trigger,
        mentionedUserGroupId: trigger === 'mentioned' ? (event.group_mentions?.users[r.id] ?? null) : null,
        batchingPeriodSeconds: settings.email_notifications_batching_period_seconds,
      };
      const offline = !this.queues.hasMessageQueue(r.id) || presenceIdle(r.lastActiveTime, r.presenceDisabled, now);
      if (offline) away.push({ userId: r.id, messageId: m.id, ...held });
      else this.heldBack.hold(r.id, m.id, held);
    }
    await this.store(away, now);
  }

  /** The user's last queue expired with these messages unpolled in it: those held back are mailed, if still unread then. */
  private onQueueExpired(userId: number, heldMessageIds: number[]): void {
    const rows = this.heldBack.take(userId, heldMessageIds).map(([messageId, held]) => ({ userId, messageId, ...held }));
    if (rows.length > 0) this.enqueue(`held messages of user ${userId}`, () => this.store(rows, Math.floor(this.now() / 1000)));
  }

  private async store(rows: NewMissedMessage[], now: number): Promise<void> {
    if (rows.length > 0) await inTransaction(this.db, (tx) => addMissedMessages(tx.trx, rows, now));
  }

  private enqueue(what: string, work: () => Promise<void>): void {
    const added = this.pool.add(() =>
      work().catch((err: unknown) => this.log.error({ job: what, err: errorText(err) }, 'missed-message emails: failed')),
    );
    if (!added) this.log.error({ job: what }, 'missed-message emails: queue full, dropped');
  }
}

// ---------------------------------------------------------------------------
// The mailing half.

const LEASE = 'missed_message_emails';
/** Users mailed per pass before the lease is renewed. */
const USERS_PER_PASS = 50;

export interface MissedMessageWorkerOptions {
  /** How long the lease lasts unrenewed: how soon another node takes over after a crash. */
  leaseMs: number;
  /** How often the holder looks for due batches (at most; sooner when one is due sooner). */
  pollMs: number;
  onError: (err: unknown) => void;
  /** What the worker tells time by, in milliseconds (tests move it). */
  now?: () => number;
}

export const DEFAULT_MISSED_MESSAGE_WORKER_OPTIONS = { leaseMs: 15_000, pollMs: 5_000 } as const;

type Ctx = Pick<AppContext, 'db' | 'config'>;

/**
 * Starts the worker: one process of a cluster holds the `missed_message_emails`
 * lease and mails the batches that fall due; the others try the lease now
 * and then. The returned function stops it and gives the lease up.
 */
export function startMissedMessageEmails(ctx: Ctx, opts: MissedMessageWorkerOptions): () => Promise<void> {
  const now = opts.now ?? Date.now;
  const holder = leaseHolder(ctx.config.nodeId);
  let holding = false;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;

  const pass = async (): Promise<number> => {
    const t = now();
    holding = await inTransaction(ctx.db, (tx) => takeLease(tx.trx, LEASE, holder, t, t + opts.leaseMs));
    if (!holding) return Math.max(opts.pollMs * 2, opts.leaseMs / 3);
    const lease = { holder, leaseMs: opts.leaseMs, now, onUserError: opts.onError };
    while (!stopped && (await mailDueBatches(ctx, Math.floor(now() / 1000), lease)) === USERS_PER_PASS);
    const next = await nextMissedMessageDue(ctx.db);
    return next === null ? opts.pollMs : Math.max(0, Math.min(opts.pollMs, next * 1000 - now()));
  };
  const tick = () => {
    timer = null;
    if (stopped) return;
    running = pass()
      .catch((err: unknown) => {
        if (!(err instanceof LeaseLost)) opts.onError(err);
        holding = false;
        return opts.pollMs;
      })
      .then((delay) => {
        running = null;
        if (stopped) return;
        timer = setTimeout(tick, delay);
        timer.unref();
      });
  };
  tick();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    await running;
    if (holding) await inTransaction(ctx.db, (tx) => releaseLease(tx.trx, LEASE, holder)).catch(() => undefined);
  };
}

/**
 * Mails the batches due at `now` (seconds), at most USERS_PER_PASS users,
 * one transaction per user; returns how many users it looked at. With
 * `lease`, each transaction first renews it (a holder that lost it mails
 * nothing); tests call it without one.
 */
export async function mailDueBatches(
  ctx: Ctx,
  now: number,
  lease?: { holder: string; leaseMs: number; now: () => number; onUserError?: (err: unknown) => void },
): Promise<number> {
  const users = await listUsersDue(ctx.db, now, USERS_PER_PASS);
  for (const userId of users) {
    try {
      await inTransaction(ctx.db, async (tx) => {
        if (lease && !(await renewLease(tx.trx, LEASE, lease.holder, lease.now() + lease.leaseMs))) throw new LeaseLost();
        await mailBatchInTx(ctx, tx, userId, now);
      });
    } catch (err) {
      // The lease lost, or a database that is away: the batch waits for the next pass.
      if (err instanceof LeaseLost || (err instanceof ApiError && err.status >= 500)) throw err;
      // A batch that cannot be mailed (a defect) is logged and dropped, as Zulip's worker drops
      // an event it fails on: kept, it would come first in every pass and block everyone's mail.
      (lease?.onUserError ?? rethrow)(err);
      await inTransaction(ctx.db, async (tx) => {
        const rows = await lockDueMissedMessages(tx.trx, userId, now);
        await deleteMissedMessages(
          tx.trx,
          rows.map((r) => r.id),
        );
      });
    }
  }
  return users.length;
}

const rethrow = (err: unknown) => {
  throw err;
};

/**
 * One user's due batch (Zulip's handle_missedmessage_emails): nothing for a
 * deactivated user or organization, or a user who turned
 * enable_offline_email_notifications off since (Zulip checks that setting
 * here for every trigger); of the rest, only messages the user still has
 * (not deleted, still accessible) and has not read. One mail per
 * conversation — a channel's topic, or a direct message conversation —
 * least recently active first. The rows go in the same transaction.
 */
async function mailBatchInTx(ctx: Ctx, tx: Tx, userId: number, now: number): Promise<void> {
  const rows = await lockDueMissedMessages(tx.trx, userId, now);
  if (rows.length === 0) return;
  await deleteMissedMessages(
    tx.trx,
    rows.map((r) => r.id),
  );
  const user = await getUserById(tx.trx, userId);
  const realm = user && (await getRealmById(tx.trx, user.realm_id));
  if (!user || !realm || !user.is_active || user.is_bot || realm.deactivated) return;
  const settings = parseSettings(user.settings);
  if (!settings.enable_offline_email_notifications) return;

  const flags = await getFlagsForUser(
    tx.trx,
    userId,
    rows.map((r) => r.message_id),
  );
  const unread = rows.filter((r) => {
    const f = flags.get(r.message_id);
    return f !== undefined && (f & READ) === 0;
  });
  const messages = await getMessageRows(
    tx.trx,
    unread.map((r) => r.message_id),
  );
  if (messages.length === 0) return;
  const rowOf = new Map(unread.map((r) => [r.message_id, r]));
  const conversations = new Map<string, MessageRow[]>();
  for (const m of messages) {
    const key = m.recipient_type === RecipientType.CHANNEL ? `${m.recipient_id}:${m.topic_key}` : `${m.recipient_id}`;
    conversations.set(key, [...(conversations.get(key) ?? []), m]);
  }
  const ordered = [...conversations.values()].sort((a, b) => a[a.length - 1]!.id - b[b.length - 1]!.id);
  const people = await getUsersByIds(
    tx.trx,
    messages.map((m) => m.sender_id),
  );
  const dmParticipants = await getDmParticipantUsers(tx.trx, [
    ...new Set(messages.filter((m) => m.recipient_type !== RecipientType.CHANNEL).map((m) => m.recipient_id)),
  ]);
  const site = realmUrl(ctx.config.externalUrl, realm.string_id);
  const unsubscribeUrl = `${site}/accounts/unsubscribe/missed_messages/${await unsubscribeTokenInTx(tx, user.id, 'missed_messages')}`;
  const realmNameInSubject = await realmNameInSubjectOf(tx, user, settings.realm_name_in_email_notifications_policy);
  const showContent = REALM_ALLOWS_MESSAGE_CONTENT && settings.message_content_in_email_notifications;

  for (const list of ordered) {
    const triggers = list.map((m) => rowOf.get(m.id)!);
    const conversation = conversationOf(list[0]!, user, people, dmParticipants);
    const mentioned = triggers.some((r) => isMentionTrigger(r.trigger));
    // As Zulip: in a channel mail caused by mentions, the senders named are those who mentioned.
    const causing = list.filter((m) => !mentioned || isMentionTrigger(rowOf.get(m.id)!.trigger));
    const data: MissedMessagesData = {
      realmName: realm.name,
      realmNameInSubject,
      conversation,
      mentioned,
      mentionedGroup: await mentionedGroupName(tx, triggers),
      senders: [...new Set(causing.map((m) => people.get(m.sender_id)?.full_name ?? 'Unknown user'))],
      messages: showContent
        ? list.map((m) => ({
            sender: people.get(m.sender_id)?.full_name ?? 'Unknown user',
            html: absoluteLinks(m.rendered_content ?? '', site),
            text: m.content,
          }))
        : null,
      messageCount: list.length,
      conversationUrl: conversationUrl(site, list[0]!, user, dmParticipants),
      unsubscribeUrl,
      settingsUrl: `${site}/#settings/notifications`,
    };
    await queueEmail(ctx, tx, {
      template: missedMessagesEmail,
      data,
      to: user.delivery_email,
      language: settings.default_language,
      realmId: realm.id,
      fromName: realm.name,
      // Zulip's create_missed_message_address: a reply goes where the mail's first message is (src/actions/incoming-email.ts).
      replyTo: await newMissedMessageReplyTo(ctx, tx, user.id, list[0]!.id, now),
    });
  }
}

function conversationOf(
  m: MessageRow,
  user: UserRow,
  people: ReadonlyMap<number, UserRow>,
  dmParticipants: ReadonlyMap<number, UserRow[]>,
): MissedConversation {
  if (m.recipient_type === RecipientType.CHANNEL) {
    return { kind: 'channel', channel: m.channel_name ?? '', topic: m.topic === '' ? EMPTY_TOPIC_DISPLAY_NAME : m.topic };
  }
  const others = (dmParticipants.get(m.recipient_id) ?? []).filter((u) => u.id !== user.id);
  if (others.length <= 1) return { kind: 'direct', sender: others[0]?.full_name ?? people.get(m.sender_id)?.full_name ?? '' };
  return { kind: 'group', others: others.map((u) => u.full_name) };
}

/** The conversation in the web app: the topic's narrow, or the direct message's (the other people's ids). */
function conversationUrl(site: string, m: MessageRow, user: UserRow, dmParticipants: ReadonlyMap<number, UserRow[]>): string {
  if (m.recipient_type === RecipientType.CHANNEL) {
    return `${site}${channelNarrowPath(m.channel_id ?? 0, m.channel_name ?? '')}/topic/${encodeHashComponent(m.topic)}`;
  }
  const others = (dmParticipants.get(m.recipient_id) ?? []).filter((u) => u.id !== user.id);
  if (others.length === 1) return `${site}/#narrow/dm/${others[0]!.id}-${encodeHashComponent(others[0]!.full_name.replace(/ /g, '-'))}`;
  const ids = (dmParticipants.get(m.recipient_id) ?? []).map((u) => u.id).sort((a, b) => a - b);
  return `${site}/#narrow/dm/${ids.join(',')}-group`;
}

/** The group named when the mail's mentions were all through one group (Zulip names the smallest). */
async function mentionedGroupName(tx: Tx, rows: readonly PendingMissedMessage[]): Promise<string | null> {
  const mentions = rows.filter((r) => r.trigger === 'mentioned');
  if (mentions.length === 0 || mentions.some((r) => r.mentioned_user_group_id === null)) return null;
  return (await listGroupNamesBySize(tx.trx, [...new Set(mentions.map((r) => r.mentioned_user_group_id!))]))[0] ?? null;
}

/**
 * realm_name_in_email_notifications_policy: 2 always, 3 never, 1 automatic
 * — when the user's address has accounts in more than one organization here.
 */
async function realmNameInSubjectOf(tx: Tx, user: UserRow, policy: number): Promise<boolean> {
  if (policy === 2) return true;
  if (policy !== 1) return false;
  return (await countActiveAccountsOfAddress(tx.trx, user.delivery_email)) > 1;
}

/** The kinds of mail a one-click link turns off, and the setting each turns off (Zulip's email_unsubscribers, where Parley has the setting). */
export const UNSUBSCRIBE_KINDS = {
  missed_messages: { setting: 'enable_offline_email_notifications', what: 'missed message' },
  digest: { setting: 'enable_digest_emails', what: 'digest' },
  login: { setting: 'enable_login_emails', what: 'login' },
  marketing: { setting: 'enable_marketing_emails', what: 'marketing' },
} as const;
export type UnsubscribeKind = keyof typeof UNSUBSCRIBE_KINDS;

/** The user's one-click unsubscribe secret for `kind`: made once, then reused by every mail. */
export async function unsubscribeTokenInTx(tx: Tx, userId: number, kind: UnsubscribeKind): Promise<string> {
  const existing = await getUnsubscribeToken(tx.trx, userId, kind);
  if (existing !== null) return existing;
  await insertUnsubscribeToken(tx.trx, userId, kind, randomToken(24), Math.floor(Date.now() / 1000));
  return (await getUnsubscribeToken(tx.trx, userId, kind))!;
}

/** Whose link `token` is, if it is one of `kind`. */
export async function findUnsubscriber(db: Knex, kind: string, token: string): Promise<{ user: UserRow; realm: RealmRow } | null> {
  const found = await findUnsubscribeToken(db, token);
  if (!found || found.kind !== kind) return null;
  const user = await getUserById(db, found.userId);
  const realm = user && (await getRealmById(db, user.realm_id));
  return user && realm ? { user, realm } : null;
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 300);
}
