import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { UserRow } from '../../src/queries/rows';
import { ContractChecker } from './contract';
import type { TestServer } from './server';

/** A fresh data directory for a test server's uploads, removed by the returned function. */
export function tempDataDir(): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-uploads-'));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export interface FilePart {
  field?: string;
  name: string;
  content: Buffer | string;
  type?: string;
}

/** POST /api/v1/user_uploads as multipart with these file parts (and fields), the answer checked against the contract. */
export async function uploadFiles(
  t: TestServer,
  user: UserRow | null,
  files: FilePart[],
  fields: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, any> }> {
  let req = request(t.app).post('/api/v1/user_uploads');
  if (user) req = req.auth(user.email, user.api_key);
  for (const [k, v] of Object.entries(fields)) req = req.field(k, v);
  files.forEach((f, i) => {
    const content = typeof f.content === 'string' ? Buffer.from(f.content) : f.content;
    req = req.attach(f.field ?? `file${i}`, content, { filename: f.name, contentType: f.type ?? 'application/octet-stream' });
  });
  if (files.length === 0 && Object.keys(fields).length === 0) req = req.field('nothing', '');
  const res = await req;
  new ContractChecker(t.spec).check('post', '/api/v1/user_uploads', res.status, res.body);
  return { status: res.status, body: res.body as Record<string, any> };
}

/** Every file under the data directory's uploads (the in-progress directory included). */
export function filesOnDisk(dataDir: string): string[] {
  const root = path.join(dataDir, 'uploads');
  if (!fs.existsSync(root)) return [];
  return (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((d) => d.isFile())
    .map((d) => path.relative(root, path.join(d.parentPath, d.name)))
    .sort();
}
