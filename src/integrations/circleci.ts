import { ApiError } from '../errors';
import type { Payload } from './payload';
import { hasKey } from './python';
import { post, type Integration } from './types';

/**
 * CircleCI: a project webhook POSTs JSON whose `type` is `workflow-completed`,
 * `job-completed` or `ping` (the test button), with the pipeline's trigger:
 * `pipeline.vcs` for GitHub and Bitbucket projects, `pipeline.trigger_parameters.gitlab`
 * for GitLab ones. Posted, under the project's name as topic: the workflow
 * or job, its pipeline number and outcome, and the commit that triggered it
 * (a manual run on a branch or a tag build has no commit subject, and says
 * so). A ping posts under "Test event". The event is `type`.
 *
 * Zulip no longer reads CircleCI's legacy build payloads (`{"payload": {…}}`):
 * without `type` the request is a 400 naming the field. A `type` other than
 * the three is a 400 too (Zulip validates it as one of them), not an
 * unsupported event. No options.
 */
export const circleci: Integration = {
  name: 'circleci',
  displayName: 'CircleCI',
  handle(input) {
    const p = input.payload;
    const type = p.get('type').str();
    if (type === 'ping') {
      return post(type, 'Test event', `Webhook '${p.at('webhook', 'name').str()}' test event successful.`);
    }
    const topic = p.at('project', 'name').str();
    const body = completedBody(p);
    const pipeline = p.get('pipeline');
    // Zulip knows three providers; a pipeline with trigger parameters for another one is refused.
    if (hasKey(pipeline, 'trigger_parameters') && pipeline.at('trigger', 'type').str() !== 'gitlab') {
      throw new ApiError("Projects using this version control system provider aren't supported");
    }
    return post(type, topic, body);
  },
  docs: {
    summary: 'Posts when a CircleCI workflow or job completes, with its outcome and the commit that triggered it.',
    setup: [
      "In CircleCI, open the project's **Project Settings** and select **Webhooks**, then **Add Webhook**.",
      'Name the webhook, set **Receiver URL** to the URL below, and tick the events to be notified about (workflow completed, job completed).',
      'Save it; the **Test Ping Event** button posts a test message.',
    ],
  },
};

/** Zulip's wording of each outcome; an outcome it does not know prints as Python's None. */
const OUTCOMES: Record<string, string> = {
  success: 'has succeeded',
  failed: 'has failed',
  canceled: 'was canceled',
  unauthorized: 'was unauthorized',
  error: 'had an error',
};

function outcome(status: string): string {
  return Object.prototype.hasOwnProperty.call(OUTCOMES, status) ? OUTCOMES[status] : 'None';
}

function completedBody(p: Payload): string {
  const pipelineNumber = p.at('pipeline', 'number').int();
  const trigger = triggerLine(p);
  const typeField = p.get('type');
  const type = typeField.str();
  if (type === 'job-completed') {
    const job = p.get('job');
    return `Job \`${job.get('name').str()}\` within Pipeline #${pipelineNumber} ${outcome(job.get('status').str())}.\n\n${trigger}`;
  }
  if (type !== 'workflow-completed') throw new ApiError(`Invalid ${typeField.path}`);
  const workflow = p.get('workflow');
  const name = workflow.get('name').str();
  const url = workflow.get('url').str();
  return `Workflow [\`${name}\`](${url}) within Pipeline #${pipelineNumber} ${outcome(workflow.get('status').str())}.\n\n${trigger}`;
}

/** The "Triggered on …" line: the commit, or the branch's HEAD / latest tag when a run had no commit subject. */
function triggerLine(p: Payload): string {
  const pipeline = p.get('pipeline');
  if (hasKey(pipeline, 'vcs')) {
    const vcs = pipeline.get('vcs');
    const revision = vcs.get('revision').str();
    const short = revision.slice(0, 11);
    const repository = vcs.get('target_repository_url').str();
    // GitHub's commit pages are /commit/, Bitbucket's /commits/.
    const link = `${repository}/${vcs.get('provider_name').str() === 'github' ? 'commit' : 'commits'}/${revision}`;
    const branch = vcs.opt('branch')?.str() ?? null;
    const subject = vcs.at('commit').opt('subject')?.str() ?? '';
    if (!subject) {
      if (!branch) return `Triggered on the latest tag on [${short}](${link}).`;
      return `Triggered on \`${branch}\`'s HEAD on [${short}](${link}).`;
    }
    const author = vcs.at('commit', 'author', 'name').str();
    // A tag build with a commit subject has no branch either; Python prints that as None.
    return `Triggered on [\`${short}: ${subject}\`](${link}) on branch \`${branch ?? 'None'}\` by ${author}.`;
  }
  const gitlab = pipeline.at('trigger_parameters', 'gitlab');
  const title = gitlab.get('commit_title').str();
  const sha = gitlab.get('checkout_sha').str();
  const author = gitlab.get('commit_author_name').str();
  const link = `${gitlab.get('web_url').str()}/-/commit/${sha}`;
  const branch = gitlab.get('branch').str();
  return `Triggered on [\`${sha.slice(0, 11)}: ${title}\`](${link}) on branch \`${branch}\` by ${author}.`;
}
