/**
 * The same-machine baselines of bench/run.ts: an Express 5 hello-world
 * (the ratio column's denominator) and bare node:http, each in its own
 * process, on 127.0.0.1 only.
 *
 *   node dist/bench/baseline.js express|node-http   (PORT=0 picks a free port; prints "listening <port>")
 */
import http from 'node:http';
import express from 'express';

const kind = process.argv[2] ?? 'express';
const port = Number(process.env.PORT ?? 0);

function ready(server: http.Server): void {
  const address = server.address();
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : port}\n`);
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

if (kind === 'express') {
  const app = express();
  app.get('/', (_req, res) => {
    res.send('Hello World!');
  });
  const server = app.listen(port, '127.0.0.1', () => ready(server));
} else if (kind === 'node-http') {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('Hello World!');
  });
  server.listen(port, '127.0.0.1', () => ready(server));
} else {
  process.stderr.write(`unknown baseline ${kind} (express|node-http)\n`);
  process.exit(2);
}
