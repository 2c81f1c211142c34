/**
 * The HTTP server builds requests and responses with the app's prototypes
 * from the start (src/http/transport.ts), so Express's per-request change of
 * prototype has nothing to do.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createHttpServer } from '../src/http/transport';

it('hands Express requests and responses that already have the app’s prototypes', async () => {
  const app = express();
  app.get('/', (req, res) => {
    res.json({ path: req.path, ip: typeof req.ip });
  });
  const server = createHttpServer(app);
  const before: boolean[] = [];
  // Runs before the app sees the request.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    before.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    before.push(req instanceof http.IncomingMessage, res instanceof http.ServerResponse);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const r = await fetch(`http://127.0.0.1:${port}/?x=1`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ path: '/', ip: 'string' });
    expect(before).toEqual([true, true, true, true]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
