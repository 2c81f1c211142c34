import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Router, type Request, type Response } from 'express';
import { ApiError } from '../errors';
import { SPEC_ROOT } from './spec';

/** One serialisation of the contract, kept in memory with its gzip and validators. */
interface Body {
  type: string;
  plain: Buffer;
  gzip: Buffer;
  etag: string;
}

interface Served {
  json: Body;
  yaml: Body;
}

/**
 * Relative, so Swagger UI (and any reader) resolves it against the address
 * the document was fetched from: the reference's "try it" then works from
 * any address that reaches this server (127.0.0.1, localhost, a proxy's
 * name). An absolute URL (EXTERNAL_URL) would make the page, opened at any
 * other of those, send cross-origin requests the browser refuses.
 */
const SERVERS = [{ url: '/api/v1', description: 'This Parley server' }];

/**
 * GET /api/v1/openapi.json and /api/v1/openapi.yaml: the bundled contract
 * (one document, internal $refs) that this server routes and validates by,
 * with `servers` naming /api/v1 on whatever address the document was read
 * from, so a reader's "try it" reaches this server. No authentication: the
 * contract holds nothing private.
 *
 * These two are mounted before the API pipeline and are not operations of
 * openapi/: they are not Zulip endpoints (no `{result, msg}` envelope, one
 * of them is not JSON), and a document describing the URL it is served from
 * would list itself to every client and SDK generated from it.
 *
 * Both bodies are built on the first request and kept.
 */
export function servedContractRouter(load: () => Promise<object> = loadBundledContract): Router {
  const router = Router();
  let served: Promise<Served> | null = null;
  const current = (): Promise<Served> => {
    if (served) return served;
    served = load().then(serialise);
    served.catch(() => (served = null)); // a failed load is retried by the next request
    return served;
  };
  router
    .route('/openapi.json')
    .get(async (req, res) => send(req, res, (await current()).json))
    .all(methodNotAllowed);
  router
    .route('/openapi.yaml')
    .get(async (req, res) => send(req, res, (await current()).yaml))
    .all(methodNotAllowed);
  return router;
}

/**
 * dist/openapi.bundled.json as scripts/bundle-spec.js wrote it (beside src/
 * when run from the sources, beside dist/src/ when built). A tree built by
 * `npm run build` alone has none: openapi/ is then bundled here, the way
 * that script does.
 */
export async function loadBundledContract(): Promise<object> {
  const candidates = [
    path.join(__dirname, '..', '..', 'dist', 'openapi.bundled.json'),
    path.join(__dirname, '..', '..', 'openapi.bundled.json'),
  ];
  const file = candidates.find((f) => fs.existsSync(f));
  if (file) return JSON.parse(await fs.promises.readFile(file, 'utf8')) as object;
  const fromSource = path.join(__dirname, '..', '..', 'openapi', 'openapi.yaml');
  // Loaded lazily, as in spec.ts: its ESM dependencies do not load inside jest.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const SwaggerParser = require('@apidevtools/swagger-parser') as typeof import('@apidevtools/swagger-parser');
  return SwaggerParser.bundle(fs.existsSync(fromSource) ? fromSource : SPEC_ROOT);
}

/** js-yaml, loaded when the contract is first asked for rather than at every start. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const yamlModule = () => require('js-yaml') as typeof import('js-yaml');

function serialise(bundled: object): Served {
  const doc = { ...bundled, servers: SERVERS };
  return {
    json: body('application/json; charset=utf-8', JSON.stringify(doc)),
    // noRefs: no YAML anchors, so every YAML reader sees the same tree as the JSON;
    // lineWidth -1: descriptions stay on one line rather than being folded.
    yaml: body('application/yaml; charset=utf-8', yamlModule().dump(doc, { noRefs: true, lineWidth: -1 })),
  };
}

function body(type: string, text: string): Body {
  const plain = Buffer.from(text, 'utf8');
  return { type, plain, gzip: gzipSync(plain), etag: createHash('sha256').update(plain).digest('base64url').slice(0, 27) };
}

/**
 * `no-cache`: a client keeps its copy but asks each time (a 304 when the
 * ETag still matches), since the document changes with the server's
 * version. The gzip representation has its own ETag, as a
 * strong validator must.
 */
function send(req: Request, res: Response, b: Body): void {
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const etag = `"${b.etag}${gzip ? '-gzip' : ''}"`;
  res.setHeader('Content-Type', b.type);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', etag);
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // Editors and generators served from elsewhere may read it: it is public.
  res.setHeader('Access-Control-Allow-Origin', '*');
  if (matches(req.headers['if-none-match'], etag)) {
    res.status(304).end();
    return;
  }
  const payload = gzip ? b.gzip : b.plain;
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', String(payload.length));
  res.end(payload);
}

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2): W/ prefixes are ignored. */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

function methodNotAllowed(): never {
  throw new ApiError('Method Not Allowed', 'METHOD_NOT_ALLOWED', 405, { allowed_methods: ['GET'] }, { Allow: 'GET' });
}
