import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../../../generated/api';

/**
 * The one way the web client reaches the server: a client typed by the
 * contract (generated/api.d.ts, from openapi/), so a request the contract
 * does not describe does not compile. It calls the API under /json, where
 * the server authenticates the browser's session cookie; unsafe methods carry
 * the session's CSRF token, which the server sets in the readable
 * `csrftoken` cookie.
 *
 * Zulip's conventions for parameters: bodies are form-encoded, and any value
 * that is not text (numbers, booleans, lists, objects) is JSON-encoded; query
 * parameters of PATCH and DELETE the same.
 */
export type Schemas = components['schemas'];

export const CSRF_COOKIE = 'csrftoken';

export function cookie(name: string): string | null {
  for (const part of document.cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      // A malformed escape (a cookie set by something else) is taken as it is.
      try {
        return decodeURIComponent(value);
      } catch {
        return value;
      }
    }
  }
  return null;
}

/** A value as Zulip's REST decoding expects it: text as is, anything else as JSON. */
export function encodeParam(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function formBody(body: unknown): URLSearchParams | FormData {
  if (body instanceof FormData) return body;
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (value !== undefined) form.append(key, encodeParam(value));
  }
  return form;
}

function query(params: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) q.append(key, encodeParam(value));
  }
  return q.toString();
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const csrf: Middleware = {
  onRequest({ request }) {
    if (UNSAFE.has(request.method)) {
      const token = cookie(CSRF_COOKIE);
      if (token) request.headers.set('X-CSRFToken', token);
      // openapi-fetch labels every body JSON unless it is FormData (which sets its own
      // multipart type with its boundary); ours are forms, as Zulip's API reads them.
      if (request.headers.get('Content-Type')?.startsWith('application/json')) {
        request.headers.set('Content-Type', 'application/x-www-form-urlencoded;charset=UTF-8');
      }
    }
    return request;
  },
};

export const api = createClient<paths>({
  baseUrl: '/json',
  credentials: 'same-origin',
  querySerializer: query,
  bodySerializer: formBody,
});
api.use(csrf);

/** A refusal from the server, in Zulip's error shape. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    msg: string,
  ) {
    super(msg);
  }
}

interface Outcome<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful call, or an ApiFailure with Zulip's code and message. */
export async function ok<T>(call: Promise<Outcome<T>>): Promise<T> {
  let outcome: Outcome<T>;
  try {
    outcome = await call;
  } catch (e) {
    throw new ApiFailure(0, 'NETWORK', e instanceof Error ? e.message : 'The server could not be reached');
  }
  if (outcome.response.ok && outcome.data !== undefined) return outcome.data;
  const err = (outcome.error ?? {}) as { code?: string; msg?: string };
  if (outcome.response.status === 401) onSignedOut();
  throw new ApiFailure(outcome.response.status, err.code ?? 'BAD_REQUEST', err.msg ?? outcome.response.statusText);
}

/** The session ended (logged out elsewhere, expired, revoked): back to the login page. */
function onSignedOut(): void {
  const next = encodeURIComponent(location.pathname + location.hash);
  location.assign(`/login/?next=${next}`);
}
