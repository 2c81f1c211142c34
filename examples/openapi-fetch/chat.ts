// A typed client from openapi-typescript (types only) and openapi-fetch (a
// small fetch wrapper that checks paths, parameters and bodies against them).
import createClient from 'openapi-fetch';
import type { paths } from './generated/api';
import { accountFromEnv, ChatResult, ServerAccount, zulipEncode } from '../zulip-encoding';

export function parleyClient(account: ServerAccount) {
  return createClient<paths>({
    baseUrl: `${account.url}/api/v1`,
    headers: {
      Authorization: `Basic ${Buffer.from(`${account.email}:${account.apiKey}`).toString('base64')}`,
      // Every body this API takes is a form; openapi-fetch would send JSON.
      'Content-Type': 'application/x-www-form-urlencoded',
    },
    bodySerializer: (body) => zulipEncode(body),
    querySerializer: (query) => zulipEncode(query),
  });
}

/** Creates a channel, long-polls for a message event while sending a message, then fetches the message. */
export async function chat(account: ServerAccount, channel: string): Promise<ChatResult> {
  const client = parleyClient(account);
  const subscribed = await client.POST('/users/me/subscriptions', {
    body: { subscriptions: [{ name: channel, description: 'Created by the openapi-fetch example' }] },
  });
  if (!subscribed.data) throw new Error(`subscribe: ${JSON.stringify(subscribed.error)}`);

  const queue = await client.POST('/register', { body: { event_types: ['message'] } });
  if (!queue.data) throw new Error(`register: ${JSON.stringify(queue.error)}`);
  const { queue_id, last_event_id } = queue.data;
  if (!queue_id) throw new Error('register: no queue_id');
  // The long poll is open before the message exists: the server answers it when the event arrives.
  const polled = client.GET('/events', { params: { query: { queue_id, last_event_id } } });

  const sent = await client.POST('/messages', {
    body: { type: 'channel', to: channel, topic: 'greetings', content: 'Hello from openapi-fetch' },
  });
  if (!sent.data) throw new Error(`send: ${JSON.stringify(sent.error)}`);

  const events = await polled;
  if (!events.data) throw new Error(`events: ${JSON.stringify(events.error)}`);
  const eventMessageIds = events.data.events.flatMap((e) => (e.type === 'message' ? [e.message.id] : []));

  // openapi-typescript types a JSON query parameter as its text.
  const narrow = JSON.stringify([{ operator: 'channel', operand: channel }]);
  const fetched = await client.GET('/messages', { params: { query: { anchor: 'newest', num_before: 10, num_after: 0, narrow } } });
  if (!fetched.data) throw new Error(`messages: ${JSON.stringify(fetched.error)}`);

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
