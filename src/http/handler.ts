import type { Request, Response } from 'express';
import type { OpId, Params, Reply } from '../contract';

export type { Data, OpId, Params, Reply } from '../contract';
import type { AppContext } from '../context';
import type { Caller } from '../access/viewer';
import type { ReceivedFile } from './body';
import type { RateLimitNotes } from '../domain/rate-limits';

/** Returned by a handler that wrote the response itself (a file download). */
export const RESPONDED = Symbol('responded');

/**
 * Everything a handler gets: the request's scope, built by the pipeline
 * (src/http/pipeline.ts) and passed here, nowhere else.
 */
export interface Call<K extends OpId> {
  ctx: AppContext;
  /**
   * The authenticated caller (user, organization, memberships), built once
   * per request from what authentication read; operations without security
   * get null. Read it with `caller(call)`.
   */
  caller: Caller | null;
  /** The browser session of a /json request (ADR 0053); null for an API key. */
  sessionId: number | null;
  /**
   * Replaces the browser session of a /json request by a new one (new key,
   * new CSRF token, their cookies on this response), as Django cycles the
   * session key when the password changes; nothing for an API key.
   */
  renewSession: () => Promise<void>;
  params: Params<K>;
  /** Names of the parameters the client sent (defaults not included). */
  sent: ReadonlySet<string>;
  /** The files of an operation that takes them, stored but not yet published (the handler publishes or leaves them). */
  files: readonly ReceivedFile[];
  req: Request;
  res: Response;
  /** The rate limits applied to this request; an action applying one more adds it here (its headers follow). */
  limits: RateLimitNotes;
}

export type Handler<K extends OpId> = (call: Call<K>) => Promise<Reply<K> | typeof RESPONDED>;
export type HandlerTable = { [K in OpId]?: Handler<K> };

/**
 * For handlers of authenticated operations: the caller, which the pipeline
 * guarantees. Being a `Viewer`, it goes as it is to access checks and
 * actions; `caller(call).user` is the user row.
 */
export function caller(call: { caller: Caller | null }): Caller {
  if (!call.caller) throw new Error('authenticated operation reached without a caller');
  return call.caller;
}
