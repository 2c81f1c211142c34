import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import yaml from 'js-yaml';
import request from 'supertest';
import { loadBundledContract, servedContractRouter } from '../src/http/served-contract';
import { startTestServer, type TestServer } from './support/server';

/**
 * GET /api/v1/openapi.json|yaml and the /api/docs page's own files, through
 * the whole app (checked once: nothing here reads the database; the
 * rendered page is test/docs-page.test.ts).
 */
const BUNDLED = path.join(__dirname, '..', 'dist', 'openapi.bundled.json');
const EXTERNAL = 'https://chat.example.org';

/** The bundled contract as scripts/bundle-spec.js wrote it, with the served `servers`: relative, whatever EXTERNAL_URL is. */
const expectedDocument = () => ({
  ...(JSON.parse(fs.readFileSync(BUNDLED, 'utf8')) as object),
  servers: [{ url: '/api/v1', description: 'This Parley server' }],
});

/** supertest collects a body it has no parser for (YAML, gzip) as a Buffer. */
const asBuffer = (res: request.Response) => res.body as Buffer;
const raw = (req: request.Test) =>
  req.buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });

describe('the served contract', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite', undefined, { config: { externalUrl: EXTERNAL } });
  });
  afterAll(() => t.close());

  it('GET /api/v1/openapi.json is the bundled contract, servers being /api/v1 of wherever it was read, without credentials', async () => {
    const res = await request(t.app).get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual(expectedDocument());
  });

  it('GET /api/v1/openapi.yaml is the same document in YAML', async () => {
    const res = await raw(request(t.app).get('/api/v1/openapi.yaml'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/yaml; charset=utf-8');
    const text = asBuffer(res).toString('utf8');
    expect(text).not.toMatch(/&ref_|\*ref_/); // no YAML anchors or aliases
    expect(yaml.load(text)).toEqual(expectedDocument());
  });

  it('is not behind authentication: a wrong API key changes nothing', async () => {
    const res = await request(t.app).get('/api/v1/openapi.json').auth('nobody@example.com', 'wrong-key');
    expect(res.status).toBe(200);
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(res.body.openapi).toBe('3.0.3');
  });

  it('revalidates by ETag (304), has gzip with its own ETag, answers HEAD, and refuses other methods', async () => {
    for (const file of ['openapi.json', 'openapi.yaml']) {
      const first = await raw(request(t.app).get(`/api/v1/${file}`).set('Accept-Encoding', 'identity'));
      const etag = first.headers.etag!;
      expect(etag).toMatch(/^"[\w-]+"$/);
      expect(first.headers['cache-control']).toBe('no-cache');
      expect(first.headers['content-encoding']).toBeUndefined();

      const again = await request(t.app).get(`/api/v1/${file}`).set('Accept-Encoding', 'identity').set('If-None-Match', etag);
      expect([again.status, again.text]).toEqual([304, '']);
      const changed = await request(t.app).get(`/api/v1/${file}`).set('Accept-Encoding', 'identity').set('If-None-Match', '"other"');
      expect(changed.status).toBe(200);

      const gz = await raw(request(t.app).get(`/api/v1/${file}`).set('Accept-Encoding', 'gzip, br'));
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gz.headers.vary).toBe('Accept-Encoding');
      expect(gz.headers.etag).not.toBe(etag);
      expect(Number(gz.headers['content-length'])).toBeLessThan(asBuffer(first).length / 3);
      // superagent inflates the body: what arrives is the plain document.
      expect(asBuffer(gz).equals(asBuffer(first))).toBe(true);

      const head = await request(t.app).head(`/api/v1/${file}`).set('Accept-Encoding', 'identity');
      expect([head.status, head.headers['content-length']]).toEqual([200, String(asBuffer(first).length)]);

      const post = await request(t.app).post(`/api/v1/${file}`);
      expect([post.status, post.headers.allow, post.body]).toEqual([
        405,
        'GET',
        { result: 'error', msg: 'Method Not Allowed', code: 'METHOD_NOT_ALLOWED', allowed_methods: ['GET'] },
      ]);
    }
  });

  it('reads the bundle once and keeps the serialised bodies', async () => {
    let loads = 0;
    const app = express().use(
      '/api/v1',
      servedContractRouter(() => {
        loads++;
        return loadBundledContract();
      }),
    );
    const bodies = await Promise.all([1, 2, 3].map(() => request(app).get('/api/v1/openapi.json')));
    await request(app).get('/api/v1/openapi.yaml');
    expect(bodies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(loads).toBe(1);
  });

  it('leaves the rest of /api/v1 to the API pipeline', async () => {
    const res = await request(t.app).get('/api/v1/openapi.txt');
    expect([res.status, res.body]).toEqual([404, { result: 'error', msg: 'Endpoint does not exist', code: 'BAD_REQUEST' }]);
  });
});

describe('the docs page', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite', undefined, { config: { externalUrl: EXTERNAL } });
  });
  afterAll(() => t.close());

  it('is an HTML page loading Swagger UI and its initializer from this server, under a Content-Security-Policy', async () => {
    for (const url of ['/api/docs', '/api/docs/']) {
      const res = await request(t.app).get(url);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const csp = res.headers['content-security-policy']!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("style-src 'self';");
      expect(csp).toContain("connect-src 'self';"); // "try it" goes to the page's own origin, whatever EXTERNAL_URL is
      const sources = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
      expect(sources.every((s) => s.startsWith('/api/docs/'))).toBe(true);
      expect(res.text).not.toMatch(/<script>/); // every script is a file: script-src 'self' suffices
      for (const s of sources) {
        const asset = await raw(request(t.app).get(s));
        expect([s, asset.status]).toEqual([s, 200]);
        expect(asBuffer(asset).length).toBeGreaterThan(100);
      }
    }
  });

  it('serves the initializer pointing at the served contract, and the assets as cacheable files', async () => {
    const init = await request(t.app).get('/api/docs/init.js');
    expect(init.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(init.text).toContain("url: '/api/v1/openapi.json'");
    expect(init.text).toContain('validatorUrl: null');

    const page = await request(t.app).get('/api/docs');
    const bundle = /src="([^"]+swagger-ui-bundle\.js)"/.exec(page.text)![1]!;
    const res = await raw(request(t.app).get(bundle));
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('serves nothing else from the package: the rest is the API 404', async () => {
    const page = await request(t.app).get('/api/docs');
    const dir = /href="([^"]+)\/swagger-ui\.css"/.exec(page.text)![1]!;
    for (const url of [`${dir}/index.html`, `${dir}/swagger-initializer.js`, `${dir}/../package.json`, '/api/docs/other']) {
      const res = await request(t.app).get(url);
      expect([url, res.status, res.body]).toEqual([url, 404, { result: 'error', msg: 'Endpoint does not exist', code: 'BAD_REQUEST' }]);
    }
  });
});
