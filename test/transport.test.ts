/**
 * The HTTP server builds requests and responses with the app's prototypes
 * from the start (src/http/transport.ts, ADR 0022), so Express's per-request
 * change of prototype has nothing to do.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createHttpServer } from '../src/http/transport';

async function get(server: http.Server, path: string): Promise<{ status: number; body: unknown }> {
  const { port } = server.address() as AddressInfo;
  const r = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: r.status, body: await r.json() };
}

it('hands Express requests and responses that already have the app’s prototypes', async () => {
  const app = express();
  app.get('/', (req, res) => {
    res.json({ path: req.path, query: req.query, host: req.get('host')?.startsWith('127.0.0.1:'), ip: typeof req.ip });
  });
  const server = createHttpServer(app);
  const seen: boolean[] = [];
  // Runs before the app sees the request.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    seen.push(req instanceof http.IncomingMessage, res instanceof http.ServerResponse);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    expect(await get(server, '/?x=1')).toEqual({ status: 200, body: { path: '/', query: { x: '1' }, host: true, ip: 'string' } });
    expect(seen).toEqual([true, true, true, true]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

it('keeps one pair of classes per app, and Express’s methods for requests built by another server', async () => {
  const app = express();
  app.get('/', (req, res) => {
    res.json({ proto: Object.getPrototypeOf(req) === app.request, host: typeof req.get('host') });
  });
  const first = createHttpServer(app);
  const request = app.request;
  const second = createHttpServer(app);
  expect(app.request).toBe(request);
  // A server that is not ours: Node's own classes, which Express re-prototypes.
  const plain = http.createServer(app);
  const servers = [first, second, plain];
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
  try {
    for (const s of servers) expect(await get(s, '/')).toEqual({ status: 200, body: { proto: true, host: 'string' } });
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
});
