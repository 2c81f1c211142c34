import { doFetchApiKey } from '../actions/login';
import type { HandlerTable } from '../http/handler';

export const authHandlers: HandlerTable = {
  'fetch-api-key': async ({ ctx, params, req, limits }) => doFetchApiKey(ctx, params, req.headers.host, limits),
};
