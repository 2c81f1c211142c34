import net from 'node:net';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { answerClientErrors } from '../src/server';

/** What node's HTTP parser refuses never reaches Express: src/server.ts still answers with a Zulip error body. */
describe('requests refused by the HTTP parser', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('{}'));
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const raw = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end(text));
      let out = '';
      socket.on('data', (d) => (out += d.toString('latin1')));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });

  it('answers a request line over 16 KB with 431 and a Zulip error body', async () => {
    const answer = await raw(`GET /api/v1/users/me?token=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ result: 'error', msg: 'Request is too large', code: 'BAD_REQUEST' });
  });

  it('answers a malformed request with 400 and a Zulip error body', async () => {
    const answer = await raw('GET /api/v1/users/me HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ result: 'error', msg: 'Malformed request', code: 'BAD_REQUEST' });
  });
});
