import type { Request, Response } from 'express';
import type { components, operations } from '../../generated/api';
import type { AppContext } from '../context';
import type { UserRow } from '../queries/rows';

/** The operationIds of openapi/, as generated into generated/api.d.ts. */
export type OpId = keyof operations;

type FormBody<O> = O extends { requestBody?: { content: { 'application/x-www-form-urlencoded': infer B } } } ? B : unknown;
// openapi-typescript writes `query?: never` for an operation without query parameters.
type OrUnknown<T> = [T] extends [never] ? unknown : T;
type RawQueryOf<O> = O extends { parameters: { query?: infer Q } } ? OrUnknown<NonNullable<Q>> : unknown;

/**
 * Query parameters the contract sends as JSON (`content: application/json`):
 * openapi-typescript types them as text, but the validator has decoded them
 * by the time a handler runs. The one place that says so; a test keeps
 * JSON_QUERY_PARAMS equal to the contract's list.
 */
export interface JsonQueryParams {
  'get-messages': { narrow?: components['schemas']['Narrow']; message_ids?: Array<components['schemas']['Id']> };
}
export const JSON_QUERY_PARAMS: { readonly [K in keyof JsonQueryParams]: ReadonlyArray<keyof JsonQueryParams[K]> } = {
  'get-messages': ['narrow', 'message_ids'],
};
type QueryOf<O, K> = K extends keyof JsonQueryParams ? Omit<RawQueryOf<O>, keyof JsonQueryParams[K]> & JsonQueryParams[K] : RawQueryOf<O>;
type PathOf<O> = O extends { parameters: { path?: infer P } } ? OrUnknown<NonNullable<P>> : unknown;
type SuccessBody<O> = O extends { responses: { 200: { content: { 'application/json': infer R } } } } ? R : never;

/** Decoded, validated parameters of an operation: path, query and body merged. */
export type Params<K extends OpId> = FormBody<operations[K]> & QueryOf<operations[K], K> & PathOf<operations[K]>;
/** What a handler returns: the success body without the envelope the pipeline adds. */
export type Data<K extends OpId> = Omit<SuccessBody<operations[K]>, 'result' | 'msg' | 'ignored_parameters_unsupported'>;

/** Returned by a handler that wrote the response itself (a file download). */
export const RESPONDED = Symbol('responded');

export interface Call<K extends OpId> {
  ctx: AppContext;
  /** The authenticated caller; operations without security get null. */
  user: UserRow | null;
  params: Params<K>;
  /** Names of the parameters the client sent (defaults not included). */
  sent: ReadonlySet<string>;
  req: Request;
  res: Response;
}

export type Handler<K extends OpId> = (call: Call<K>) => Promise<Data<K> | typeof RESPONDED>;
export type HandlerTable = { [K in OpId]?: Handler<K> };

/** For handlers of authenticated operations: the caller, which the pipeline guarantees. */
export function caller(call: { user: UserRow | null }): UserRow {
  if (!call.user) throw new Error('authenticated operation reached without a user');
  return call.user;
}
