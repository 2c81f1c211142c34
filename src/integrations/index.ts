import { alertmanager } from './alertmanager';
import { gitlab } from './gitlab';
import { grafana } from './grafana';
import { json } from './json';
import { sentry } from './sentry';
import { slackIncoming } from './slack-incoming';
import type { Integration } from './types';

/**
 * Every incoming-webhook integration, by URL segment. A new integration is
 * one file beside this one and one line here.
 */
export const INTEGRATIONS: readonly Integration[] = [
  alertmanager,
  gitlab,
  grafana,
  json,
  sentry,
  slackIncoming,
];

const BY_NAME = new Map(INTEGRATIONS.map((i) => [i.name, i]));

export function integrationNamed(name: string): Integration | undefined {
  return BY_NAME.get(name);
}
