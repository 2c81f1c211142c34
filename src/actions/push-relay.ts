import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import nacl from 'tweetnacl';
import type { Config } from '../config';
import { realmUrl, urlOnSite } from '../domain/realm-address';
import { PUSH_REGISTRATION_LIVENESS_SECONDS, pushContent, REGISTRATION_ERROR_CODES, REGISTRATION_EXPIRED } from '../domain/push-devices';
import type { Delivery, EventBus } from '../events/bus';
import {
  confirmPushToken,
  listDeliverableDevices,
  listUnansweredRegistrations,
  listUserIdsWithPushDevices,
  refusePushToken,
  type DeliverableDevice,
} from '../queries/client-devices';
import type { MessageBusEvent } from '../serializers/messages';
import type { QueueManager } from '../events/manager';
import { channelStateOf, presenceIdle, pushTrigger, type PushTrigger } from '../domain/push-triggers';
import { parseSettings } from '../domain/user-settings';
import { listNotificationRecipientStates } from '../queries/notification-recipients';
import { getFlagsForUser } from '../queries/messages';
import { READ } from '../queries/unread';
import {
  recordActivePushNotifications,
  takeActivePushNotifications,
  takeActivePushNotificationsOfMessages,
} from '../queries/active-push-notifications';
import { fullAvatarUrl } from '../serializers/users';
import { JobPool, silentLog, type JobLog } from './job-pool';
import { RefreshedIdSet } from './refreshed-id-set';
import { HeldBack } from './held-back';

/**
 * Delivery of end-to-end encrypted push notifications through the push
 * relay (PUSH_RELAY_URL), Parley's counterpart of Zulip's mobile push
 * notification service ("bouncer").
 *
 * The relay speaks the shape Zulip's server uses with its bouncer, as JSON:
 * - POST {relay}/api/v1/remotes/push/e2ee/register
 *   {realm_url, user_id, device_id, token_kind, token_id, bouncer_public_key,
 *   encrypted_push_registration} → 200 {device_id: <the relay's id>}. Only the
 *   relay can decrypt the registration (it holds the private half of
 *   bouncer_public_key); the server keeps the relay's id for the device.
 * - POST {relay}/api/v1/remotes/push/e2ee/notify
 *   {realm_url, push_requests: [{device_id: <relay id>, push_key_id,
 *   encrypted_data}]}, one request per message; encrypted_data is the Base64
 *   of a 24-byte nonce followed by the secret box (XSalsa20-Poly1305) of the
 *   JSON payload under the device's push_key, which the relay cannot open.
 *
 * Everything here runs after the message's transaction committed, off the
 * request: the send path only hands the bus event to `onDelivery`, which
 * looks at an in-memory set of users who have devices and queues a job when
 * a notified receiver is in it — no statement on the send path. Jobs run a
 * few at a time; a relay that fails (network error, timeout, 5xx, 429) is
 * retried with exponential backoff a bounded number of times, in a bounded
 * queue; every drop is logged. The message itself is stored and delivered to
 * event queues whatever happens here.
 */

/** Jobs waiting or in flight; beyond it new jobs are dropped (and logged) rather than growing memory without bound. */
export const RELAY_QUEUE_LIMIT = 10_000;
const CONCURRENCY = 4;
const MAX_BACKOFF_MS = 5 * 60 * 1000;
const REQUEST_TIMEOUT_MS = 10_000;
const USERS_PER_REQUEST = 200;
/** Messages held back for a present user, per user and users (oldest forgotten first). */
const HELD_BACK_PER_USER = 100;
const HELD_BACK_USERS = 10_000;
/** How often the "has devices" set is reread, for registrations made by another server process. */
const DEVICE_SET_REFRESH_MS = 60_000;

interface Job {
  what: string;
  path: string;
  build: () => Promise<object | null>;
  onSuccess?: (answer: unknown) => Promise<void>;
  /** Once the job is refused, or abandoned after its last attempt. */
  onGiveUp?: (err: unknown) => Promise<void>;
  attempts: number;
}

export interface RegistrationToForward {
  userId: number;
  /** The user's organization, whose URL the relay is told. */
  realmStringId: string;
  deviceId: number;
  tokenKind: string;
  tokenId: string;
  bouncerPublicKey: string;
  encryptedPushRegistration: string;
}

/** A failure worth retrying (the relay or the network), as opposed to a refusal. */
class RetryableError extends Error {}

/** The relay refused a request (a 4xx other than 429), with the Zulip error code of its answer, if any. */
class RelayRefusal extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/**
 * The code a device's refused registration reports: the relay's, when it is
 * one Zulip's devices report, else BAD_REQUEST; a registration never answered
 * (the attempts ran out) is REQUEST_EXPIRED, so the app sends a fresh one.
 */
export function registrationErrorCode(err: unknown): string {
  if (!(err instanceof RelayRefusal)) return REGISTRATION_EXPIRED;
  return err.code !== null && REGISTRATION_ERROR_CODES.has(err.code) ? err.code : 'BAD_REQUEST';
}

export class PushRelay {
  /** The users with a push device: only their messages may notify anyone. */
  private readonly usersWithDevices = new RefreshedIdSet(
    () => listUserIdsWithPushDevices(this.db),
    (err) => this.log.error({ err: errorText(err) }, 'push relay: could not read the users with push devices'),
    RELAY_QUEUE_LIMIT,
  );
  private readonly pool = new JobPool(CONCURRENCY, RELAY_QUEUE_LIMIT);
  private unsubscribe: (() => void) | null = null;
  private stopped = false;

  /** Messages not notified because their receiver was present, by receiver (onQueueExpired). */
  private readonly heldBack = new HeldBack<{ event: MessageBusEvent; trigger: PushTrigger }>(HELD_BACK_PER_USER, HELD_BACK_USERS);

  constructor(
    private readonly db: Knex,
    private readonly bus: EventBus,
    private readonly config: Pick<Config, 'pushRelayUrl' | 'pushRelayBackoffMs' | 'pushRelayMaxAttempts' | 'externalUrl'>,
    /**
     * This process's event queues: whether a receiver has one open, and when
     * their last one expires. Without them every receiver counts as away.
     */
    private readonly queues: Pick<QueueManager, 'hasMessageQueue' | 'onLastMessageQueueExpired'> | null = null,
    private log: JobLog = silentLog,
  ) {}

  setLogger(log: JobLog): void {
    this.log = log;
  }

  start(): void {
    const unsubscribe = this.bus.subscribe((d) => this.onDelivery(d));
    const unhook = this.queues?.onLastMessageQueueExpired((userId, held) => this.onQueueExpired(userId, held));
    this.unsubscribe = () => {
      unsubscribe();
      unhook?.();
    };
    this.usersWithDevices.start(DEVICE_SET_REFRESH_MS);
    void this.resendUnanswered();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.usersWithDevices.stop();
    this.heldBack.clear();
    this.pool.stop();
  }

  /** Jobs queued, in flight or waiting for a retry (GET /metrics). */
  get backlog(): number {
    return this.pool.backlog;
  }

  /** Resolves once nothing is queued, in flight or waiting for a retry (tests, shutdown). */
  whenIdle(): Promise<void> {
    return this.pool.whenIdle();
  }

  /** A registration committed in this process: its user may get notifications from now on. */
  noteDevice(userId: number): void {
    this.usersWithDevices.note(userId);
  }

  /** Forwards a (re)registration to the relay and records the relay's id for the device. */
  forwardRegistration(r: RegistrationToForward): void {
    this.enqueue({
      what: `registration of device ${r.deviceId} of user ${r.userId}`,
      path: '/api/v1/remotes/push/e2ee/register',
      build: async () => ({
        realm_url: realmUrl(this.config.externalUrl, r.realmStringId),
        user_id: r.userId,
        device_id: r.deviceId,
        token_kind: r.tokenKind,
        token_id: r.tokenId,
        bouncer_public_key: r.bouncerPublicKey,
        encrypted_push_registration: r.encryptedPushRegistration,
      }),
      onSuccess: async (answer) => {
        const id = (answer as { device_id?: unknown } | null)?.device_id;
        if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw new RelayRefusal('the relay answered without a device_id', null);
        // Unless the device's token changed meanwhile (or the device is gone): then this answer is stale.
        if (await confirmPushToken(this.db, r.deviceId, r.tokenId, id)) {
          this.publishDeviceUpdate(r, { push_token_id: r.tokenId, pending_push_token_id: null });
        }
      },
      onGiveUp: async (err) => {
        const code = registrationErrorCode(err);
        if (await refusePushToken(this.db, r.deviceId, r.tokenId, code)) {
          this.publishDeviceUpdate(r, { push_registration_error_code: code });
        }
      },
    });
  }

  /**
   * Registrations the relay never answered, whose jobs went with a process
   * that stopped or crashed: forwarded again at start, so that no device
   * waits a day for its registration to count as expired. With several
   * processes one may be forwarded twice; the relay's second answer finds
   * nothing pending and changes nothing.
   */
  private async resendUnanswered(): Promise<void> {
    try {
      const since = Math.floor(Date.now() / 1000) - PUSH_REGISTRATION_LIVENESS_SECONDS;
      for (const d of await listUnansweredRegistrations(this.db, since)) {
        this.forwardRegistration({
          userId: d.user_id,
          realmStringId: d.realm_string_id,
          deviceId: d.id,
          tokenKind: d.token_kind!,
          tokenId: d.pending_token_id!,
          bouncerPublicKey: d.bouncer_public_key!,
          encryptedPushRegistration: d.encrypted_push_registration!,
        });
      }
    } catch (err) {
      this.log.error({ err: errorText(err) }, 'push relay: could not read the registrations to send again');
    }
  }

  /** The outcome of a registration, to the device's owner (Zulip's device update event). */
  private publishDeviceUpdate(
    r: RegistrationToForward,
    fields: { push_token_id?: string; pending_push_token_id?: null; push_registration_error_code?: string },
  ): void {
    this.bus.publish({ event: { type: 'device', op: 'update', device_id: r.deviceId, ...fields }, userIds: [r.userId] });
  }

  /**
   * The bus listener, called right after a message's transaction commits:
   * synchronous and in memory only. It picks the receivers who could be
   * notified at all — not the sender, with a device, whose copy is unread
   * (a copy arrives read above all from a sender the receiver muted, which
   * never notifies, as in Zulip) — and queues the decision, which reads
   * their settings off the request (decideNotified).
   */
  private onDelivery(d: Delivery): void {
    // With several nodes every one sees every delivery: the node that made the change notifies.
    if (d.remote) return;
    if (d.event.type === 'update_message_flags' || d.event.type === 'delete_message') {
      this.onReadOrGone(d);
      return;
    }
    if (d.event.type !== 'message' || !d.perUser) return;
    const event = d.event as unknown as MessageBusEvent;
    const known = this.usersWithDevices.current;
    if (known === null) {
      // The set is still loading (the first moments after start): decide once it is there.
      if (!this.usersWithDevices.whenRead(() => this.onDelivery(d))) {
        this.log.error({ message: event.message.id }, 'push relay: devices not read yet and too many messages waiting, dropped');
      }
      return;
    }
    if (known.size === 0) return;
    const candidates = new Map<number, readonly string[]>();
    for (const userId of d.userIds) {
      if (userId === event.message.sender_id || !known.has(userId)) continue;
      const flags = d.perUser(userId).flags ?? [];
      if (!flags.includes('read')) candidates.set(userId, flags);
    }
    // One decision and one relay request per message and slice of users, so
    // that a message to a large channel makes statements and requests of bounded size.
    const ids = [...candidates.keys()];
    for (let i = 0; i < ids.length; i += USERS_PER_REQUEST) {
      const slice = ids.slice(i, i + USERS_PER_REQUEST);
      this.enqueueNotification(event, () => this.decideNotified(event, slice, candidates));
    }
  }

  /**
   * Zulip's rules for who of `userIds` is notified now (src/domain/push-triggers.ts):
   * bots and deactivated users never; otherwise the receiver's settings give
   * a trigger or none; with a trigger, a receiver who turned off
   * enable_online_push_notifications is notified only while idle — no
   * event queue here taking messages, or no activity reported for 140
   * seconds (unless the organization turned presence off). The others are
   * held back until their queue expires unread (onQueueExpired).
   */
  private async decideNotified(
    event: MessageBusEvent,
    userIds: number[],
    flagsOf: ReadonlyMap<number, readonly string[]>,
  ): Promise<Map<number, PushTrigger>> {
    const m = event.message;
    const isDirect = m.type === 'private';
    const channel =
      isDirect || m.stream_id === undefined ? null : { channelId: m.stream_id, recipientId: m.recipient_id, topic: m.subject };
    const now = Math.floor(Date.now() / 1000);
    const notified = new Map<number, PushTrigger>();
    for (const r of await listNotificationRecipientStates(this.db, userIds, channel)) {
      if (r.isBot || !r.isActive) continue;
      const settings = parseSettings(r.settings);
      const state = channelStateOf(r.subscription, event.topic_policies_before?.[r.id]);
      const trigger = pushTrigger(flagsOf.get(r.id) ?? [], isDirect, settings, state);
      if (trigger === null) continue;
      const idle = !this.queues?.hasMessageQueue(r.id) || presenceIdle(r.lastActiveTime, r.presenceDisabled, now);
      if (idle || settings.enable_online_push_notifications) notified.set(r.id, trigger);
      else this.heldBack.hold(r.id, m.id, { event, trigger });
    }
    return notified;
  }

  /**
   * The user's last queue taking messages expired: what was held back for
   * them and still sat unpolled in it is notified now, if still unread
   * (Zulip's missedmessage_hook). The rest was seen on that client.
   */
  private onQueueExpired(userId: number, heldMessageIds: number[]): void {
    for (const [id, held] of this.heldBack.take(userId, heldMessageIds)) {
      this.enqueueNotification(held.event, async () => {
        const flags = (await getFlagsForUser(this.db, userId, [id])).get(id);
        return flags !== undefined && (flags & READ) === 0 ? new Map([[userId, held.trigger]]) : new Map();
      });
    }
  }

  /**
   * Messages read (update_message_flags adding `read`, one user's, `all` for
   * every message) or deleted or no longer accessible (delete_message, to
   * everyone who had them): the notifications the phones still show for
   * them are removed (Zulip's removal payload, feature level 413). Only
   * messages recorded as notified (active_push_notifications) are named, so
   * a read on the web of a message no phone heard of sends nothing. The
   * rows go when read, before the relay answers: a removal that fails for
   * good leaves a stale notification, never a second removal.
   */
  private onReadOrGone(d: Delivery): void {
    const known = this.usersWithDevices.current;
    const mayHaveDevices = (userId: number) => known === null || known.has(userId);
    if (d.event.type === 'update_message_flags') {
      const e = d.event as { op?: string; flag?: string; messages?: number[]; all?: boolean };
      if (e.op !== 'add' || e.flag !== 'read') return;
      const ids = e.all ? null : (e.messages ?? []);
      if (ids !== null && ids.length === 0) return;
      for (const userId of d.userIds) {
        if (!mayHaveDevices(userId)) continue;
        this.enqueueRemoval(`removal for user ${userId}`, async () => {
          const taken = await takeActivePushNotifications(this.db, userId, ids);
          return taken.length ? new Map([[userId, taken]]) : new Map();
        });
      }
      return;
    }
    const e = d.event as { message_ids?: number[]; message_id?: number };
    const ids = e.message_ids ?? (e.message_id !== undefined ? [e.message_id] : []);
    if (ids.length === 0 || !d.userIds.some(mayHaveDevices)) return;
    const audience = new Set(d.userIds);
    this.enqueueRemoval(`removal of ${ids.length} deleted message(s)`, async () => {
      const byUser = await takeActivePushNotificationsOfMessages(this.db, ids);
      // A message moved out of some users' reach is "deleted" for those users only: the others keep theirs.
      for (const userId of byUser.keys()) if (!audience.has(userId)) byUser.delete(userId);
      return byUser;
    });
  }

  /** One relay request removing, on each user's devices, the notifications of their messages `find` returns. */
  private enqueueRemoval(what: string, find: () => Promise<Map<number, number[]>>): void {
    // Found once: the rows are taken as they are read, so a retry sends what the first attempt found.
    let found: Promise<Map<number, number[]>> | null = null;
    this.enqueue({
      what,
      path: '/api/v1/remotes/push/e2ee/notify',
      build: async () => {
        const byUser = await (found ??= find());
        if (byUser.size === 0) return null;
        const devices = await listDeliverableDevices(this.db, [...byUser.keys()]);
        if (devices.length === 0) return null;
        return this.notifyBody(devices, (device, url) => removalPayload(byUser.get(device.user_id) ?? [], device, url));
      },
    });
  }

  private enqueueNotification(event: MessageBusEvent, decide: () => Promise<ReadonlyMap<number, PushTrigger>>): void {
    this.enqueue({
      what: `notification of message ${event.message.id}`,
      path: '/api/v1/remotes/push/e2ee/notify',
      build: async () => {
        const notified = await decide();
        if (notified.size === 0) return null;
        const devices = await listDeliverableDevices(this.db, [...notified.keys()]);
        if (devices.length === 0) return null;
        // What the phones will show, so that reading or deleting the message removes it (onReadOrGone).
        await recordActivePushNotifications(this.db, event.message.id, [...new Set(devices.map((d) => d.user_id))]);
        return this.notifyBody(devices, (device, url) => messagePayload(event, device, url, notified.get(device.user_id)));
      },
    });
  }

  /** A notify request: each device's payload, encrypted with its key. */
  private notifyBody(devices: DeliverableDevice[], payloadOf: (device: DeliverableDevice, siteUrl: string) => object): object {
    // The users of one request are all of one organization: the first device's is every device's.
    const url = realmUrl(this.config.externalUrl, devices[0]!.realm_string_id);
    return {
      realm_url: url,
      push_requests: devices.map((device) => ({
        device_id: device.relay_device_id,
        push_key_id: device.push_key_id,
        encrypted_data: encryptForDevice(device, payloadOf(device, url)),
      })),
    };
  }

  private enqueue(job: Omit<Job, 'attempts'>): void {
    if (this.stopped) return;
    const queued: Job = { ...job, attempts: 0 };
    if (!this.pool.add(() => this.run(queued))) {
      this.log.error({ job: job.what }, 'push relay: queue full, dropped');
      // A dropped registration is reported at once (REQUEST_EXPIRED), so its app may register again.
      void job
        .onGiveUp?.(new Error('queue full'))
        .catch((e: unknown) => this.log.error({ job: job.what, err: errorText(e) }, 'push relay: could not record the refusal'));
    }
  }

  private async run(job: Job): Promise<void> {
    job.attempts++;
    try {
      const body = await job.build();
      if (body !== null) {
        const answer = await this.post(job.path, body);
        await job.onSuccess?.(answer);
      }
    } catch (err) {
      const retryable = err instanceof RetryableError;
      if (retryable && job.attempts < this.config.pushRelayMaxAttempts && !this.stopped) {
        const delay = Math.min(this.config.pushRelayBackoffMs * 2 ** (job.attempts - 1), MAX_BACKOFF_MS);
        this.log.warn({ job: job.what, attempt: job.attempts, retryInMs: delay, err: errorText(err) }, 'push relay: failed, will retry');
        this.pool.addLater(delay, () => this.run(job));
        return;
      }
      this.log.error({ job: job.what, attempts: job.attempts, err: errorText(err) }, 'push relay: gave up');
      if (job.onGiveUp) {
        await job
          .onGiveUp(err)
          .catch((e: unknown) => this.log.error({ job: job.what, err: errorText(e) }, 'push relay: could not record the refusal'));
      }
    }
  }

  private async post(path: string, body: object): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(`${this.config.pushRelayUrl}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new RetryableError(`relay unreachable: ${errorText(err)}`);
    }
    const text = await res.text().catch(() => '');
    if (res.status >= 500 || res.status === 429) throw new RetryableError(`relay answered ${res.status}`);
    // Any other refusal (a registration the relay cannot decrypt, an unknown
    // device) will not change by asking again.
    if (!res.ok) throw new RelayRefusal(`relay refused with ${res.status}: ${text.slice(0, 200)}`, codeOf(text));
    try {
      return text ? (JSON.parse(text) as unknown) : null;
    } catch {
      return null;
    }
  }
}

/**
 * The plaintext of a message notification, in Zulip's E2EE payload format
 * (api_docs "Mobile notifications", feature level 429): the identity
 * (realm, user), the sender with an absolute avatar URL, the message id and
 * time as integers, the content as text (src/domain/push-devices.ts
 * pushContent); a channel message names its channel and topic, a direct
 * message every participant in `recipient_user_ids`, sorted (the sender and
 * the receiver of a 1:1 conversation; the user alone in their own). The
 * apps parse no other form of a direct message's recipients from an
 * encrypted payload.
 */
export function messagePayload(
  event: MessageBusEvent,
  device: Pick<DeliverableDevice, 'user_id' | 'realm_name'>,
  siteUrl: string,
  trigger?: PushTrigger,
): object {
  const m = event.message;
  const avatar = fullAvatarUrl(event.sender);
  const base = {
    type: 'message',
    realm_name: device.realm_name,
    realm_url: siteUrl,
    user_id: device.user_id,
    message_id: m.id,
    sender_id: m.sender_id,
    sender_full_name: m.sender_full_name,
    sender_avatar_url: avatar.startsWith('/') ? urlOnSite(siteUrl, avatar) : avatar,
    time: m.timestamp,
    content: pushContent(m.content),
  };
  if (m.type === 'stream') {
    // A notification a group mention caused names the group (the smallest, when several name the user).
    const groupId = trigger === 'mentioned' ? event.group_mentions?.users[device.user_id] : undefined;
    const group =
      groupId === undefined ? {} : { mentioned_user_group_id: groupId, mentioned_user_group_name: event.group_mentions!.names[groupId] };
    return { ...base, ...group, recipient_type: 'channel', channel_id: m.stream_id, channel_name: m.display_recipient, topic: m.subject };
  }
  const people = Array.isArray(m.display_recipient) ? m.display_recipient.map((u) => u.id) : [m.sender_id, device.user_id];
  return { ...base, recipient_type: 'direct', recipient_user_ids: [...new Set(people)].sort((a, b) => a - b) };
}

/** At most this many message ids in a removal (Zulip's MAX_APNS_MESSAGE_IDS): the newest. */
const MAX_REMOVAL_MESSAGE_IDS = 200;

/** Zulip's E2EE removal payload (feature level 413): the messages whose notifications go, newest 200, ascending. */
export function removalPayload(
  messageIds: readonly number[],
  device: Pick<DeliverableDevice, 'user_id' | 'realm_name'>,
  siteUrl: string,
): object {
  const ids = [...messageIds].sort((a, b) => a - b).slice(-MAX_REMOVAL_MESSAGE_IDS);
  return { type: 'remove', message_ids: ids, realm_name: device.realm_name, realm_url: siteUrl, user_id: device.user_id };
}

/** Base64 of nonce ‖ secretbox(JSON payload) under the device's key (the bytes after push_key's cryptosystem byte). */
export function encryptForDevice(device: Pick<DeliverableDevice, 'push_key'>, payload: object): string {
  const key = Buffer.from(device.push_key, 'base64').subarray(1);
  const nonce = randomBytes(nacl.secretbox.nonceLength);
  const box = nacl.secretbox(Buffer.from(JSON.stringify(payload), 'utf8'), nonce, key);
  return Buffer.concat([nonce, Buffer.from(box)]).toString('base64');
}

/** The `code` of a Zulip-shaped error body, if the text is one. */
function codeOf(text: string): string | null {
  try {
    const code = (JSON.parse(text) as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 300);
}
