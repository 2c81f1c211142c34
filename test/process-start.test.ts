/**
 * The server as an operator meets it: what a start prints (the owner's API
 * key only when the organization is created), what a failed start prints
 * (one line naming the cause, exit status 1), and a stop that ends in exit
 * even when nobody reads the process's output any more.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { runServerToExit, spawnServer, startServerProcess } from './support/server-process';

function get(url: string, auth?: { email: string; apiKey: string }): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Basic ${Buffer.from(`${auth.email}:${auth.apiKey}`).toString('base64')}`;
    http
      .get(url, { headers }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      })
      .on('error', reject);
  });
}

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-start-'));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => tempDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('starting and stopping the server process', () => {
  jest.setTimeout(120_000);

  it('prints the owner API key when it creates the organization, and never on a later start', async () => {
    const dataDir = tempDir();
    const first = await startServerProcess({ DATA_DIR: dataDir });
    const { apiKey, email } = first.owner;
    expect(first.output()).toContain(`Owner API key: ${apiKey}`);
    expect(await first.stop()).toBe(0);

    const second = await startServerProcess({ DATA_DIR: dataDir });
    try {
      expect(second.output()).toContain('Using the existing organization.');
      expect(second.output()).toContain(`Owner email:   ${email}`);
      expect(second.output()).not.toContain(apiKey);
      // The zuliprc still holds it, for this server's address, and it works.
      const zuliprc = fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
      expect(zuliprc).toContain(`key=${apiKey}\n`);
      expect(zuliprc).toContain(`site=${second.url}\n`);
      expect((await get(`${second.url}/api/v1/users/me`, second.owner)).body.email).toBe(email);
    } finally {
      await second.stop();
    }
  });

  it.each([
    ['was closed (a pipe into `head` that ended: writes fail with EPIPE)', 'closed', 20],
    ['is full (a reader that stopped reading: writes fail with EAGAIN)', 'full', 400],
  ])('exits on SIGTERM when its stdout pipe %s', async (_case, reader, requests) => {
    const child = spawnServer({ DATA_DIR: tempDir(), LOG_LEVEL: 'info' });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.once('exit', () => reject(new Error(`exited before listening: ${out}`)));
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /Parley is listening on (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
    });
    if (reader === 'closed') {
      child.stdout.destroy();
      child.stderr.destroy();
    } else {
      // 400 access-log lines of some 300 bytes fill the pipe's 64 KiB.
      child.stdout.pause();
      child.stderr.pause();
    }
    for (let i = 0; i < requests; i++) expect((await get(`${url}/api/v1/server_settings`)).status).toBe(200);
    child.kill('SIGTERM');
    const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await exited;
    clearTimeout(forced);
    expect(code).toBe(0);
  });

  it('fails in one line naming an unreachable database, without its password', async () => {
    const { code, stdout, stderr } = await runServerToExit({
      DATA_DIR: tempDir(),
      DATABASE_URL: 'mysql://parley:s3cret-pw@127.0.0.1:1/parley',
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'Parley failed to start: cannot use the database mysql://parley@127.0.0.1:1/parley: ' +
        'connection refused (is the database server running, on that host and port?)\n',
    );
  });

  it('fails in one line naming a port in use', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const { code, stderr } = await runServerToExit({ DATA_DIR: tempDir(), PORT: String(port) });
      expect(code).toBe(1);
      expect(stderr).toBe(`Parley failed to start: 127.0.0.1:${port} is already in use; stop what listens there or set PORT\n`);
    } finally {
      blocker.close();
    }
  });

  it('listens on an IPv6 address and names it with brackets', async () => {
    const dataDir = tempDir();
    const server = await startServerProcess({ DATA_DIR: dataDir, HOST: '::1' });
    try {
      expect(server.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      expect(fs.readFileSync(path.join(dataDir, 'zuliprc'), 'utf8')).toContain(`site=${server.url}\n`);
      expect((await get(`${server.url}/api/v1/server_settings`)).body.realm_url).toBe(server.url);
    } finally {
      await server.stop();
    }
  });
});

describe('the address clients are given when EXTERNAL_URL is unset', () => {
  it.each([
    ['127.0.0.1', 'http://127.0.0.1:9991'],
    ['::1', 'http://[::1]:9991'],
    ['0.0.0.0', 'http://127.0.0.1:9991'], // listening everywhere: this machine's loopback, not 0.0.0.0
    ['::', 'http://[::1]:9991'],
    ['chat.example.com', 'http://chat.example.com:9991'],
  ])('HOST=%s gives %s', (host, url) => {
    expect(loadConfig({ HOST: host, PORT: '9991' }).externalUrl).toBe(url);
  });
});
