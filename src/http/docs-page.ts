import path from 'node:path';
import { Router, type Response } from 'express';
import { INIT_SCRIPT } from './docs-init-script';

/**
 * The browsable API reference at /api/docs: Swagger UI (swagger-ui-dist)
 * over /api/v1/openapi.json, every asset served by this server from
 * node_modules (servers may run with no way out to a CDN), "try it" sending
 * requests to the contract's `servers` entry, /api/v1 on the address the
 * page was opened at.
 */
export function docsPageRouter(): Router {
  const router = Router();
  const dist = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  // swagger-ui-dist's version is in the asset URLs, so they can be cached for good.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const version = (require('swagger-ui-dist/package.json') as { version: string }).version;
  const assets = `/api/docs/assets/${version}`;

  router.get('/', (_req, res) => {
    res.setHeader('Content-Security-Policy', PAGE_POLICY);
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('html').send(page(assets));
  });
  router.get('/init.js', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('text/javascript').send(INIT_SCRIPT);
  });
  // Only the files the page loads (and the source maps they name), not the
  // package's demo index.html and initializer.
  router.get(`/assets/${version}/:file`, (req, res, next) => {
    const file = String(req.params.file);
    if (!ASSETS.has(file)) return next();
    sendAsset(res, path.join(dist, file));
  });
  return router;
}

const ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui.css.map',
  'swagger-ui-bundle.js',
  'swagger-ui-bundle.js.map',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

function sendAsset(res: Response, file: string): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.sendFile(file, { maxAge: '365d', immutable: true });
}

/**
 * Scripts and styles from this server only (no inline script: the
 * initializer is /api/docs/init.js; Swagger UI sets styles through the DOM,
 * which style-src does not govern); requests to this server only, where
 * "try it" sends them whatever address the page was opened at; data:
 * images (its icons) and blob: ones ("try it" shows an image it received,
 * such as an avatar, from a blob: URL).
 */
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function page(assets: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Parley API reference</title>
<link rel="icon" type="image/png" href="${assets}/favicon-32x32.png" sizes="32x32">
<link rel="stylesheet" href="${assets}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${assets}/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
`;
}
