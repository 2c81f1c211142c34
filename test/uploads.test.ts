import fs from 'node:fs';
import path from 'node:path';
import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';
import { tempDataDir, uploadFiles } from './support/uploads';

eachDatabase('POST /user_uploads', (dialect) => {
  let t: TestServer;
  const data = tempDataDir();
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { dataDir: data.dir, config: { maxFileUploadSizeMib: 10 } });
  });
  afterAll(async () => {
    await t.close();
    data.remove();
  });

  it('stores one file under a Zulip path id, with its record', async () => {
    const res = await uploadFiles(t, t.cast.member, [{ name: 'notes.txt', content: 'hello world', type: 'text/plain' }]);
    expect(res.status).toBe(200);
    const url: string = res.body.url;
    expect(url).toMatch(new RegExp(`^/user_uploads/${t.realmId}/[0-9a-f]{1,2}/[A-Za-z0-9_-]{24}/notes\\.txt$`));
    expect(res.body).toEqual({ result: 'success', msg: '', url, uri: url, filename: 'notes.txt' });
    const pathId = url.slice('/user_uploads/'.length);
    expect(fs.readFileSync(path.join(data.dir, 'uploads', pathId), 'utf8')).toBe('hello world');
    const row = await t.ctx.db('attachments').where({ path_id: pathId }).first();
    expect(row).toMatchObject({ owner_id: t.cast.member.id, realm_id: t.realmId, file_name: 'notes.txt', content_type: 'text/plain' });
    expect(Number(row.size)).toBe(11);
    expect(Math.abs(Number(row.create_time) - Date.now() / 1000)).toBeLessThan(60);
  });
});
