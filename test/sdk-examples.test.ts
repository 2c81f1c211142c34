import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ContractChecker } from './support/contract';
import { ProcessClient, ServerProcess, startServerProcess } from './support/server-process';
import { testSpec } from './support/server';

/**
 * The typed clients of examples/ (openapi-typescript + openapi-fetch,
 * @hey-api/openapi-ts, and oazapfts), generated from
 * dist/openapi.bundled.json and compiled with tsc --strict by
 * examples/build.sh, each run as a program against a Parley process: it
 * creates a channel, long-polls its event queue while sending a message
 * there, and fetches the message back. What each client reports is checked
 * against what the server holds, read through the contract-checked test
 * client.
 */
const ROOT = path.join(__dirname, '..');
const run = promisify(execFile);

interface ChatResult {
  channelSubscribed: string[];
  sentMessageId: number;
  fetchedMessageIds: number[];
  eventMessageIds: number[];
}

describe('generated SDK examples against a running server', () => {
  let dataDir: string;
  let server: ServerProcess;
  let client: ProcessClient;

  beforeAll(async () => {
    // Three generators and a tsc run: about half a minute on a busy machine.
    execFileSync('bash', [path.join(ROOT, 'examples', 'build.sh')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-sdk-'));
    server = await startServerProcess({ DATA_DIR: dataDir });
    client = new ProcessClient(server.url, new ContractChecker(await testSpec()));
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.each([
    ['openapi-fetch', 'Hello from openapi-fetch'],
    ['hey-api', 'Hello from hey-api'],
    ['oazapfts', 'Hello from oazapfts'],
  ])('%s: creates a channel, sends, long-polls the event and fetches the message', async (example, content) => {
    const channel = `sdk ${example}`;
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'dist', 'examples', example, 'chat.js'), channel], {
      env: { ...process.env, PARLEY_URL: server.url, PARLEY_EMAIL: server.owner.email, PARLEY_API_KEY: server.owner.apiKey },
    });
    const result = JSON.parse(stdout) as ChatResult;
    expect(result.channelSubscribed).toEqual([channel]);
    expect(result.eventMessageIds).toContain(result.sentMessageId);
    expect(result.fetchedMessageIds).toEqual([result.sentMessageId]);

    // The server holds what the client says it sent, where it says it sent it.
    const owner = server.owner;
    const stored = await client.call('GET', `/messages/${result.sentMessageId}`, owner);
    expect(stored.status).toBe(200);
    expect(stored.body.message).toMatchObject({ display_recipient: channel, subject: 'greetings', content: `<p>${content}</p>` });
    const subs = await client.call('GET', '/users/me/subscriptions', owner);
    expect(subs.body.subscriptions.map((s: { name: string }) => s.name)).toContain(channel);
  });
});
