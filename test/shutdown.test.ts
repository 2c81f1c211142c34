import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { ContractChecker } from './support/contract';
import { eachDatabase } from './support/databases';
import { newInstance, type Instance } from './support/instances';
import { ProcessClient, startServerProcess, type ServerProcess } from './support/server-process';
import { testSpec } from './support/server';

/**
 * An upload sent in two halves: the server has taken the request (its
 * `100 Continue` says so) and waits for the rest of the body until `finish`.
 */
async function startSlowUpload(baseUrl: string, owner: { email: string; apiKey: string }, bytes: number) {
  const boundary = 'parley-shutdown-test';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const content = Buffer.alloc(bytes, 'p');
  const half = Math.floor(bytes / 2);
  const req = http.request(new URL('/api/v1/user_uploads', baseUrl), {
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Basic ${Buffer.from(`${owner.email}:${owner.apiKey}`).toString('base64')}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + bytes + tail.length),
      expect: '100-continue',
    },
  });
  const response = new Promise<{ status: number; body: Record<string, any> } | { error: string }>((resolve) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any> }),
      );
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err) => resolve({ error: err.message }));
  });
  await new Promise<void>((resolve) => req.once('continue', resolve));
  req.write(Buffer.concat([head, content.subarray(0, half)]));
  return {
    response,
    finish: () => req.end(Buffer.concat([content.subarray(half), tail])),
  };
}

/** Whether a new TCP connection to the server is refused; tried until it is, or `attempts` run out. */
async function untilRefused(baseUrl: string, attempts = 500): Promise<boolean> {
  const { hostname, port } = new URL(baseUrl);
  for (let i = 0; i < attempts; i++) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(Number(port), hostname);
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

eachDatabase('graceful shutdown (SIGTERM)', (dialect) => {
  let instance: Instance;
  let server: ServerProcess | null = null;
  beforeEach(async () => {
    instance = await newInstance(dialect);
  });
  afterEach(async () => {
    await server?.kill();
    server = null;
    await instance.drop();
  });
  const start = (env: Record<string, string>) =>
    startServerProcess({ ...instance.env, DATABASE_URL: instance.databaseUrl ?? '', LOG_LEVEL: 'info', ...env });

  it('answers the waiting long-poll, finishes the upload in flight, refuses new connections, exits 0', async () => {
    server = await start({ SHUTDOWN_TIMEOUT_MS: '120000' });
    const client = new ProcessClient(server.url, new ContractChecker(await testSpec()));
    try {
      const queue = await client.call('POST', '/register', server.owner, { event_types: ['message'] });
      expect(queue.status).toBe(200);
      const poll = client.call('GET', '/events', server.owner, { queue_id: queue.body.queue_id, last_event_id: queue.body.last_event_id });
      for (let i = 0; i < 500; i++) {
        const health = await client.call('GET', '/health', null);
        if (health.body.checks.event_queues.waiting_polls === 1) break;
      }
      expect((await client.call('GET', '/health', null)).body.checks.event_queues.waiting_polls).toBe(1);

      const upload = await startSlowUpload(server.url, server.owner, 4 * 1024 * 1024);
      const exited = server.stop(); // SIGTERM

      // The long-poll is answered at once, with a heartbeat, as a Zulip client expects.
      const polled = await poll;
      expect(polled.status).toBe(200);
      expect(polled.body.events).toEqual([{ type: 'heartbeat', id: 0 }]);
      // No new connection is accepted...
      expect(await untilRefused(server.url)).toBe(true);
      // ...while the upload still in flight is received to its end and answered.
      upload.finish();
      const uploaded = await upload.response;
      expect(uploaded).toMatchObject({ status: 200, body: { result: 'success' } });
      if (!('status' in uploaded)) throw new Error('no response');
      new ContractChecker(await testSpec()).check('post', '/api/v1/user_uploads', uploaded.status, uploaded.body);
      const stored = path.join(instance.dataDir, 'uploads', (uploaded.body.url as string).slice('/user_uploads/'.length));
      expect(fs.statSync(stored).size).toBe(4 * 1024 * 1024);
      expect(await exited).toBe(0);
    } finally {
      client.close();
    }
    // stdout is a pipe here: every log line is JSON.
    const logLines = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    const entries = logLines.map((l) => JSON.parse(l) as Record<string, any>);
    expect(entries.map((e) => e.msg)).toEqual(expect.arrayContaining(['signal received', 'shutting down', 'stopped']));
    expect(entries.find((e) => e.operationId === 'upload-file')).toMatchObject({ status: 200 });
    server = null;
  });

  it('cuts requests still unfinished after SHUTDOWN_TIMEOUT_MS, and still exits 0', async () => {
    server = await start({ SHUTDOWN_TIMEOUT_MS: '200' });
    const upload = await startSlowUpload(server.url, server.owner, 1024 * 1024);
    expect(await server.stop()).toBe(0);
    expect(await upload.response).toEqual({ error: expect.any(String) });
    expect(server.output()).toMatch(/requests still in flight after 200 ms: their connections are cut/);
    server = null;
  });
});
