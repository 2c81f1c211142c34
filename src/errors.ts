/**
 * Typed errors. Each carries Zulip's `code`, an HTTP status and any extra
 * fields of the error body; src/http/errors.ts maps them to the wire in one
 * place. Zulip's default is 400 BAD_REQUEST.
 */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string = 'BAD_REQUEST',
    readonly status: number = 400,
    readonly data: Record<string, unknown> = {},
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

export class MissingArgumentError extends ApiError {
  constructor(varName: string) {
    super(`Missing '${varName}' argument`, 'REQUEST_VARIABLE_MISSING', 400, { var_name: varName });
  }
}

export class IncompatibleParametersError extends ApiError {
  constructor(names: string[]) {
    const list = names.join(', ');
    super(`Unsupported parameter combination: ${list}`, 'BAD_REQUEST', 400, { parameters: list });
  }
}

/** 401s: Zulip sends WWW-Authenticate with every one of them. */
export class UnauthorizedError extends ApiError {
  constructor(message: string, code = 'UNAUTHORIZED') {
    super(message, code, 401, {}, { 'WWW-Authenticate': 'Basic realm="zulip"' });
  }
}

/** Role-gate failures are 400 UNAUTHORIZED_PRINCIPAL in Zulip, not 403. */
export const adminRequired = () => new ApiError('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
export const ownerRequired = () => new ApiError('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');

export class NotImplementedError extends ApiError {
  constructor(operationId: string) {
    super(`Not implemented yet: ${operationId}`, 'NOT_IMPLEMENTED', 501);
  }
}
