import http from 'node:http';
import https from 'node:https';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { AppContext } from '../context';
import { inTransaction } from '../db/transaction';
import { loadCaller } from '../access/viewer';
import { realmUrl } from '../domain/realm-address';
import { OutgoingUrlPolicy, urlHost } from '../domain/outgoing-webhook-urls';
import { normalizeContent } from '../domain/topics';
import { BotType } from '../domain/users';
import { ZULIP_VERSION } from '../domain/version';
import { ApiError } from '../errors';
import type { Delivery } from '../events/bus';
import { channelNarrowPath, encodeHashComponent } from '../markdown/zulip';
import { listBotServices, listOutgoingWebhookBotIds, SERVICE_INTERFACE, type BotServiceRow } from '../queries/bot-services';
import { getChannelById } from '../queries/channels';
import { getRealmById } from '../queries/realms';
import type { RealmRow, UserRow } from '../queries/rows';
import { getUserById, listUsersByIds } from '../queries/users';
import type { MessageBusEvent } from '../serializers/messages';
import { JobPool, silentLog, type JobLog } from './job-pool';
import { RefreshedIdSet } from './refreshed-id-set';
import { sendMessageInTx, type SendTarget } from './messages';

/**
 * Outgoing webhooks (Zulip's zerver/lib/outgoing_webhook.py and its
 * outgoing_webhooks queue worker): a message that mentions an
 * outgoing-webhook bot in a channel, or a direct message the bot takes part
 * in, is POSTed to the bot's service URL (bot_services), and what the
 * service answers becomes the bot's reply in the same conversation.
 *
 * As the push relay (src/actions/push-relay.ts), all of it runs after the
 * message's transaction committed, off the request: the bus listener looks
 * at an in-memory set of the organization's outgoing-webhook bots and queues
 * a job only when one of them is called — no statement on the send path.
 * Jobs run a few at a time in a bounded queue; each request has a deadline
 * and a bounded answer. URLs are checked against the operator's rule
 * (src/domain/outgoing-webhook-urls.ts) before anything is sent.
 */

/** Jobs waiting or in flight; beyond it new ones are dropped (and logged). */
export const WEBHOOK_QUEUE_LIMIT = 10_000;
/** Requests in flight at once, over all bots. */
export const WEBHOOK_CONCURRENCY = 8;
/** Zulip's MAX_REQUEST_RETRIES: a request that timed out or could not connect is tried again this many times. */
export const MAX_REQUEST_RETRIES = 3;
/** The longest answer read; a longer one fails the request. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;
/** How often the set of outgoing-webhook bots is reread, for bots another process made or changed. */
const BOT_SET_REFRESH_MS = 60_000;
/** Zulip's client name for a bot's reply. */
const RESPONSE_CLIENT = 'OutgoingWebhookResponse';

/** Zulip's trigger names (NotificationTriggers.DIRECT_MESSAGE for the second). */
export type WebhookTrigger = 'mention' | 'direct_message';

interface Job {
  event: MessageBusEvent;
  botId: number;
  trigger: WebhookTrigger;
  /** A retry is for one service of the bot; the first run is for all of them. */
  serviceId: number | null;
  /** Zulip's failed_tries. */
  failedTries: number;
}

/** Failures of one request, named as Zulip's `requests` exceptions, which its notices name. */
class WebhookError extends Error {
  constructor(
    readonly kind: 'Timeout' | 'ConnectionError' | 'Refused' | 'Other',
    name: string,
    message: string,
  ) {
    super(message);
    this.name = name;
  }
}

/** No connection to this address (nothing sent): the next address of the name may be tried. */
class NotConnected extends WebhookError {
  constructor(message: string) {
    super('ConnectionError', 'ConnectionError', message);
  }
}

/** Errors of connecting, before anything was sent. */
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/** The bot's reply could not be sent (Zulip's JsonableError in process_success_response). */
class ReplyError extends Error {}

interface Answer {
  status: number;
  body: Buffer;
}

export class OutgoingWebhooks {
  /** The calls queued or in flight, retries included: `jobs.backlog` (GET /metrics), `jobs.whenIdle()` (tests). */
  readonly jobs = new JobPool(WEBHOOK_CONCURRENCY, WEBHOOK_QUEUE_LIMIT);
  /** The active outgoing-webhook bots with a service: only they can be called. */
  private readonly bots = new RefreshedIdSet(
    () => listOutgoingWebhookBotIds(this.ctx.db),
    (err) => this.log.error({ err: errorText(err) }, 'outgoing webhooks: could not read the bots'),
    WEBHOOK_QUEUE_LIMIT,
  );
  private unsubscribe: (() => void) | null = null;
  private readonly policy: OutgoingUrlPolicy;

  constructor(
    private readonly ctx: Pick<AppContext, 'db' | 'bus' | 'config' | 'caches' | 'messageCache'>,
    private log: JobLog = silentLog,
  ) {
    this.policy = new OutgoingUrlPolicy(ctx.config.outgoingWebhookAllowedHosts);
  }

  setLogger(log: JobLog): void {
    this.log = log;
  }

  start(): void {
    this.unsubscribe = this.ctx.bus.subscribe((d) => this.onDelivery(d));
    this.bots.start(BOT_SET_REFRESH_MS);
  }

  /** Calls not yet made are dropped; requests in flight finish on their own. */
  stop(): void {
    this.unsubscribe?.();
    this.bots.stop();
    this.jobs.stop();
  }

  /** An outgoing-webhook bot got its service in this process (POST /bots): messages may call it from now on. */
  noteBot(userId: number): void {
    this.bots.note(userId);
  }

  /** Rereads the set of bots now (after a change another process made, and in tests). */
  refresh(): Promise<void> {
    return this.bots.refresh();
  }

  /**
   * The bus listener, right after a message's transaction committed:
   * synchronous and in memory. With no outgoing-webhook bot in the set it
   * returns at once; otherwise it looks each mentioned user (a channel
   * message) or each participant (a direct message) up in the set. Zulip's
   * get_service_bot_events: a message a bot sent calls no bot (no loops
   * between bots); in a channel a bot is called when mentioned (personally
   * or through a group; subscribed or not), in a direct message — one to
   * one or a group's — when it is a participant.
   */
  private onDelivery(d: Delivery): void {
    if (d.remote || d.event.type !== 'message') return;
    const bots = this.bots.current;
    if (bots === null) {
      if (!this.bots.whenRead(() => this.onDelivery(d))) this.log.error({}, 'outgoing webhooks: bots not read yet, message dropped');
      return;
    }
    if (bots.size === 0) return;
    const event = d.event as unknown as MessageBusEvent;
    if (event.sender.is_bot) return;
    if (event.message.type === 'stream') {
      for (const id of event.mentioned_user_ids ?? []) if (bots.has(id)) this.enqueue(event, id, 'mention');
    } else {
      for (const id of d.userIds) if (bots.has(id)) this.enqueue(event, id, 'direct_message');
    }
  }

  private enqueue(event: MessageBusEvent, botId: number, trigger: WebhookTrigger, serviceId: number | null = null, failedTries = 0): void {
    const job: Job = { event, botId, trigger, serviceId, failedTries };
    const run = () =>
      this.run(job).catch((err: unknown) =>
        this.log.error({ message: event.message.id, err: errorText(err) }, 'outgoing webhooks: job failed'),
      );
    if (!this.jobs.add(run) && !this.jobs.isStopped) {
      this.log.error({ message: event.message.id, bot: botId }, 'outgoing webhooks: queue full, dropped');
    }
  }

  /** Zulip's OutgoingWebhookWorker.consume: each service of the bot in turn. */
  private async run(job: Job): Promise<void> {
    const bot = await getUserById(this.ctx.db, job.botId);
    // Deactivated, or changed to another kind of bot, since the set was read.
    if (!bot || !bot.is_active || bot.bot_type !== BotType.OUTGOING_WEBHOOK) return;
    const realm = await getRealmById(this.ctx.db, bot.realm_id);
    if (!realm || realm.deactivated) return;
    const services = (await listBotServices(this.ctx.db, [bot.id])).get(bot.id) ?? [];
    for (const service of services) {
      if (job.serviceId !== null && service.id !== job.serviceId) continue;
      await this.call(job, bot, realm, service);
    }
  }

  /** Zulip's do_rest_call: one request and what its outcome calls for. */
  private async call(job: Job, bot: UserRow, realm: RealmRow, service: BotServiceRow): Promise<void> {
    const m = job.event.message;
    const command = job.event.raw_content;
    const slack = service.interface === SERVICE_INTERFACE.slack;
    if (slack && m.type === 'private') {
      await this.failWithMessage(job, bot, realm, "Slack outgoing webhooks don't support direct messages.");
      return;
    }
    const request = slack ? this.slackRequest(job, realm, service) : this.genericRequest(job, bot, service);
    const started = Date.now();
    let answer: Answer;
    try {
      answer = await this.post(service.base_url, request);
    } catch (err) {
      const e = err instanceof WebhookError ? err : new WebhookError('Other', 'RequestException', errorText(err));
      const about = { bot: bot.id, message: m.id, service: service.name, err: e.message };
      if (e.kind === 'Timeout') {
        this.log.info(about, 'outgoing webhook timed out, retrying');
        await this.retry(job, bot, realm, service, `Request timed out after ${this.ctx.config.outgoingWebhookTimeoutSeconds} seconds.`);
      } else if (e.kind === 'ConnectionError') {
        this.log.info(about, 'outgoing webhook could not connect, retrying');
        await this.retry(job, bot, realm, service, 'A connection error occurred. Is my bot server down?');
      } else if (e.kind === 'Refused') {
        // Zulip's proxy (Smokescreen) refuses a private address with a 407
        // answer, which Zulip reports as the third party's: the same notices
        // here, with no request sent.
        this.log.warn(about, 'outgoing webhook URL refused');
        await this.failWithMessage(job, bot, realm, 'Third party responded with 407');
        await this.notifyOwner(job, bot, realm, { status: 407 });
      } else {
        this.log.warn(about, 'outgoing webhook failed');
        await this.failWithMessage(
          job,
          bot,
          realm,
          `An exception of type *${e.name}* occurred for message \`${command}\`! See the Zulip server logs for more information.`,
        );
        await this.notifyOwner(job, bot, realm, { exception: e });
      }
      return;
    }
    this.log.info({ bot: bot.id, realm: realm.string_id, ms: Date.now() - started, status: answer.status }, 'outgoing webhook request');
    if (answer.status >= 200 && answer.status < 300) {
      const text = answer.body.toString('utf8');
      try {
        await this.processSuccess(job, bot, realm, slack, text);
      } catch (err) {
        if (!(err instanceof ReplyError || err instanceof ApiError)) throw err;
        await this.failWithMessage(job, bot, realm, err.message);
        await this.notifyOwner(job, bot, realm, {
          responseContent: pyRepr(text),
          failureMessage: `The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> ${err.message}`,
        });
      }
      return;
    }
    // As Zulip now: any other status (5xx included) fails at once, with no retry.
    this.log.warn({ bot: bot.id, message: m.id, status: answer.status }, 'outgoing webhook answered with an error status');
    await this.failWithMessage(job, bot, realm, `Third party responded with ${answer.status}`);
    await this.notifyOwner(job, bot, realm, { status: answer.status, responseContent: bytesRepr(answer.body) });
  }

  /** Zulip's request_retry and retry_event: again at the back of the queue, then the failure notices. */
  private async retry(job: Job, bot: UserRow, realm: RealmRow, service: BotServiceRow, failureMessage: string): Promise<void> {
    const failedTries = job.failedTries + 1;
    if (failedTries <= MAX_REQUEST_RETRIES) {
      this.enqueue(job.event, job.botId, job.trigger, service.id, failedTries);
      return;
    }
    await this.failWithMessage(job, bot, realm, 'Bot is unavailable');
    await this.notifyOwner(job, bot, realm, { failureMessage });
    this.log.warn({ bot: bot.id, message: job.event.message.id }, 'outgoing webhook: maximum retries exceeded');
  }

  /**
   * Zulip's GenericOutgoingWebhookService: JSON with the message as the bot
   * receives it — its Markdown source as `content` (apply_markdown=false)
   * beside the HTML as `rendered_content`, avatar URLs filled in.
   */
  private genericRequest(job: Job, bot: UserRow, service: BotServiceRow) {
    const { event } = job;
    const message = {
      ...event.message,
      content: event.raw_content,
      content_type: 'text/x-markdown',
      rendered_content: event.message.content,
    };
    const body = {
      data: event.raw_content,
      message,
      bot_email: bot.email,
      bot_full_name: bot.full_name,
      token: service.token,
      trigger: job.trigger,
    };
    return { contentType: 'application/json', body: Buffer.from(JSON.stringify(body)) };
  }

  /**
   * Zulip's SlackOutgoingWebhookService: Slack's legacy outgoing-webhook form
   * fields, ids prefixed as Slack's (T organization, C channel, U user);
   * service_id is the bot's user id, as Zulip sends it.
   */
  private slackRequest(job: Job, realm: RealmRow, service: BotServiceRow) {
    const m = job.event.message;
    const fields: Array<[string, string]> = [
      ['token', service.token],
      ['team_id', `T${realm.id}`],
      // Zulip's realm.host: the organization's host name with the port, if any.
      ['team_domain', new URL(realmUrl(this.ctx.config.externalUrl, realm.string_id)).host],
      ['channel_id', `C${m.stream_id}`],
      ['channel_name', String(m.display_recipient)],
      ['thread_ts', String(m.timestamp)],
      ['timestamp', String(m.timestamp)],
      ['user_id', `U${m.sender_id}`],
      ['user_name', m.sender_full_name],
      ['text', job.event.raw_content],
      ['trigger_word', job.trigger],
      ['service_id', String(job.botId)],
    ];
    return { contentType: 'application/x-www-form-urlencoded', body: Buffer.from(new URLSearchParams(fields).toString()) };
  }

  /**
   * Zulip's process_success_response: the answer must be JSON; `""` (old
   * botserver versions) and `response_not_required` mean no reply; the
   * generic interface replies with `content` (or the deprecated
   * `response_string`), Slack's with `text`; a blank reply is none.
   */
  private async processSuccess(job: Job, bot: UserRow, realm: RealmRow, slack: boolean, text: string): Promise<void> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ReplyError('Invalid JSON in response');
    }
    if (json === '') return;
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ReplyError('Invalid response format');
    const answer = json as Record<string, unknown>;
    let content: string | null = null;
    if (slack) {
      if ('text' in answer) content = pyStr(answer.text);
    } else if (answer.response_not_required !== undefined && pyTruthy(answer.response_not_required)) {
      return;
    } else if ('response_string' in answer) {
      content = pyStr(answer.response_string);
    } else if ('content' in answer) {
      // widget_content (a bot's interactive form) is not supported yet: the reply is the content alone.
      content = pyStr(answer.content);
    }
    if (content === null || content.trim() === '') return;
    await this.replyInConversation(job, bot, realm, content);
  }

  /** Zulip's send_response_message for the conversation of the triggering message: its topic, or every participant. */
  private async replyInConversation(job: Job, bot: UserRow, realm: RealmRow, content: string): Promise<void> {
    const m = job.event.message;
    if (m.type === 'stream') {
      await this.sendAsBot(bot, realm, { channelId: m.stream_id!, topic: m.subject }, content);
    } else {
      const ids = Array.isArray(m.display_recipient) ? m.display_recipient.map((u) => u.id) : [m.sender_id];
      await this.sendAsBot(bot, realm, { userIds: ids }, content);
    }
  }

  /** Zulip's fail_with_message: "Failure! …" from the bot where it was called; a conversation gone takes it nowhere. */
  private async failWithMessage(job: Job, bot: UserRow, realm: RealmRow, message: string): Promise<void> {
    try {
      await this.replyInConversation(job, bot, realm, `Failure! ${message}`);
    } catch (err) {
      this.log.warn({ bot: bot.id, message: job.event.message.id, err: errorText(err) }, 'outgoing webhooks: could not send the failure');
    }
  }

  /** Zulip's notify_bot_owner: a direct message from the bot to its owner, linking the message that called it. */
  private async notifyOwner(
    job: Job,
    bot: UserRow,
    realm: RealmRow,
    what: { status?: number; responseContent?: string; failureMessage?: string; exception?: Error },
  ): Promise<void> {
    if (bot.bot_owner_id === null) return;
    const site = realmUrl(this.ctx.config.externalUrl, realm.string_id);
    let text = `[A message](${messageUrl(site, job.event.message)}) to your bot @_**${bot.full_name}** triggered an outgoing webhook.`;
    if (what.exception) {
      text +=
        '\nWhen trying to send a request to the webhook service, an exception ' +
        `of type ${what.exception.name} occurred:\n\`\`\`\n${what.exception.message}\n\`\`\``;
    } else if (what.failureMessage) {
      text += `\n${what.failureMessage}`;
    } else if (what.status === 407) {
      text += '\nThe URL configured for the webhook is for a private or disallowed network.';
    } else if (what.status) {
      text += `\nThe webhook got a response with status code *${what.status}*.`;
    }
    if (what.responseContent) text += `\nThe response contains the following payload:\n\`\`\`\n${what.responseContent}\n\`\`\``;
    try {
      await this.sendAsBot(bot, realm, { userIds: [bot.bot_owner_id] }, text);
    } catch (err) {
      this.log.warn({ bot: bot.id, err: errorText(err) }, 'outgoing webhooks: could not tell the bot owner');
    }
  }

  /**
   * A message from the bot through the normal send path (checks, events,
   * push). In a channel the posting rules are skipped (Zulip's
   * skip_stream_access_check): the bot answers where it was called.
   */
  private async sendAsBot(
    bot: UserRow,
    realm: RealmRow,
    to: { channelId: number; topic: string } | { userIds: number[] },
    content: string,
  ): Promise<void> {
    const { ctx } = this;
    const linkifiers = await ctx.caches.linkifiers.get(realm.id);
    await inTransaction(ctx.db, async (tx) => {
      let target: SendTarget;
      if ('channelId' in to) {
        const channel = await getChannelById(tx.trx, realm.id, to.channelId);
        if (!channel || channel.deactivated) {
          throw new ApiError(`Channel with ID '${to.channelId}' does not exist`, 'STREAM_DOES_NOT_EXIST');
        }
        target = { kind: 'channel', channel, topic: to.topic };
      } else {
        const others = await listUsersByIds(
          tx.trx,
          realm.id,
          to.userIds.filter((id) => id !== bot.id),
        );
        const gone = others.find((u) => !u.is_active);
        if (gone) throw new ApiError(`'${gone.email}' is no longer using Zulip.`);
        target = { kind: 'direct', recipients: others.length ? others : [bot] };
      }
      await sendMessageInTx(tx, ctx.bus, await loadCaller(tx.trx, bot, realm), target, normalizeContent(content), {
        client: RESPONSE_CLIENT,
        readBySender: false,
        skipChannelAccessCheck: true,
        messageCache: ctx.messageCache,
        linkifiers,
      });
    });
  }

  /**
   * One POST, bounded: the URL's host is resolved and every address checked
   * against the rule before anything is sent, and the connection goes to
   * the address checked (the Host header and TLS name stay the URL's); the
   * whole exchange has OUTGOING_WEBHOOK_TIMEOUT_SECONDS, the answer at most
   * MAX_RESPONSE_BYTES. Redirects are not followed: a 3xx is an answer like
   * any other non-2xx (a redirect could lead anywhere the rule forbids).
   */
  private async post(baseUrl: string, request: { contentType: string; body: Buffer }): Promise<Answer> {
    if (!URL.canParse(baseUrl)) throw new WebhookError('Other', 'InvalidURL', `Invalid URL '${baseUrl}'`);
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new WebhookError('Other', 'InvalidSchema', `No connection adapters were found for '${baseUrl}'`);
    }
    const timeoutMs = this.ctx.config.outgoingWebhookTimeoutSeconds * 1000;
    const aborter = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    // One deadline for the whole exchange: resolving the name, connecting, sending, the answer.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new WebhookError('Timeout', 'Timeout', `no answer in ${timeoutMs} ms`));
        aborter.abort();
      }, timeoutMs);
    });
    try {
      const addresses = await Promise.race([this.checkedAddresses(url), deadline]);
      // Each address in turn while none accepts the connection (a name with
      // an IPv6 and an IPv4 address, a service on one of them): all were checked.
      for (let i = 0; ; i++) {
        try {
          return await Promise.race([exchange(url, addresses[i]!, request, aborter.signal), deadline]);
        } catch (err) {
          if (!(err instanceof NotConnected) || i === addresses.length - 1) throw err;
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** The addresses to connect to, once the rule accepted every address the host has. */
  private async checkedAddresses(url: URL): Promise<Array<{ address: string; family: number }>> {
    const host = urlHost(url);
    const refused = () => new WebhookError('Refused', 'Refused', `${host} is on a private or disallowed network`);
    const family = isIP(host);
    if (family) {
      if (!this.policy.allowsAddress(host)) throw refused();
      return [{ address: host, family }];
    }
    let addresses: Array<{ address: string; family: number }>;
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (err) {
      throw new WebhookError('ConnectionError', 'ConnectionError', `could not resolve ${host}: ${errorText(err)}`);
    }
    if (addresses.length === 0) throw new WebhookError('ConnectionError', 'ConnectionError', `${host} has no address`);
    if (!this.policy.allowsName(host) && addresses.some((a) => !this.policy.allowsAddress(a.address))) throw refused();
    return addresses;
  }
}

/** The request itself, to an address already checked. */
function exchange(
  url: URL,
  to: { address: string; family: number },
  request: { contentType: string; body: Buffer },
  signal: AbortSignal,
): Promise<Answer> {
  const secure = url.protocol === 'https:';
  const host = urlHost(url);
  return new Promise<Answer>((resolve, reject) => {
    const req = (secure ? https : http).request({
      host: to.address,
      family: to.family,
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      agent: false,
      signal,
      ...(secure && !isIP(host) ? { servername: host } : {}),
      ...(url.username ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` } : {}),
      headers: {
        Host: url.host,
        'Content-Type': request.contentType,
        'Content-Length': request.body.length,
        'User-Agent': `ZulipOutgoingWebhook/${ZULIP_VERSION}`,
      },
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof WebhookError) reject(err);
      else if (CONNECT_ERRORS.has(err.code ?? '')) reject(new NotConnected(errorText(err)));
      else reject(new WebhookError('ConnectionError', 'ConnectionError', errorText(err)));
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          req.destroy(new WebhookError('Other', 'ResponseTooLarge', `the answer is larger than ${MAX_RESPONSE_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', (err) =>
        reject(err instanceof WebhookError ? err : new WebhookError('ConnectionError', 'ConnectionError', errorText(err))),
      );
    });
    req.end(request.body);
  });
}

/** Zulip's message_link_url: the conversation's narrow near the message. */
function messageUrl(site: string, m: MessageBusEvent['message']): string {
  if (m.type === 'stream') {
    return `${site}${channelNarrowPath(m.stream_id!, String(m.display_recipient))}/topic/${encodeHashComponent(m.subject)}/near/${m.id}`;
  }
  const ids = (Array.isArray(m.display_recipient) ? m.display_recipient.map((u) => u.id) : [m.sender_id]).sort((a, b) => a - b);
  return `${site}/#narrow/dm/${ids.join(',')}-${ids.length > 2 ? 'group' : 'dm'}/near/${m.id}`;
}

/** Python's str() of a JSON value, as Zulip turns a reply's field into content. */
function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return typeof v === 'number' ? String(v) : JSON.stringify(v);
}

/** Python's truthiness of a JSON value. */
function pyTruthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object' && v !== null) return Object.keys(v).length > 0;
  return Boolean(v);
}

/** Python's repr() of a str, as Zulip quotes an answer's text in the owner's notice. */
export function pyRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of text) out += escapeChar(ch, quote, false);
  return `${quote}${out}${quote}`;
}

/** Python's repr() of bytes (b'…'), as Zulip quotes an error answer's body. */
export function bytesRepr(body: Buffer): string {
  const text = body.toString('latin1');
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of text) out += escapeChar(ch, quote, true);
  return `b${quote}${out}${quote}`;
}

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(ch: string, quote: string, bytes: boolean): string {
  if (ch === quote) return `\\${ch}`;
  if (ESCAPES[ch]) return ESCAPES[ch];
  const code = ch.codePointAt(0)!;
  if (code < 0x20 || code === 0x7f || (bytes && code > 0x7e) || (code >= 0x80 && code < 0xa0)) {
    return `\\x${code.toString(16).padStart(2, '0')}`;
  }
  return ch;
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 300);
}
