import express from 'express';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { Document } from '../src/http/spec';
import { requestValidator } from '../src/http/validation';

/**
 * dist/openapi.bundled.json, the one-file contract clients and SDK generators
 * read (test/global-setup.js writes it through scripts/bundle-spec.js): every
 * shared schema, parameter and response of openapi/components/ is a named
 * component, every $ref points at one, and the request validator loads it.
 */
const ROOT = path.join(__dirname, '..');
const bundled = JSON.parse(fs.readFileSync(path.join(ROOT, 'dist', 'openapi.bundled.json'), 'utf8')) as Document;
type Components = Record<string, Record<string, unknown> | undefined>;
const components = (bundled.components ?? {}) as Components;

function refsIn(node: unknown, out: string[] = []): string[] {
  if (!node || typeof node !== 'object') return out;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') out.push(ref);
  for (const v of Object.values(node)) refsIn(v, out);
  return out;
}

/** Every `$ref: '…#/<kind>/<Name>'` written in openapi/ (the path files and the component files). */
function sourceRefs(): Array<{ kind: string; name: string; file: string }> {
  const out: Array<{ kind: string; name: string; file: string }> = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.yaml'))
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/\$ref:\s*'?[^'}\s]*#\/(schemas|parameters|responses)\/([A-Za-z0-9_.-]+)/g))
          out.push({ kind: m[1]!, name: m[2]!, file: path.relative(ROOT, p) });
    }
  };
  walk(path.join(ROOT, 'openapi'));
  return out;
}

describe('the bundled contract', () => {
  it('points every $ref at a named component that exists', () => {
    const refs = refsIn(bundled);
    expect(refs.length).toBeGreaterThan(500);
    const bad = refs.filter((ref) => {
      const m = /^#\/components\/([A-Za-z]+)\/([A-Za-z0-9_.-]+)$/.exec(ref);
      return !m || components[m[1]!]?.[m[2]!] === undefined;
    });
    expect(bad).toEqual([]);
  });

  it('keeps each shared schema, parameter and response under the name it has in openapi/components/', () => {
    const used = sourceRefs();
    expect(new Set(used.map((r) => r.kind))).toEqual(new Set(['schemas', 'parameters', 'responses']));
    const missing = used.filter((r) => components[r.kind]?.[r.name] === undefined).map((r) => `${r.file}: ${r.kind}/${r.name}`);
    expect(missing).toEqual([]);
    // No name was renamed apart (Name-2) because two files offered it.
    const renamed = Object.values(components).flatMap((items) => Object.keys(items ?? {}).filter((n) => /-\d+$/.test(n)));
    expect(renamed).toEqual([]);
  });

  it('loads into the request validator, which resolves the component references', async () => {
    const app = express();
    app.use(express.urlencoded({ extended: false }));
    app.use(requestValidator(bundled, false));
    app.post('/api/v1/messages', (_req, res) => {
      res.json({ result: 'success', msg: '', id: 1 });
    });
    app.use(
      (
        err: { status?: number; errors?: Array<{ path: string; errorCode?: string }> },
        _req: express.Request,
        res: express.Response,
        _next: express.NextFunction,
      ) => {
        res.status(err.status ?? 500).json({ errors: err.errors ?? [] });
      },
    );
    const ok = await request(app).post('/api/v1/messages').type('form').send({ type: 'channel', to: 'general', topic: 't', content: 'hi' });
    expect(ok.status).toBe(200);
    // type's enum and content's requirement live in the SendMessageRequest component.
    const badType = await request(app).post('/api/v1/messages').type('form').send({ type: 'fax', to: 'general', content: 'hi' });
    expect(badType.status).toBe(400);
    expect(badType.body.errors[0]).toMatchObject({ path: '/body/type', errorCode: 'enum.openapi.validation' });
    const missing = await request(app).post('/api/v1/messages').type('form').send({ type: 'channel', to: 'general' });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]).toMatchObject({ errorCode: 'required.openapi.validation' });
  });
});
