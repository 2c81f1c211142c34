import { integrationNamed } from '../src/integrations';
import { runIntegration } from '../src/integrations/run';
import { InvalidJsonError } from '../src/integrations/types';
import { describeFixtures } from './support/webhook-fixtures';

describeFixtures('slack_incoming');

describe('slack_incoming errors', () => {
  const slack = integrationNamed('slack_incoming')!;
  const run = (rawBody: string, contentType: string, form: Record<string, string> | null = null) =>
    runIntegration(slack, { rawBody, form, headers: { 'content-type': contentType }, query: {} });

  it('asks for `payload` when a form lacks it, and calls a payload that is not JSON malformed', () => {
    expect(() => run('text=hi', 'application/x-www-form-urlencoded', { text: 'hi' })).toThrow("Missing 'payload' argument");
    expect(() => run('payload=%7B', 'application/x-www-form-urlencoded', { payload: '{' })).toThrow(InvalidJsonError);
    expect(() => run('{', 'application/json')).toThrow(InvalidJsonError);
  });

  it('names the field a block lacks', () => {
    expect(() => run(JSON.stringify({ blocks: [{ type: 'image', image_url: 'https://x.example/a.png' }] }), 'application/json')).toThrow(
      'payload["blocks"][0]["alt_text"] is missing',
    );
  });
});
