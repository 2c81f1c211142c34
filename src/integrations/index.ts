import { alertmanager } from './alertmanager';
import { circleci } from './circleci';
import { gitea } from './gitea';
import { github, githubSponsors } from './github';
import { gitlab } from './gitlab';
import { grafana } from './grafana';
import { jira } from './jira';
import { json } from './json';
import { pagerduty } from './pagerduty';
import { sentry } from './sentry';
import { slackIncoming } from './slack-incoming';
import { uptimerobot } from './uptimerobot';
import type { Integration } from './types';

/**
 * Every incoming-webhook integration, by URL segment. A new integration is
 * one file beside this one and one line here.
 */
export const INTEGRATIONS: readonly Integration[] = [
  alertmanager,
  circleci,
  gitea,
  github,
  githubSponsors,
  gitlab,
  grafana,
  jira,
  json,
  pagerduty,
  sentry,
  slackIncoming,
  uptimerobot,
];

const BY_NAME = new Map(INTEGRATIONS.map((i) => [i.name, i]));

export function integrationNamed(name: string): Integration | undefined {
  return BY_NAME.get(name);
}
