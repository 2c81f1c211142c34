import type { AppContext } from '../context';
import type { Caller } from '../access/viewer';
import { doIncomingWebhook, type WebhookAnswer } from '../actions/incoming-webhooks';
import type { WebhookRequest } from '../integrations/run';
import type { Integration } from '../integrations/types';

export type { WebhookAnswer };

/** POST /api/v1/external/{integration_name} (src/http/webhooks.ts reads the request). */
export async function incomingWebhook(
  ctx: AppContext,
  caller: Caller,
  integration: Integration,
  req: WebhookRequest,
): Promise<WebhookAnswer> {
  return doIncomingWebhook(ctx, caller, integration, req);
}
