import { gitea } from './gitea';
import { github, githubSponsors } from './github';
import { json } from './json';
import type { Integration } from './types';

/**
 * Every incoming-webhook integration, by URL segment. A new integration is
 * one file beside this one and one line here.
 */
export const INTEGRATIONS: readonly Integration[] = [json, github, githubSponsors, gitea];

const BY_NAME = new Map(INTEGRATIONS.map((i) => [i.name, i]));

export function integrationNamed(name: string): Integration | undefined {
  return BY_NAME.get(name);
}
