import type { ErrorCode, ErrorFields, ErrorStatus } from '../generated/errors';

export type { ErrorCode, ErrorFields, ErrorStatus };

/** The codes the contract declares at this status (e.g. the 401s). */
export type CodeWithStatus<S extends number> = { [C in ErrorCode]: S extends ErrorStatus<C> ? C : never }[ErrorCode];
/** The codes whose error bodies need no field beyond result, msg and code. */
type CodeWithoutRequiredFields = { [C in ErrorCode]: Record<string, never> extends ErrorFields[C] ? C : never }[ErrorCode];

/**
 * Typed errors. Each carries Zulip's `code`, an HTTP status and any extra
 * fields of the error body; src/http/errors.ts maps them to the wire in one
 * place. Zulip's default is 400 BAD_REQUEST.
 *
 * The code, the status and the fields are typed from the contract
 * (generated/errors.ts, from openapi/): a code no operation declares, a
 * status at which the contract never gives that code, or fields its error
 * body does not have (or lacks) do not compile; the status may be left out
 * only for a code the contract gives with 400. Whether the *operation* that
 * throws it declares the code is checked on every response in jest and
 * dredd (test/support/contract.ts, contract-tests/hooks.js; ADR 0036).
 */
export class ApiError<C extends ErrorCode = ErrorCode> extends Error {
  constructor(message: string, code?: C & CodeWithStatus<400> & CodeWithoutRequiredFields);
  constructor(
    message: string,
    code: C & CodeWithoutRequiredFields,
    status: ErrorStatus<C>,
    data?: ErrorFields[C],
    headers?: Record<string, string>,
  );
  constructor(message: string, code: C, status: ErrorStatus<C>, data: ErrorFields[C], headers?: Record<string, string>);
  constructor(
    message: string,
    readonly code: C = 'BAD_REQUEST' as C,
    readonly status: ErrorStatus<C> = 400 as ErrorStatus<C>,
    readonly data: ErrorFields[C] = {} as ErrorFields[C],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Zulip answers missing *and* inaccessible objects with the same 400, so nothing leaks. */
export const invalidMessage = () => new ApiError('Invalid message(s)');
export const noSuchUser = () => new ApiError('No such user');
export const invalidChannelId = () => new ApiError('Invalid channel ID');

export class MissingArgumentError extends ApiError<'REQUEST_VARIABLE_MISSING'> {
  constructor(varName: string) {
    super(`Missing '${varName}' argument`, 'REQUEST_VARIABLE_MISSING', 400, { var_name: varName });
  }
}

export class IncompatibleParametersError extends ApiError<'BAD_REQUEST'> {
  constructor(names: string[]) {
    const list = names.join(', ');
    super(`Unsupported parameter combination: ${list}`, 'BAD_REQUEST', 400, { parameters: list });
  }
}

/**
 * 401s: Zulip sends WWW-Authenticate with every one of them, `Basic` under
 * /api and `Session` elsewhere (/json, where the web app's session cookie
 * is the credential; its JsonErrorHandler picks the scheme by path).
 */
export class UnauthorizedError extends ApiError<CodeWithStatus<401>> {
  constructor(message: string, code: CodeWithStatus<401> = 'UNAUTHORIZED', scheme: 'Basic' | 'Session' = 'Basic') {
    super(message, code, 401, {}, { 'WWW-Authenticate': `${scheme} realm="zulip"` });
  }
}

/** An upload that would take the organization past its upload_quota_mib (Zulip's RealmUploadQuotaError). */
export const realmUploadQuotaExceeded = () => new ApiError("Upload would exceed your organization's upload quota.", 'REALM_UPLOAD_QUOTA');

/** Role-gate failures are 400 UNAUTHORIZED_PRINCIPAL in Zulip, not 403. */
export const adminRequired = () => new ApiError('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
export const ownerRequired = () => new ApiError('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');

export class NotImplementedError extends ApiError<'NOT_IMPLEMENTED'> {
  constructor(operationId: string) {
    super(`Not implemented yet: ${operationId}`, 'NOT_IMPLEMENTED', 501);
  }
}

// ---------------------------------------------------------------- the database unreachable

/**
 * The connection went away (a database node killed or restarted, a proxy
 * failing over): mysql2 marks such errors `fatal`; the errnos are the
 * server's own "gone away", "lost connection", "connection killed" and
 * "shutdown in progress".
 */
export function isConnectionLost(err: unknown): boolean {
  const e = err as { code?: string; errno?: number; fatal?: boolean; name?: string } | undefined;
  if (!e) return false;
  // No connection could be had from the pool in time (knex's acquire timeout): the database is not reachable.
  if (e.name === 'KnexTimeoutError') return true;
  if (e.fatal === true) return true;
  if (e.errno !== undefined && [1053, 1927, 2006, 2013, 4031].includes(e.errno)) return true;
  return ['PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'PROTOCOL_SEQUENCE_TIMEOUT'].includes(
    e.code ?? '',
  );
}

/** The database could not be reached (or was not ready) for the whole retry budget. */
export class DatabaseUnavailableError extends ApiError<'SERVER_NOT_READY'> {
  constructor() {
    super('The database is unavailable; try again shortly.', 'SERVER_NOT_READY', 503, {}, { 'Retry-After': '1' });
  }
}

/**
 * The connection was lost while COMMIT was on its way: the change may or may
 * not be stored, and running the work again could store it twice (a message
 * sent twice). Parley says so instead of guessing; the client can look
 * before it tries again.
 */
export class CommitOutcomeUnknownError extends ApiError<'SERVER_NOT_READY'> {
  constructor() {
    super(
      'The database connection was lost while saving; the change may or may not have been saved. Check before retrying.',
      'SERVER_NOT_READY',
      503,
      {},
      { 'Retry-After': '1' },
    );
  }
}
