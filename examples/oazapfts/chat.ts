// A generated SDK from oazapfts: one function per operation (named after its
// operationId) over @oazapfts/runtime; generated --optimistic, so each returns
// its success body and throws an HttpError for any other answer.
import type { RequestOpts } from '@oazapfts/runtime';
import { getEvents, getMessages, registerQueue, sendMessage, subscribe } from './generated/api';
import { accountFromEnv, ChatResult, ServerAccount, zulipEncode } from '../zulip-encoding';

/** The options every call takes: where the server is and who asks. */
export function parleyClient(account: ServerAccount): RequestOpts {
  return {
    baseUrl: `${account.url}/api/v1`,
    headers: { Authorization: `Basic ${Buffer.from(`${account.email}:${account.apiKey}`).toString('base64')}` },
  };
}

/**
 * Calls an operation that takes a form with its body sent as Zulip reads it. The runtime
 * sets the form's Content-Type but joins list items with commas (an object becomes
 * `[object Object]`); the body is typed against the operation, and this call's fetch sends
 * it in our encoding instead.
 */
function withForm<B, R>(operation: (body: B, opts?: RequestOpts) => Promise<R>, body: NoInfer<B>, opts: RequestOpts): Promise<R> {
  return operation(body, { ...opts, fetch: (url, init) => fetch(url, { ...init, body: zulipEncode(body) }) });
}

/** Creates a channel, long-polls for a message event while sending a message, then fetches the message. */
export async function chat(account: ServerAccount, channel: string): Promise<ChatResult> {
  const client = parleyClient(account);
  const subscribed = await withForm(
    subscribe,
    { subscriptions: [{ name: channel, description: 'Created by the oazapfts example' }] },
    client,
  );

  const { queue_id, last_event_id } = await withForm(registerQueue, { event_types: ['message'] }, client);
  if (!queue_id) throw new Error('register: no queue_id');
  // The long poll is open before the message exists: the server answers it when the event arrives.
  const polled = getEvents(queue_id, { lastEventId: last_event_id }, client);

  const sent = await withForm(sendMessage, { type: 'channel', to: channel, topic: 'greetings', content: 'Hello from oazapfts' }, client);

  const events = await polled;
  const eventMessageIds = events.events.flatMap((e) => (e.type === 'message' ? [e.message.id] : []));

  // The SDK types narrow as the contract's schema and sends it as JSON text, as Zulip reads it.
  const fetched = await getMessages(
    { anchor: 'newest', numBefore: 10, numAfter: 0, narrow: [{ operator: 'channel', operand: channel }] },
    client,
  );

  return {
    channelSubscribed: Object.values(subscribed.subscribed).flat(),
    sentMessageId: sent.id,
    fetchedMessageIds: fetched.messages.map((m) => m.id),
    eventMessageIds,
  };
}

if (require.main === module) {
  chat(accountFromEnv(), process.argv[2] ?? 'sdk examples').then(
    (result) => console.log(JSON.stringify(result)),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
