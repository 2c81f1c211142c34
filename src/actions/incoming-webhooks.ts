import type { AppContext } from '../context';
import type { Caller } from '../access/viewer';
import { ApiError } from '../errors';
import { requestedChannel, runIntegration, MissingEventHeaderError, type WebhookRequest } from '../integrations/run';
import {
  AnomalousPayloadError,
  InvalidJsonError,
  MisconfiguredPayloadError,
  UnsupportedEventError,
  type Integration,
  type WebhookMessage,
} from '../integrations/types';
import { doNotifyBotOwner } from './bot-owner-notices';
import { doSendMessage } from './messages';

/** What the endpoint answers: success, or Zulip's 200 error body for an event the integration does not support. */
export type WebhookAnswer = { kind: 'posted'; messageIds: number[] } | { kind: 'unsupported'; webhookName: string; eventType: string };

/**
 * POST /api/v1/external/{integration}: runs the integration on the service's
 * request, applies Zulip's generic options and sends what it produced as
 * the caller (check_send_webhook_message). Each message is a normal send
 * (src/actions/messages.ts), with every check of POST /messages: a webhook
 * costs what a send costs.
 */
export async function doIncomingWebhook(
  ctx: AppContext,
  caller: Caller,
  integration: Integration,
  req: WebhookRequest,
): Promise<WebhookAnswer> {
  let outcome;
  try {
    outcome = runIntegration(integration, req);
  } catch (e) {
    if (e instanceof UnsupportedEventError) {
      return { kind: 'unsupported', webhookName: integration.displayName, eventType: e.eventType };
    }
    if (e instanceof MissingEventHeaderError) {
      await doNotifyBotOwner(ctx, caller.user, caller.realm, missingHeaderNotice(caller, integration, e.header));
      throw new ApiError(e.message, 'MISSING_HTTP_EVENT_HEADER', 400, { header: e.header });
    }
    if (e instanceof InvalidJsonError) {
      await doNotifyBotOwner(ctx, caller.user, caller.realm, invalidJsonNotice(integration));
      throw new ApiError('Malformed JSON');
    }
    if (e instanceof MisconfiguredPayloadError) {
      await doNotifyBotOwner(ctx, caller.user, caller.realm, e.notice(caller.user.full_name));
      throw new ApiError(e.message);
    }
    if (e instanceof AnomalousPayloadError) {
      throw new ApiError(`Unable to parse request: Did ${integration.displayName} generate this event?`, 'ANOMALOUS_WEBHOOK_PAYLOAD', 400, {
        webhook_name: integration.displayName,
      });
    }
    throw e;
  }
  // Zulip's client name for the integration (the messages' sending_client holds 30 characters).
  const client = `Zulip${integration.displayName.replace(/\s+/g, '')}Webhook`.slice(0, 30);
  const messageIds: number[] = [];
  for (const message of outcome.messages) {
    const id = await sendOne(ctx, caller, integration, req, message, client);
    if (id !== null) messageIds.push(id);
  }
  return { kind: 'posted', messageIds };
}

async function sendOne(
  ctx: AppContext,
  caller: Caller,
  integration: Integration,
  req: WebhookRequest,
  message: WebhookMessage,
  client: string,
): Promise<number | null> {
  const stream = requestedChannel(integration, req);
  if (stream === null) {
    // No channel: a direct message to the bot's owner (the caller itself when it has none).
    const to = caller.user.bot_owner_id ?? caller.user.id;
    return (await doSendMessage(ctx, caller, { type: 'direct', to: [to], content: message.content }, client)).id;
  }
  const topic = message.topic;
  const to = /^\d+$/.test(stream) ? Number(stream) : stream;
  try {
    const id = (await doSendMessage(ctx, caller, { type: 'stream', to, topic, content: message.content }, client)).id;
    // Zulip tells a bot's owner when the bot posts where nobody reads (send_pm_if_empty_stream);
    // the channel and its subscribers are in the channel cache the send just read.
    const found = await ctx.caches.channels.forSending(caller.realm.id, to);
    if (found?.channel && found.subscriberIds.length === 0) {
      await doNotifyBotOwner(ctx, caller.user, caller.realm, emptyChannelNotice(caller, found.channel.name));
    }
    return id;
  } catch (e) {
    // As in Zulip, a channel that does not exist is the owner's to fix, not the service's:
    // the owner is told and the service gets success.
    if (e instanceof ApiError && e.code === 'STREAM_DOES_NOT_EXIST') {
      await doNotifyBotOwner(ctx, caller.user, caller.realm, missingChannelNotice(caller, to));
      return null;
    }
    throw e;
  }
}

function botIdentity(caller: Caller): string {
  return `\`${caller.user.delivery_email}\``;
}

function missingChannelNotice(caller: Caller, to: string | number): string {
  return typeof to === 'number'
    ? `Your bot ${botIdentity(caller)} tried to send a message to channel ID ${to}, but there is no channel with that ID.`
    : `Your bot ${botIdentity(caller)} tried to send a message to channel #**${to}**, but that channel does not exist. ` +
        'Click [here](#channels/new) to create it.';
}

function emptyChannelNotice(caller: Caller, name: string): string {
  return `Your bot ${botIdentity(caller)} tried to send a message to channel #**${name}**. The channel exists but does not have any subscribers.`;
}

function invalidJsonNotice(integration: Integration): string {
  return (
    `Your ${integration.displayName} webhook sent a request whose body is not the JSON this integration reads. ` +
    'Check that the service is set to send JSON to this URL.'
  );
}

function missingHeaderNotice(caller: Caller, integration: Integration, header: string): string {
  return (
    `Your bot ${caller.user.full_name} received a request at /api/v1/external/${integration.name} without the ` +
    `HTTP ${header} header, which is how ${integration.displayName} names its events. The URL may belong to ` +
    'another integration, or the service may be a version that does not send this header.'
  );
}
