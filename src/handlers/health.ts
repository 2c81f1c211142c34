import { checkHealth } from '../actions/health';
import type { HandlerTable } from '../http/handler';

export const healthHandlers: HandlerTable = {
  'get-health': async ({ ctx }) => checkHealth(ctx),
};
