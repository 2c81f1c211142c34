/**
 * Compile-time checks (`tsc --noEmit`, part of `make test`; jest does not
 * run this file): ApiError's code, status and fields are typed from the
 * contract (generated/errors.ts, ADR 0036). Each `@ts-expect-error` fails
 * the type check the day the line under it compiles, that is, the day the
 * contract stops holding errors to it.
 */
import { ApiError, UnauthorizedError, type CodeWithStatus } from '../../src/errors';

// What the contract declares compiles, the status left out where the code is a 400.
export const plain = new ApiError('Invalid message(s)');
export const coded = new ApiError('Reaction already exists.', 'REACTION_ALREADY_EXISTS');
export const notFound = new ApiError('Saved snippet does not exist.', 'BAD_REQUEST', 404);
export const missing = new ApiError("Missing 'content' argument", 'REQUEST_VARIABLE_MISSING', 400, { var_name: 'content' });
export const conflict = new ApiError("Channel 'x' already exists", 'CHANNEL_ALREADY_EXISTS', 409);
export const deactivated = new UnauthorizedError('Account is deactivated');

// @ts-expect-error a code no operation declares.
export const unknownCode = new ApiError('Nope', 'NO_SUCH_CODE');
// @ts-expect-error BAD_REQUEST is never a 500 in the contract (a server fault is a plain Error).
export const wrongStatus = new ApiError('Internal server error', 'BAD_REQUEST', 500);
// @ts-expect-error CHANNEL_ALREADY_EXISTS is a 409: the default 400 would contradict the contract.
export const defaultStatus = new ApiError("Channel 'x' already exists", 'CHANNEL_ALREADY_EXISTS');
// @ts-expect-error REQUEST_VARIABLE_MISSING's body names the variable.
export const missingField = new ApiError("Missing 'content' argument", 'REQUEST_VARIABLE_MISSING', 400);
// @ts-expect-error a field that code's body does not have.
export const extraField = new ApiError('Invalid message(s)', 'BAD_REQUEST', 400, { message_id: 1 });
// @ts-expect-error 401 codes only.
export const notA401: CodeWithStatus<401> = 'BAD_REQUEST';
// The code stays the literal it was made with.
export const narrowCode: 'REACTION_ALREADY_EXISTS' = coded.code;
