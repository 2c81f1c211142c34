// A generated SDK from @hey-api/openapi-ts: one function per operation
// (named after its operationId) over a fetch client configured once.
import { createClient } from './generated/client';
import { getEvents, getMessages, registerQueue, sendMessage, subscribe } from './generated/sdk.gen';
import { accountFromEnv, ChatResult, ServerAccount, zulipEncode } from '../zulip-encoding';

export function parleyClient(account: ServerAccount) {
  return createClient({
    baseUrl: `${account.url}/api/v1`,
    // The contract's security scheme is HTTP Basic: the SDK encodes this as `Basic <base64>`.
    auth: `${account.email}:${account.apiKey}`,
    // JSON query parameters such as narrow are sent as JSON text.
    querySerializer: (query) => zulipEncode(query),
  });
}

/** Creates a channel, long-polls for a message event while sending a message, then fetches the message. */
export async function chat(account: ServerAccount, channel: string): Promise<ChatResult> {
  const client = parleyClient(account);
  // The SDK sends the form's Content-Type for each operation that takes one, with its own
  // serializer (it repeats a key per list item), set per call; ours, passed with the call, wins.
  const form = { client, bodySerializer: (body: unknown) => zulipEncode(body), throwOnError: true } as const;
  const subscribed = await subscribe({
    ...form,
    body: { subscriptions: [{ name: channel, description: 'Created by the hey-api example' }] },
  });

  const queue = await registerQueue({ ...form, body: { event_types: ['message'] } });
  const { queue_id, last_event_id } = queue.data;
  if (!queue_id) throw new Error('register: no queue_id');
  // The long poll is open before the message exists: the server answers it when the event arrives.
  const polled = getEvents({ client, throwOnError: true, query: { queue_id, last_event_id } });

  const sent = await sendMessage({
    ...form,
    body: { type: 'channel', to: channel, topic: 'greetings', content: 'Hello from hey-api' },
  });

  const events = await polled;
  const eventMessageIds = events.data.events.flatMap((e) => (e.type === 'message' ? [e.message.id] : []));

  // The SDK types narrow as the contract's schema; the query serializer sends it as JSON.
  const fetched = await getMessages({
    client,
    throwOnError: true,
    query: { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: channel }] },
  });

  return {
    channelSubscribed: Object.values(subscribed.data.subscribed).flat(),
    sentMessageId: sent.data.id,
    fetchedMessageIds: fetched.data.messages.map((m) => m.id),
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
