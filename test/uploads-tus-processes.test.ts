import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { until } from './support/clock';
import { eachDatabase, freshMigratedMysqlDatabase } from './support/databases';
import { ServerProcess, startServerProcess } from './support/server-process';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * Two Parley processes on one DATA_DIR and one database, as several server
 * processes behind one address would run: a resumable upload is one upload
 * whichever process a request reaches, and its lock holds across them.
 */
eachDatabase('resumable uploads across two server processes', (dialect) => {
  let dataDir: string;
  let dropDatabase = async () => {};
  let one: ServerProcess;
  let two: ServerProcess;
  let auth: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-tus-processes-'));
    let databaseUrl = '';
    if (dialect === 'mysql') {
      const mysql = await freshMigratedMysqlDatabase();
      databaseUrl = mysql.url;
      dropDatabase = mysql.drop;
    }
    // One after the other: the first creates the organization the second finds.
    one = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
    two = await startServerProcess({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
    auth = 'Basic ' + Buffer.from(`${one.owner.email}:${one.owner.apiKey}`).toString('base64');
  }, 60_000);

  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await dropDatabase();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const send = (server: ServerProcess, method: string, target: string, headers: Record<string, string>, body?: Buffer) =>
    new Promise<Reply>((resolve, reject) => {
      const req = http.request(
        new URL(target, server.url),
        { method, headers: { Authorization: auth, 'Tus-Resumable': '1.0.0', Connection: 'close', ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const create = (server: ServerProcess, length: number, name: string) =>
    send(server, 'POST', '/api/v1/tus', {
      'Upload-Length': String(length),
      'Upload-Metadata': `filename ${Buffer.from(name).toString('base64')}`,
      'Content-Length': '0',
    });
  const patch = (server: ServerProcess, location: string, offset: number, body: Buffer) =>
    send(
      server,
      'PATCH',
      location,
      { 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', 'Content-Length': String(body.length) },
      body,
    );
  const head = (server: ServerProcess, location: string) => send(server, 'HEAD', location, {});
  const tusFile = (location: string) => path.join(dataDir, 'uploads', '.tus', location.slice(location.lastIndexOf('/') + 1));

  it('continues on one process an upload begun on the other', async () => {
    const created = await create(one, 10, 'halves.txt');
    expect(created.status).toBe(201);
    const location = String(created.headers.location);
    expect((await patch(one, location, 0, Buffer.from('abcde'))).status).toBe(204);

    const status = await head(two, location);
    expect(status.status).toBe(200);
    expect(status.headers['upload-offset']).toBe('5');
    const done = await patch(two, location, 5, Buffer.from('fghij'));
    expect(done.status).toBe(200);
    const url = (JSON.parse(done.body) as { url: string }).url;

    const read = await send(one, 'GET', url, {});
    expect(read.status).toBe(200);
    expect(read.body).toBe('abcdefghij');
  });

  it('keeps two PATCHes of one upload on two processes apart: the second waits, then gets 409', async () => {
    const half = 64 * 1024;
    const created = await create(one, 4 * half, 'contended.bin');
    const location = String(created.headers.location);

    // A: a PATCH to process one that declares two halves and sends the first, then stalls.
    const socket = net.connect(Number(new URL(one.url).port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    let answerA = '';
    socket.on('data', (c: Buffer) => (answerA += c.toString('latin1')));
    socket.write(
      [
        `PATCH ${location} HTTP/1.1`,
        'Host: 127.0.0.1',
        `Authorization: ${auth}`,
        'Tus-Resumable: 1.0.0',
        'Upload-Offset: 0',
        'Content-Type: application/offset+octet-stream',
        `Content-Length: ${2 * half}`,
        'Connection: close',
        '',
        '',
      ].join('\r\n'),
    );
    socket.write(Buffer.alloc(half, 'A'));
    await until(
      () => fs.existsSync(tusFile(location)) && fs.statSync(tusFile(location)).size === half,
      'A has written its first half',
      10_000,
    );

    // B: to process two, from the offset the file shows now, as a client that asked would.
    let answerB: Reply | null = null;
    const b = patch(two, location, half, Buffer.alloc(half, 'B')).then((r) => (answerB = r));
    // While A holds the upload, B is not answered (its lock waits for A's).
    await new Promise((r) => setTimeout(r, 1500));
    expect(answerB).toBeNull();

    socket.write(Buffer.alloc(half, 'A'));
    await until(() => answerA.includes('\r\n\r\n'), 'A is answered', 10_000);
    socket.destroy();
    expect(answerA).toMatch(/^HTTP\/1\.1 204 /);
    expect(answerA).toMatch(new RegExp(`\r\nupload-offset: ${2 * half}\r\n`, 'i'));

    await b;
    // B's offset is no longer the upload's: tus' conflict, and not one byte of B was written.
    expect(answerB!.status).toBe(409);
    expect(fs.readFileSync(tusFile(location)).equals(Buffer.alloc(2 * half, 'A'))).toBe(true);
    expect((await head(two, location)).headers['upload-offset']).toBe(String(2 * half));
  });
});
