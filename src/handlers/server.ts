import { getServerSettings } from '../access/addressed-realm';
import type { HandlerTable } from '../http/handler';

export const serverHandlers: HandlerTable = {
  'get-server-settings': async ({ ctx, req }) =>
    getServerSettings(ctx.db, req.headers.host, ctx.config.externalUrl, ctx.config.pushRelayUrl !== null),
};
