/**
 * How Zulip reads a form field or a query parameter: a string is taken as it
 * is, and every other value (number, boolean, list, object) as JSON text, so
 * `to=general` but `subscriptions=[{"name":"general"}]` and `num_before=5`.
 * Generic form serializers repeat a key per list item, join the items with
 * commas or spell objects as `a[b]=…`, which the server does not read; every
 * example has its client use this function instead.
 */
export function zulipEncode(values: unknown): string {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(values ?? {})) {
    if (value === undefined) continue;
    out.append(key, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return out.toString();
}

/** Where the examples find a server and whose credentials they use (a zuliprc's three values). */
export interface ServerAccount {
  url: string;
  email: string;
  apiKey: string;
}

/** What each example reports: the ids it saw at each step, for the caller to compare. */
export interface ChatResult {
  channelSubscribed: string[];
  sentMessageId: number;
  fetchedMessageIds: number[];
  eventMessageIds: number[];
}

export function accountFromEnv(): ServerAccount {
  const { PARLEY_URL, PARLEY_EMAIL, PARLEY_API_KEY } = process.env;
  if (!PARLEY_URL || !PARLEY_EMAIL || !PARLEY_API_KEY) throw new Error('set PARLEY_URL, PARLEY_EMAIL and PARLEY_API_KEY');
  return { url: PARLEY_URL, email: PARLEY_EMAIL, apiKey: PARLEY_API_KEY };
}
