import type { components, operations } from '../generated/api';
import type { MaybeEncoded } from './serializers/encoded-json';

/**
 * The contract's types, for every layer: an operation's decoded request
 * parameters and success body, and the wire objects (components/schemas),
 * all generated from openapi/ (generated/api.d.ts). Actions, access
 * functions and serializers take and return these; nothing restates them.
 */

/** The operationIds of openapi/, as generated into generated/api.d.ts. */
export type OpId = keyof operations;

// An upload's body is multipart only; its text fields are parameters like a form's (src/http/pipeline.ts).
type FormBody<O> = O extends { requestBody?: { content: { 'application/x-www-form-urlencoded': infer B } } }
  ? B
  : O extends { requestBody?: { content: { 'multipart/form-data': infer M } } }
    ? M
    : unknown;
// openapi-typescript writes `query?: never` for an operation without query parameters.
type OrUnknown<T> = [T] extends [never] ? unknown : T;
type RawQueryOf<O> = O extends { parameters: { query?: infer Q } } ? OrUnknown<NonNullable<Q>> : unknown;

/**
 * Query parameters the contract sends as JSON (`content: application/json`):
 * openapi-typescript types them as text, but the validator has decoded them
 * by the time a handler runs. The one place that says so (src/http runs the
 * validator); a test keeps JSON_QUERY_PARAMS equal to the contract's list.
 */
export interface JsonQueryParams {
  'get-messages': { narrow?: components['schemas']['Narrow']; message_ids?: Array<components['schemas']['Id']> };
  'get-users': { user_ids?: Array<components['schemas']['Id']> };
  'check-messages-match-narrow': { narrow: components['schemas']['Narrow']; msg_ids: number[] };
  'get-bot-storage': { keys?: string[] };
}
export const JSON_QUERY_PARAMS: { readonly [K in keyof JsonQueryParams]: ReadonlyArray<keyof JsonQueryParams[K]> } = {
  'get-messages': ['narrow', 'message_ids'],
  'get-users': ['user_ids'],
  'check-messages-match-narrow': ['narrow', 'msg_ids'],
  'get-bot-storage': ['keys'],
};
type QueryOf<O, K> = K extends keyof JsonQueryParams ? Omit<RawQueryOf<O>, keyof JsonQueryParams[K]> & JsonQueryParams[K] : RawQueryOf<O>;
type PathOf<O> = O extends { parameters: { path?: infer P } } ? OrUnknown<NonNullable<P>> : unknown;
type SuccessBody<O> = O extends { responses: { 200: { content: { 'application/json': infer R } } } } ? R : never;

/** Decoded, validated parameters of an operation: path, query and body merged. */
export type Params<K extends OpId> = FormBody<operations[K]> & QueryOf<operations[K], K> & PathOf<operations[K]>;
/** What a handler returns: the success body without the envelope the pipeline adds. */
export type Data<K extends OpId> = Omit<SuccessBody<operations[K]>, 'result' | 'msg' | 'ignored_parameters_unsupported'>;

/**
 * What a handler returns: the operation's data, where any top-level field
 * may come already encoded by its serializer (src/serializers/encoded-json.ts:
 * a page of messages, a topic list), typed as the value it encodes.
 */
export type Reply<K extends OpId> = { [F in keyof Data<K>]: MaybeEncoded<Data<K>[F]> };

/** A wire object of the contract by its schema name: `Schema<'Message'>`. */
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];
