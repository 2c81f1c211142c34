import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { UnauthorizedError } from '../errors';
import { authenticateSession } from './auth';

/**
 * The web client (web/, built by Vite into web/dist: index.html and hashed
 * files in assets/), served as Zulip serves its web app:
 * - `/` with a valid session: index.html, never cached, under a policy that
 *   lets in only this server's scripts, styles and connections; without
 *   one, a redirect to the login page;
 * - `/static/assets/<file>`: the built files, named by their content's hash
 *   and so cached for a year, each compressed once and kept in memory.
 * Without a built client (no index.html), `/` stays the organization's page
 * (src/http/site-pages.ts).
 */
export const WEB_APP_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; " +
  "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The built client's directory: WEB_DIST_DIR, or web/dist of the repository (found as src/http/spec.ts finds openapi/). */
export function webDistDir(configured: string | null): string {
  if (configured) return path.resolve(configured);
  // From the sources (src/http) the repository is two levels up; from the build (dist/src/http), three.
  const candidates = [path.join(__dirname, '..', '..'), path.join(__dirname, '..', '..', '..')];
  const root = candidates.find((dir) => fs.existsSync(path.join(dir, 'package.json'))) ?? candidates[0]!;
  return path.join(root, 'web', 'dist');
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};
/** Types worth compressing: text, and the binary formats that are not compressed already. */
const COMPRESSIBLE = /^(text\/|application\/(json|manifest\+json|wasm)|image\/svg\+xml|image\/x-icon|font\/ttf)/;
/** A built file's name: no separator, no leading dot, nothing a path could climb with. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

interface Asset {
  type: string;
  body: Buffer;
  gzipped: Buffer | null;
}

export function webAppRouter(ctx: AppContext): Router {
  const router = Router();
  const dist = webDistDir(ctx.config.webDistDir);
  const assetsDir = path.join(dist, 'assets');
  // Built files never change under their name (it is their hash): read and compressed once.
  const assets = new Map<string, Promise<Asset | null>>();

  router.get('/', async (req: Request, res: Response, next) => {
    let page: Buffer;
    try {
      page = await fs.promises.readFile(path.join(dist, 'index.html'));
    } catch {
      return next(); // no built client: the organization's page
    }
    try {
      await authenticateSession(ctx.db, ctx.caches, req.headers.cookie, req.headers.host, ctx.config.externalUrl);
    } catch (err) {
      if (!(err instanceof UnauthorizedError)) throw err;
      res.setHeader('Cache-Control', 'no-store');
      return res.redirect(302, '/login/');
    }
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Security-Policy', WEB_APP_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.setHeader('Content-Length', String(page.length));
    res.end(req.method === 'HEAD' ? undefined : page);
  });

  router.get('/static/assets/:name', async (req: Request, res: Response, next) => {
    const name = String(req.params.name);
    if (!ASSET_NAME.test(name)) return next();
    let loading = assets.get(name);
    if (!loading) {
      loading = loadAsset(assetsDir, name);
      assets.set(name, loading);
      // A file that is not there may be built later: only found ones stay.
      void loading.then((a) => a ?? assets.delete(name));
    }
    const asset = await loading;
    if (!asset) return next();
    const gzip = asset.gzipped !== null && acceptsGzip(req.headers['accept-encoding']);
    const body = gzip ? asset.gzipped! : asset.body;
    res.setHeader('Content-Type', asset.type);
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (asset.gzipped !== null) res.setHeader('Vary', 'Accept-Encoding');
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', String(body.length));
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  return router;
}

async function loadAsset(dir: string, name: string): Promise<Asset | null> {
  const file = path.join(dir, name);
  // Never outside the directory, whatever the name held.
  if (path.dirname(file) !== dir) return null;
  let body: Buffer;
  try {
    const stat = await fs.promises.stat(file);
    if (!stat.isFile()) return null;
    body = await fs.promises.readFile(file);
  } catch {
    return null;
  }
  const type = TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream';
  const gzipped = COMPRESSIBLE.test(type) && body.length > 256 ? gzipSync(body, { level: 9 }) : null;
  return { type, body, gzipped: gzipped && gzipped.length < body.length ? gzipped : null };
}

/** Whether Accept-Encoding admits gzip (listed without q=0). */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().split(';');
    if (coding!.trim().toLowerCase() !== 'gzip' && coding!.trim() !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  }
  return false;
}
