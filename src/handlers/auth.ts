import { doFetchApiKey } from '../actions/login';
import type { HandlerTable } from '../http/handler';

export const authHandlers: HandlerTable = {
  'fetch-api-key': async ({ ctx, params, req }) => {
    const user = await doFetchApiKey(ctx, params.username, params.password, req.headers.host);
    return { api_key: user.api_key, email: user.email, user_id: user.id };
  },
};
