import { eachDatabase } from './support/databases';
import { recordEdit } from './support/edits';
import { createChannel, startTestServer, TestServer } from './support/server';

eachDatabase('GET /messages/{id}/history', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let archive: { id: number; recipient_id: number };

  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, moderator, member]);
    archive = await createChannel(t, 'archive', [owner, admin, moderator, member]);
    await createChannel(t, 'secret', [owner, admin], { inviteOnly: true });
  });
  afterAll(() => t.close());

  const setPolicy = (policy: 'all' | 'moves' | 'none') =>
    t.ctx.db('realms').where({ id: t.realmId }).update({ message_edit_history_visibility_policy: policy });
  afterEach(() => setPolicy('all'));

  const send = async (to: string, topic: string, content: string) =>
    (await t.api.post('/messages', t.cast.member, { type: 'channel', to, topic, content })).body.id as number;
  const sentAt = async (id: number) => Number((await t.ctx.db('messages').where({ id }).first('date_sent'))!.date_sent);
  const history = (id: number, query: Record<string, unknown> = {}, user = t.cast.member) =>
    t.api.get(`/messages/${id}/history`, user, query);

  it('gives a message never edited as one snapshot of exactly five fields', async () => {
    const id = await send('general', 'plain', 'never *touched*');
    const res = await history(id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      result: 'success',
      msg: '',
      message_history: [
        {
          topic: 'plain',
          content: 'never *touched*',
          rendered_content: '<p>never <em>touched</em></p>',
          timestamp: await sentAt(id),
          user_id: t.cast.member.id,
        },
      ],
    });
  });

  it('rebuilds every version oldest first, each with the fields of what its edit changed', async () => {
    const id = await send('general', 'topic 1', 'content 1');
    const sent = await sentAt(id);
    const { member, admin } = t.cast;
    await recordEdit(t, id, { by: member, at: sent + 10, content: 'content 2' });
    await recordEdit(t, id, { by: member, at: sent + 20, topic: 'topic 2' });
    await recordEdit(t, id, { by: admin, at: sent + 30, channelId: archive.id });
    await recordEdit(t, id, { by: member, at: sent + 40, content: 'content 3', topic: 'topic 3' });

    const res = await history(id);
    expect(res.status).toBe(200);
    const h = res.body.message_history;
    expect(h).toEqual([
      { topic: 'topic 1', content: 'content 1', rendered_content: '<p>content 1</p>', timestamp: sent, user_id: member.id },
      {
        topic: 'topic 1',
        content: 'content 2',
        rendered_content: '<p>content 2</p>',
        timestamp: sent + 10,
        user_id: member.id,
        prev_content: 'content 1',
        prev_rendered_content: '<p>content 1</p>',
        content_html_diff:
          '<div><p>content <span class="highlight_text_inserted">2</span> <span class="highlight_text_deleted">1</span></p></div>',
      },
      {
        topic: 'topic 2',
        prev_topic: 'topic 1',
        content: 'content 2',
        rendered_content: '<p>content 2</p>',
        timestamp: sent + 20,
        user_id: member.id,
      },
      {
        topic: 'topic 2',
        content: 'content 2',
        rendered_content: '<p>content 2</p>',
        timestamp: sent + 30,
        user_id: admin.id,
        prev_stream: general.id,
        stream: archive.id,
      },
      {
        topic: 'topic 3',
        prev_topic: 'topic 2',
        content: 'content 3',
        rendered_content: '<p>content 3</p>',
        timestamp: sent + 40,
        user_id: member.id,
        prev_content: 'content 2',
        prev_rendered_content: '<p>content 2</p>',
        content_html_diff:
          '<div><p>content <span class="highlight_text_inserted">3</span> <span class="highlight_text_deleted">2</span></p></div>',
      },
    ]);
    // The newest snapshot is the message as it reads now.
    const now = (await t.api.get(`/messages/${id}`, member)).body;
    expect(now.raw_content).toBe(h[h.length - 1].content);
    expect(now.message.subject).toBe(h[h.length - 1].topic);
  });

  describe('content_html_diff', () => {
    const diffOf = async (before: string, after: string) => {
      const id = await send('general', 'diffs', before);
      await recordEdit(t, id, { by: t.cast.member, at: (await sentAt(id)) + 1, content: after });
      const res = await history(id);
      expect(res.status).toBe(200);
      return res.body.message_history[1].content_html_diff as string;
    };

    it('marks inserted words', async () => {
      expect(await diffOf('Hello world', 'Hello brave new world')).toBe(
        '<div><p>Hello <span class="highlight_text_inserted">brave new</span> world</p></div>',
      );
    });

    it('marks deleted words', async () => {
      expect(await diffOf('one two three four', 'one four')).toBe(
        '<div><p>one <span class="highlight_text_deleted">two three</span> four</p></div>',
      );
    });

    it('drops the tags of removed markup, highlighting its words', async () => {
      expect(await diffOf('keep **gone** words', 'keep words')).toBe(
        '<div><p>keep <span class="highlight_text_deleted">gone</span> words</p></div>',
      );
    });

    it('shows a rewrite beyond 400 changed words as the whole text replaced', async () => {
      const words = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(' ');
      expect(await diffOf(`${words('a', 250)} kept`, `${words('b', 250)} kept`)).toBe(
        `<div><p><span class="highlight_text_inserted">${words('b', 250)} kept</span></p>` +
          `<span class="highlight_text_deleted">${words('a', 250)} kept</span></div>`,
      );
      // Below the bound the common word is found.
      expect(await diffOf(`${words('a', 150)} kept`, `${words('b', 150)} kept`)).toBe(
        `<div><p><span class="highlight_text_inserted">${words('b', 150)}</span> ` +
          `<span class="highlight_text_deleted">${words('a', 150)}</span> kept</p></div>`,
      );
    });

    it('keeps changed markup as tags of the new version, highlighting only text', async () => {
      expect(await diffOf('make it plain', 'make it **bold** now')).toBe(
        '<div><p>make it <strong><span class="highlight_text_inserted">bold</span></strong> ' +
          '<span class="highlight_text_inserted">now</span> <span class="highlight_text_deleted">plain</span></p></div>',
      );
    });

    it('shows added paragraphs with their tags intact and escapes nothing twice', async () => {
      expect(await diffOf('fish & chips', 'fish & chips\n\n<b>more</b>')).toBe(
        '<div><p>fish &amp; chips</p>\n<p><span class="highlight_text_inserted">&lt;b&gt;more&lt;/b&gt;</span></p></div>',
      );
    });
  });

  describe('the empty topic', () => {
    let id: number;
    beforeAll(async () => {
      id = await send('general', '', 'in general chat');
      await recordEdit(t, id, { by: t.cast.member, at: (await sentAt(id)) + 5, topic: 'named' });
    });

    it('appears as the display name by default, in topic and prev_topic', async () => {
      const h = (await history(id)).body.message_history;
      expect(h.map((s: any) => [s.topic, s.prev_topic])).toEqual([
        ['general chat', undefined],
        ['named', 'general chat'],
      ]);
    });

    it('appears as the empty string with allow_empty_topic_name', async () => {
      const h = (await history(id, { allow_empty_topic_name: true })).body.message_history;
      expect(h.map((s: any) => [s.topic, s.prev_topic])).toEqual([
        ['', undefined],
        ['named', ''],
      ]);
    });
  });

  describe("the organization's message_edit_history_visibility_policy", () => {
    let id: number;
    beforeAll(async () => {
      id = await send('general', 'policy', 'first words');
      const sent = await sentAt(id);
      await recordEdit(t, id, { by: t.cast.member, at: sent + 1, content: 'second words' });
      await recordEdit(t, id, { by: t.cast.admin, at: sent + 2, topic: 'policy moved' });
      await recordEdit(t, id, { by: t.cast.member, at: sent + 3, content: 'third words', topic: 'policy again' });
    });

    it("'none' refuses, for readable and unreadable messages alike", async () => {
      expect((await history(id)).body.message_history).toHaveLength(4);
      await setPolicy('none');
      const refusal = { result: 'error', msg: 'Message edit history is disabled in this organization', code: 'BAD_REQUEST' };
      for (const target of [id, 99999999]) {
        const res = await history(target);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(refusal);
      }
    });

    it("'moves' shows the moves alone, and nothing of earlier content", async () => {
      await setPolicy('moves');
      const res = await history(id);
      expect(res.status).toBe(200);
      const sent = await sentAt(id);
      const current = { content: 'third words', rendered_content: '<p>third words</p>' };
      expect(res.body.message_history).toEqual([
        { topic: 'policy', ...current, timestamp: sent, user_id: t.cast.member.id },
        { topic: 'policy moved', prev_topic: 'policy', ...current, timestamp: sent + 2, user_id: t.cast.admin.id },
        { topic: 'policy again', prev_topic: 'policy moved', ...current, timestamp: sent + 3, user_id: t.cast.member.id },
      ]);
      expect(JSON.stringify(res.body)).not.toMatch(/first|second/);
    });
  });

  describe('messages one cannot read', () => {
    const invalid = { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' };

    it('refuses a message that does not exist', async () => {
      const res = await history(99999999);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(invalid);
    });

    it('refuses a private channel message to a non-subscriber, and a DM to a third party', async () => {
      const inSecret = (await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'secret', topic: 's', content: 'hush' })).body
        .id;
      const dm = (await t.api.post('/messages', t.cast.owner, { type: 'direct', to: [t.cast.admin.id], content: 'between us' })).body.id;
      // Readable by those it was sent to.
      expect((await history(inSecret, {}, t.cast.admin)).status).toBe(200);
      expect((await history(dm, {}, t.cast.admin)).status).toBe(200);
      for (const target of [inSecret, dm]) {
        const res = await history(target, {}, t.cast.member);
        expect(res.status).toBe(400);
        expect(res.body).toEqual(invalid);
      }
    });

    it('refuses a guest a public channel message it is not subscribed to', async () => {
      const id = await send('general', 'guests', 'not for guests');
      expect((await history(id, {}, t.cast.moderator)).status).toBe(200);
      const res = await history(id, {}, t.cast.guest);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(invalid);
    });
  });
});
