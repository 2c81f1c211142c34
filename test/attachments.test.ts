import fs from 'node:fs';
import path from 'node:path';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { pending, register, sendToChannel } from './support/events';
import { createChannel, startTestServer, type TestServer } from './support/server';
import { tempDataDir, uploadFiles } from './support/uploads';

const pathIdOf = (url: string) => url.slice('/user_uploads/'.length);

eachDatabase('GET /attachments and DELETE /attachments/{id}', (dialect) => {
  let t: TestServer;
  const data = tempDataDir();
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { dataDir: data.dir });
    const c = t.cast;
    await createChannel(t, 'files', [c.owner, c.admin, c.moderator, c.member, c.guest, c.bot]);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
    data.remove();
  });

  const upload = async (user: UserRow, name = 'notes.txt', content = 'hello world') => {
    const res = await uploadFiles(t, user, [{ name, content, type: 'text/plain' }]);
    expect(res.status).toBe(200);
    const pathId = pathIdOf(res.body.url as string);
    const row = await t.ctx.db('attachments').where({ path_id: pathId }).first('id');
    return { id: Number(row!.id), pathId, url: res.body.url as string };
  };
  const spaceUsed = async () => Number((await t.ctx.db('attachments').where({ realm_id: t.realmId }).sum({ s: 'size' }).first())!.s ?? 0);
  const onDisk = (pathId: string) => fs.existsSync(path.join(data.dir, 'uploads', pathId));
  const invalid = { result: 'error', msg: 'Invalid attachment', code: 'BAD_REQUEST' };

  describe('GET /attachments', () => {
    it("lists the caller's uploads only, oldest first, with the live messages linking each and the organization's space used", async () => {
      const user = t.cast.moderator;
      const a = await upload(user, 'a.txt', 'aaaa');
      const b = await upload(user, 'b.txt', 'bb');
      await upload(t.cast.owner, 'not-mine.txt', 'x');
      const m1 = await sendToChannel(t, user, 'files', 'docs', `see [a](${a.url})`);
      const m2 = await sendToChannel(t, t.cast.member, 'files', 'docs', `again [a](${a.url})`);
      const res = await t.api.get('/attachments', user);
      expect(res.status).toBe(200);
      const rows = await t.ctx.db('attachments').whereIn('id', [a.id, b.id]).orderBy('id').select('create_time');
      expect(res.body.attachments).toEqual([
        { id: a.id, name: 'a.txt', path_id: a.pathId, size: 4, create_time: Number(rows[0]!.create_time), message_ids: [m1, m2] },
        { id: b.id, name: 'b.txt', path_id: b.pathId, size: 2, create_time: Number(rows[1]!.create_time), message_ids: [] },
      ]);
      expect(res.body.upload_space_used).toBe(await spaceUsed());
      // A deleted message no longer lists (it is archived, not live).
      expect((await t.api.delete(`/messages/${m2}`, t.cast.owner)).status).toBe(200);
      const after = await t.api.get('/attachments', user);
      expect(after.body.attachments[0].message_ids).toEqual([m1]);
    });

    it.each(['owner', 'admin', 'member', 'guest', 'bot'] as const)('%s sees only its own uploads', async (role) => {
      const user = t.cast[role];
      const mine = await upload(user, `${role}.txt`);
      const res = await t.api.get('/attachments', user);
      expect(res.status).toBe(200);
      const ids = (res.body.attachments as Array<{ id: number }>).map((x) => x.id);
      expect(ids).toContain(mine.id);
      const owners = await t.ctx.db('attachments').whereIn('id', ids).distinct('owner_id');
      expect(owners.map((o) => Number(o.owner_id))).toEqual([user.id]);
    });
  });

  describe('DELETE /attachments/{id}', () => {
    it('removes the file and the record; the message keeps its now-broken link; the owner gets a remove event', async () => {
      const user = t.cast.member;
      const f = await upload(user, 'doomed.txt', 'bye bye');
      const msg = await sendToChannel(t, user, 'files', 'docs', `file: [doomed](${f.url})`);
      const mine = await register(t, user, { event_types: ['attachment'] });
      const other = await register(t, t.cast.owner, { event_types: ['attachment'] });
      expect(onDisk(f.pathId)).toBe(true);

      const res = await t.api.delete(`/attachments/${f.id}`, user);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect(onDisk(f.pathId)).toBe(false);
      expect(await t.ctx.db('attachments').where({ id: f.id }).first()).toBeUndefined();
      expect(await t.ctx.db('attachment_messages').where({ attachment_id: f.id }).first()).toBeUndefined();
      const message = await t.api.get(`/messages/${msg}`, user);
      expect(message.body.message.content).toContain(f.url);
      const file = await t.api.get(`/user_uploads/${f.pathId}`, user);
      expect(file.status).toBe(404);

      expect((await pending(t, mine)).map(({ id: _, ...e }) => e)).toEqual([
        { type: 'attachment', op: 'remove', attachment: { id: f.id }, upload_space_used: await spaceUsed() },
      ]);
      expect(await pending(t, other)).toEqual([]);
      expect((await t.api.get('/attachments', user)).body.attachments.map((x: { id: number }) => x.id)).not.toContain(f.id);
      const again = await t.api.delete(`/attachments/${f.id}`, user);
      expect(again.body).toEqual(invalid);
    });

    it('drops the links of archived messages too, so a restored message cannot link the deleted record', async () => {
      const user = t.cast.member;
      const f = await upload(user, 'archived.txt');
      const msg = await sendToChannel(t, user, 'files', 'docs', `[x](${f.url})`);
      expect((await t.api.delete(`/messages/${msg}`, t.cast.owner)).status).toBe(200);
      expect(await t.ctx.db('archived_attachment_messages').where({ attachment_id: f.id }).first()).toBeDefined();
      expect((await t.api.delete(`/attachments/${f.id}`, user)).status).toBe(200);
      expect(await t.ctx.db('archived_attachment_messages').where({ attachment_id: f.id }).first()).toBeUndefined();
    });

    // Only the uploader may delete: an administrator gets the same answer as for a missing one.
    it.each(['owner', 'admin', 'moderator', 'guest', 'bot'] as const)("%s cannot delete a member's upload", async (role) => {
      const f = await upload(t.cast.member, 'keep.txt');
      const res = await t.api.delete(`/attachments/${f.id}`, t.cast[role]);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(invalid);
      expect(onDisk(f.pathId)).toBe(true);
      expect(await t.ctx.db('attachments').where({ id: f.id }).first('id')).toBeDefined();
    });

    it.each(['owner', 'admin', 'moderator', 'member', 'guest', 'bot'] as const)('%s deletes its own upload', async (role) => {
      const f = await upload(t.cast[role], 'own.txt');
      const res = await t.api.delete(`/attachments/${f.id}`, t.cast[role]);
      expect(res.status).toBe(200);
      expect(onDisk(f.pathId)).toBe(false);
    });

    it('answers a missing id as another user’s, and an unauthenticated call with 401', async () => {
      expect((await t.api.delete('/attachments/99999999', t.cast.member)).body).toEqual(invalid);
      expect((await t.api.delete('/attachments/1', null)).status).toBe(401);
      expect((await t.api.delete('/attachments/abc', t.cast.member)).status).toBe(400);
    });

    it('keeps the record, and sends nothing, when the file store cannot remove the file', async () => {
      const user = t.cast.moderator;
      const f = await upload(user, 'stuck.txt');
      // A directory with something in it where the file was: the store's removal fails.
      const full = path.join(data.dir, 'uploads', f.pathId);
      fs.rmSync(full);
      fs.mkdirSync(full);
      fs.writeFileSync(path.join(full, 'inside'), 'x');
      const c = await register(t, user, { event_types: ['attachment'] });
      const res = await t.api.delete(`/attachments/${f.id}`, user);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: 'error',
        msg: 'An error occurred while deleting the attachment. Please try again later.',
        code: 'BAD_REQUEST',
      });
      expect(await t.ctx.db('attachments').where({ id: f.id }).first('id')).toBeDefined();
      expect(await pending(t, c)).toEqual([]);
      fs.rmSync(full, { recursive: true });
    });
  });
});
