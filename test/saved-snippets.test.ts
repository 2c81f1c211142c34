import { AuditEventType } from '../src/domain/audit';
import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import type { TestServer } from './support/server';
import { startTestServer } from './support/server';

eachDatabase('saved snippets', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const rowsOf = (userId: number) => t.ctx.db('saved_snippets').where({ user_id: userId }).orderBy('id').select('id', 'title', 'content');
  const countAll = async () => Number(((await t.ctx.db('saved_snippets').count('* as n')) as Array<{ n: number }>)[0]!.n);
  const create = async (user = t.cast.member, title = 'Greeting', content = 'Hello there') => {
    const res = await t.api.post('/saved_snippets', user, { title, content });
    expect(res.status).toBe(200);
    return res.body.saved_snippet_id as number;
  };
  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  const notFound = { result: 'error', msg: 'Saved snippet does not exist.', code: 'BAD_REQUEST' };

  describe('POST /saved_snippets', () => {
    it('stores the trimmed title and content with the creation time, and records it in the audit log', async () => {
      const before = Math.floor(Date.now() / 1000);
      const res = await t.api.post('/saved_snippets', t.cast.member, { title: '  Welcome \n', content: '\t**Hi** #general  ' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '', saved_snippet_id: expect.any(Number) });
      const row = await t.ctx.db('saved_snippets').where({ id: res.body.saved_snippet_id }).first();
      expect(row).toMatchObject({
        user_id: t.cast.member.id,
        realm_id: t.cast.member.realm_id,
        title: 'Welcome',
        content: '**Hi** #general',
      });
      expect(Number(row!.date_created)).toBeGreaterThanOrEqual(before);
      expect(Number(row!.date_created)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
      const audit = await t.ctx
        .db('audit_log')
        .where({ event_type: AuditEventType.SAVED_SNIPPET_CREATED, acting_user_id: t.cast.member.id });
      expect(audit).toHaveLength(1);
      expect(audit[0].modified_user_id).toBe(t.cast.member.id);
      expect(JSON.parse(audit[0].extra_data!)).toEqual({ saved_snippet_id: res.body.saved_snippet_id });
    });

    it('takes a title of exactly 60 code points, emoji counting once', async () => {
      const title = '😀'.repeat(60); // 120 UTF-16 units
      const id = await create(t.cast.moderator, title, 'sixty');
      expect((await t.ctx.db('saved_snippets').where({ id }).first('title'))!.title).toBe(title);
    });

    it('bots have snippets too', async () => {
      const id = await create(t.cast.bot, 'Bot', 'beep');
      expect((await rowsOf(t.cast.bot.id)).map((r: { id: number }) => r.id)).toEqual([id]);
    });

    it.each([
      ['an empty title', { title: '', content: 'x' }, 'title cannot be blank'],
      ['a title of whitespace (Unicode spaces included)', { title: ' \u3000\u00a0\u0085\t', content: 'x' }, 'title cannot be blank'],
      ['an empty content', { title: 'x', content: '' }, 'content cannot be blank'],
      ['a content of whitespace', { title: 'x', content: '\n \n' }, 'content cannot be blank'],
      ['a title of 61 code points', { title: 'é'.repeat(61), content: 'x' }, 'title is too long (limit: 60 characters)'],
      ['a title of 61 emoji', { title: '😀'.repeat(61), content: 'x' }, 'title is too long (limit: 60 characters)'],
      ['a content over 10,000 characters', { title: 'x', content: 'y'.repeat(10001) }, 'content is too long (limit: 10000 characters)'],
      ['both blank (content is read first)', { title: ' ', content: ' ' }, 'content cannot be blank'],
    ])('refuses %s, storing nothing', async (_name, fields, msg) => {
      const before = await countAll();
      const res = await t.api.post('/saved_snippets', t.cast.member, fields);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(msg));
      expect(await countAll()).toBe(before);
    });

    it('accepts 60 code points once the surrounding whitespace is trimmed', async () => {
      const id = await create(t.cast.moderator, `  ${'a'.repeat(60)}  `, 'padded');
      expect((await t.ctx.db('saved_snippets').where({ id }).first('title'))!.title).toBe('a'.repeat(60));
    });

    it.each([
      ['without content', { title: 'x' }],
      ['with neither field (content is read first)', { note: 'x' }],
    ])('refuses a request %s, naming content', async (_name, fields) => {
      const before = await countAll();
      const res = await t.api.post('/saved_snippets', t.cast.member, fields);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        result: 'error',
        msg: "Missing 'content' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'content',
      });
      expect(await countAll()).toBe(before);
    });
  });

  describe('GET /saved_snippets', () => {
    it("lists the caller's snippets only, oldest first", async () => {
      const owner = t.cast.owner;
      const a = await create(owner, 'A', 'first');
      const b = await create(owner, 'B', 'second');
      await create(t.cast.admin, 'Not yours', 'secret');
      const res = await t.api.get('/saved_snippets', owner);
      expect(res.status).toBe(200);
      expect(res.body.saved_snippets).toEqual([
        { id: a, title: 'A', content: 'first', date_created: expect.any(Number) },
        { id: b, title: 'B', content: 'second', date_created: expect.any(Number) },
      ]);
      const row = await t.ctx.db('saved_snippets').where({ id: a }).first('date_created');
      expect(res.body.saved_snippets[0].date_created).toBe(Number(row!.date_created));
    });

    it('is empty for a user with no snippets', async () => {
      const res = await t.api.get('/saved_snippets', t.cast.guest);
      expect(res.body.saved_snippets).toEqual([]);
    });
  });

  describe('PATCH /saved_snippets/{id}', () => {
    it('changes the fields sent, trimmed, and keeps the others', async () => {
      const id = await create(t.cast.member, 'Old', 'old content');
      let res = await t.api.patch(`/saved_snippets/${id}`, t.cast.member, { title: '  New  ' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect(await t.ctx.db('saved_snippets').where({ id }).first('title', 'content')).toEqual({ title: 'New', content: 'old content' });
      res = await t.api.patch(`/saved_snippets/${id}`, t.cast.member, { content: ' newer ' });
      expect(res.status).toBe(200);
      expect(await t.ctx.db('saved_snippets').where({ id }).first('title', 'content')).toEqual({ title: 'New', content: 'newer' });
    });

    it.each([
      ['an empty title', { title: '' }, 'title cannot be blank'],
      ['a blank content', { content: '   ' }, 'content cannot be blank'],
      ['a title of 61 code points', { title: 'x'.repeat(61) }, 'title is too long (limit: 60 characters)'],
      ['a good title with a blank content', { title: 'fine', content: '' }, 'content cannot be blank'],
    ])('refuses %s, changing nothing', async (_name, fields, msg) => {
      const id = await create(t.cast.member, 'Keep', 'keep me');
      const res = await t.api.patch(`/saved_snippets/${id}`, t.cast.member, fields);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(msg));
      expect(await t.ctx.db('saved_snippets').where({ id }).first('title', 'content')).toEqual({ title: 'Keep', content: 'keep me' });
    });

    it("answers another user's snippet as a missing one, and leaves it alone", async () => {
      const theirs = await create(t.cast.admin, 'Admin only', 'mine');
      const missing = theirs + 1000;
      const other = await t.api.patch(`/saved_snippets/${theirs}`, t.cast.member, { title: 'Stolen' });
      const none = await t.api.patch(`/saved_snippets/${missing}`, t.cast.member, { title: 'Stolen' });
      expect(other.status).toBe(404);
      expect(other.body).toEqual(notFound);
      expect(none.status).toBe(404);
      expect(none.body).toEqual(notFound);
      expect(await t.ctx.db('saved_snippets').where({ id: theirs }).first('title')).toEqual({ title: 'Admin only' });
    });

    it('with neither field succeeds without looking the snippet up, as Zulip does', async () => {
      const theirs = await create(t.cast.admin, 'Untouched', 'x');
      const res = await t.api.patch(`/saved_snippets/${theirs}`, t.cast.member, {});
      expect(res.status).toBe(200);
      expect(await t.ctx.db('saved_snippets').where({ id: theirs }).first('title')).toEqual({ title: 'Untouched' });
    });
  });

  describe('DELETE /saved_snippets/{id}', () => {
    it('deletes the caller’s snippet', async () => {
      const id = await create(t.cast.member, 'Bye', 'gone');
      const res = await t.api.delete(`/saved_snippets/${id}`, t.cast.member);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect(await t.ctx.db('saved_snippets').where({ id }).first()).toBeUndefined();
      const again = await t.api.delete(`/saved_snippets/${id}`, t.cast.member);
      expect(again.status).toBe(404);
      expect(again.body).toEqual(notFound);
    });

    it("answers another user's snippet as a missing one, and keeps it", async () => {
      const theirs = await create(t.cast.admin, 'Admin keeps', 'x');
      const res = await t.api.delete(`/saved_snippets/${theirs}`, t.cast.member);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(notFound);
      const none = await t.api.delete(`/saved_snippets/${theirs + 1000}`, t.cast.member);
      expect(none.status).toBe(404);
      expect(none.body).toEqual(notFound);
      expect(await t.ctx.db('saved_snippets').where({ id: theirs }).first('id')).toEqual({ id: theirs });
    });
  });

  describe('events and POST /register', () => {
    it("register's saved_snippets holds the caller's snippets only", async () => {
      const user = t.cast.moderator;
      const mine = await t.api.get('/saved_snippets', user);
      expect(mine.body.saved_snippets.length).toBeGreaterThan(0);
      const c = await register(t, user, { fetch_event_types: ['saved_snippets'] });
      expect(c.state.saved_snippets).toEqual(mine.body.saved_snippets);
      const other = await register(t, t.cast.guest, { fetch_event_types: ['saved_snippets'] });
      expect(other.state.saved_snippets).toEqual([]);
    });

    it('add, update and remove reach the owner’s queues only', async () => {
      const owner = t.cast.member;
      const mineA = await register(t, owner, { event_types: ['saved_snippets'] });
      const mineB = await register(t, owner);
      const someoneElse = await register(t, t.cast.admin);

      const id = await create(owner, 'Evented', 'body');
      const row = await t.ctx.db('saved_snippets').where({ id }).first('date_created');
      const snippet = { id, title: 'Evented', content: 'body', date_created: Number(row!.date_created) };
      const added = { type: 'saved_snippets', op: 'add', saved_snippet: snippet };
      expect((await pending(t, mineA)).map(({ id: _, ...e }) => e)).toEqual([added]);

      await t.api.patch(`/saved_snippets/${id}`, owner, { content: ' changed ' });
      const updated = { type: 'saved_snippets', op: 'update', saved_snippet: { ...snippet, content: 'changed' } };
      expect((await pending(t, mineA)).map(({ id: _, ...e }) => e)).toEqual([updated]);

      await t.api.delete(`/saved_snippets/${id}`, owner);
      const removed = { type: 'saved_snippets', op: 'remove', saved_snippet_id: id };
      expect((await pending(t, mineA)).map(({ id: _, ...e }) => e)).toEqual([removed]);

      expect((await pending(t, mineB)).map(({ id: _, ...e }) => e)).toEqual([added, updated, removed]);
      // The other user's queue is live (it gets its own snippet's event), yet got none of the owner's.
      const own = await create(t.cast.admin, 'Admin', 'x');
      expect((await pending(t, someoneElse)).map((e) => [e.op, e.saved_snippet?.id])).toEqual([['add', own]]);
    });

    it('a refused request and an empty edit publish nothing', async () => {
      const owner = t.cast.member;
      const id = await create(owner, 'Quiet', 'x');
      const c = await register(t, owner);
      await t.api.post('/saved_snippets', owner, { title: '', content: 'x' });
      await t.api.patch(`/saved_snippets/${id}`, owner, { title: 'y'.repeat(61) });
      await t.api.patch(`/saved_snippets/${id}`, owner, {});
      await t.api.delete(`/saved_snippets/${id + 1000}`, owner);
      // A last change proves the queue works: only its event is there.
      await t.api.delete(`/saved_snippets/${id}`, owner);
      expect((await pending(t, c)).map((e) => e.op)).toEqual(['remove']);
    });
  });
});
