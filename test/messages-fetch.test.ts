import { eachDatabase } from './support/databases';
import { countQueries, createChannel, startTestServer, subscribe, TestServer } from './support/server';
import { startRawServer } from './support/raw-http';
import type { UserRow } from '../src/queries/rows';

eachDatabase('GET /messages', (dialect) => {
  let t: TestServer;
  const ids: Record<string, number> = {};
  let lobby: { id: number; recipient_id: number };
  let staff: { id: number; recipient_id: number };
  let vault: { id: number; recipient_id: number };

  const send = async (key: string, who: UserRow, fields: Record<string, unknown>) => {
    const res = await t.api.post('/messages', who, fields);
    if (res.status !== 200) throw new Error(`${key}: ${JSON.stringify(res.body)}`);
    ids[key] = res.body.id;
  };
  const fetch = (who: UserRow, q: Record<string, unknown>) =>
    t.api.get('/messages', who, { num_before: 100, num_after: 100, anchor: 'newest', ...q });
  const idsOf = (res: { body: any }) => res.body.messages.map((m: any) => m.id);

  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member, guest } = t.cast;
    await createChannel(t, 'general', [owner, admin, moderator, member, guest]);
    lobby = await createChannel(t, 'lobby', [owner, admin]);
    staff = await createChannel(t, 'staff', [owner, admin], { inviteOnly: true, historyPublicToSubscribers: true });
    vault = await createChannel(t, 'vault', [owner, admin], { inviteOnly: true, historyPublicToSubscribers: false });
    await send('g1', owner, { type: 'channel', to: 'general', topic: 'Greetings', content: 'hello there https://example.com' });
    await send('g2', member, { type: 'channel', to: 'general', topic: 'greetings', content: 'general kenobi' });
    await send('g3', admin, { type: 'channel', to: 'general', topic: '✔ fixed bug', content: 'resolved it @**Test Member**' });
    await send('l1', owner, { type: 'channel', to: 'lobby', topic: 'chat', content: 'lobby talk about penguins' });
    await send('s1', owner, { type: 'channel', to: 'staff', topic: 'plans', content: 'staff plans' });
    await send('v1', owner, { type: 'channel', to: 'vault', topic: 'secrets', content: 'vault secret' });
    await send('d1', member, { type: 'direct', to: [moderator.id], content: 'direct hi' });
    await send('d2', owner, { type: 'direct', to: [member.id, admin.id], content: 'group hi' });
    await subscribe(t, staff, [moderator]);
    await subscribe(t, vault, [moderator]);
    await send('s2', owner, { type: 'channel', to: 'staff', topic: 'plans', content: 'more staff plans' });
    await send('v2', owner, { type: 'channel', to: 'vault', topic: 'secrets', content: 'second vault secret' });
  });
  afterAll(() => t.close());

  describe('anchors', () => {
    it('newest: the last messages, found_newest, the anchor as Zulip reports it', async () => {
      const res = await fetch(t.cast.member, { num_before: 2, num_after: 0 });
      expect(res.status).toBe(200);
      expect(idsOf(res)).toEqual([ids.d1, ids.d2]);
      expect(res.body).toMatchObject({
        found_newest: true,
        found_oldest: false,
        found_anchor: false,
        history_limited: false,
        anchor: 10000000000000000,
      });
    });

    it('oldest: the first messages, found_oldest', async () => {
      const res = await fetch(t.cast.member, { anchor: 'oldest', num_before: 0, num_after: 2 });
      expect(idsOf(res)).toEqual([ids.g1, ids.g2]);
      expect(res.body).toMatchObject({ found_oldest: true, found_newest: false, anchor: 0 });
    });

    it('an id: messages on both sides and the anchor itself', async () => {
      const res = await fetch(t.cast.member, { anchor: String(ids.g2), num_before: 1, num_after: 1 });
      expect(idsOf(res)).toEqual([ids.g1, ids.g2, ids.g3]);
      expect(res.body).toMatchObject({ anchor: ids.g2, found_anchor: true, found_oldest: false, found_newest: false });
    });

    it('include_anchor=false at one end', async () => {
      const res = await fetch(t.cast.member, { anchor: String(ids.g2), num_before: 0, num_after: 1, include_anchor: false });
      expect(idsOf(res)).toEqual([ids.g3]);
      expect(res.body.found_anchor).toBe(false);
      const bad = await fetch(t.cast.member, { anchor: String(ids.g2), num_before: 1, num_after: 1, include_anchor: false });
      expect([bad.status, bad.body]).toEqual([
        400,
        { result: 'error', msg: 'The anchor can only be excluded at an end of the range', code: 'BAD_REQUEST' },
      ]);
    });

    it('first_unread, and newest when nothing is unread', async () => {
      // num_after counts messages after the anchor; the anchor itself comes too.
      const res = await fetch(t.cast.moderator, { anchor: 'first_unread', num_before: 0, num_after: 1 });
      expect(idsOf(res)).toEqual([ids.g1, ids.g2]);
      expect(res.body.anchor).toBe(ids.g1);
      const legacy = await fetch(t.cast.moderator, { anchor: undefined, use_first_unread_anchor: true, num_before: 0, num_after: 0 });
      expect(idsOf(legacy)).toEqual([ids.g1]);
      // Zulip's server lets use_first_unread_anchor win over an anchor beside it
      // (zulip-terminal's first request sends both).
      const both = await fetch(t.cast.moderator, { anchor: 'newest', use_first_unread_anchor: true, num_before: 0, num_after: 0 });
      expect([both.status, both.body.anchor, idsOf(both)]).toEqual([200, ids.g1, [ids.g1]]);
      const none = await fetch(t.cast.moderator, {
        anchor: 'first_unread',
        num_before: 0,
        num_after: 1,
        narrow: [{ operator: 'is', operand: 'starred' }],
      });
      expect(none.body.anchor).toBe(10000000000000000);
    });

    it('date: the first message on or after anchor_date, else newest', async () => {
      const first = await t.ctx.db('messages').where({ id: ids.g1 }).first('date_sent');
      const iso = new Date(first!.date_sent * 1000).toISOString();
      const res = await fetch(t.cast.member, { anchor: 'date', anchor_date: iso, num_before: 0, num_after: 0 });
      expect(idsOf(res)).toEqual([ids.g1]);
      expect(res.body.found_anchor).toBe(true);
      const future = await fetch(t.cast.member, { anchor: 'date', anchor_date: '2999-01-01', num_before: 1, num_after: 0 });
      expect(future.body.anchor).toBe(10000000000000000);
      const bad = await fetch(t.cast.member, { anchor: 'date', anchor_date: 'yesterday', num_before: 1, num_after: 0 });
      expect([bad.status, bad.body]).toEqual([400, { result: 'error', msg: 'Invalid anchor_date', code: 'BAD_REQUEST' }]);
    });

    it.each([
      ['a word that is no anchor', { anchor: 'middle' }, 'Invalid anchor'],
      ['5001 messages', { num_before: 5000, num_after: 1 }, 'Too many messages requested (maximum 5000).'],
      ['a negative count', { num_before: -1 }, 'num_before is too small'],
      [
        'no num_before',
        { num_before: undefined },
        "Missing 'num_before' argument",
        { code: 'REQUEST_VARIABLE_MISSING', var_name: 'num_before' },
      ],
    ])('refuses %s', async (_what, q, msg, code: Record<string, string> = { code: 'BAD_REQUEST' }) => {
      const res = await fetch(t.cast.member, q);
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg, ...code }]);
    });

    it('message_ids: the accessible subset, and no mixing with anchors', async () => {
      const res = await t.api.get('/messages', t.cast.member, { message_ids: [ids.g1, ids.v1, ids.d1] });
      expect(idsOf(res)).toEqual([ids.g1, ids.d1]);
      expect(res.body).not.toHaveProperty('anchor');
      expect(res.body).toMatchObject({ found_anchor: false, found_oldest: false, found_newest: false });
      const mixed = await t.api.get('/messages', t.cast.member, { message_ids: [ids.g1], anchor: 'newest' });
      expect(mixed.body).toEqual({
        result: 'error',
        code: 'BAD_REQUEST',
        msg: 'Unsupported parameter combination: anchor, message_ids',
        parameters: 'anchor, message_ids',
      });
    });
  });

  describe('narrows', () => {
    const narrowIds = async (who: UserRow, narrow: unknown) => {
      const res = await fetch(who, { narrow });
      if (res.status !== 200) throw new Error(JSON.stringify(res.body));
      return idsOf(res);
    };

    it('channel by name or id, and topic case-insensitively', async () => {
      expect(await narrowIds(t.cast.member, [{ operator: 'channel', operand: 'general' }])).toEqual([ids.g1, ids.g2, ids.g3]);
      expect(await narrowIds(t.cast.member, [{ operator: 'stream', operand: lobby.id }])).toEqual([ids.l1]);
      expect(
        await narrowIds(t.cast.member, [
          { operator: 'channel', operand: 'general' },
          { operator: 'topic', operand: 'GREETINGS' },
        ]),
      ).toEqual([ids.g1, ids.g2]);
      expect(
        await narrowIds(t.cast.member, [
          ['stream', 'general'],
          ['topic', 'greetings'],
        ]),
      ).toEqual([ids.g1, ids.g2]);
    });

    it('negated terms', async () => {
      expect(
        await narrowIds(t.cast.member, [
          { operator: 'channel', operand: 'general' },
          { operator: 'topic', operand: 'greetings', negated: true },
        ]),
      ).toEqual([ids.g3]);
    });

    it('channels:public reads every public channel', async () => {
      expect(await narrowIds(t.cast.member, [{ operator: 'channels', operand: 'public' }])).toEqual([ids.g1, ids.g2, ids.g3, ids.l1]);
    });

    it('sender, dm, dm-including, is:dm', async () => {
      expect(await narrowIds(t.cast.member, [{ operator: 'sender', operand: t.cast.admin.email }])).toEqual([ids.g3]);
      expect(await narrowIds(t.cast.member, [{ operator: 'dm', operand: [t.cast.moderator.id] }])).toEqual([ids.d1]);
      expect(await narrowIds(t.cast.moderator, [{ operator: 'pm-with', operand: t.cast.member.email }])).toEqual([ids.d1]);
      expect(await narrowIds(t.cast.member, [{ operator: 'dm', operand: [t.cast.owner.id, t.cast.admin.id] }])).toEqual([ids.d2]);
      expect(await narrowIds(t.cast.member, [{ operator: 'dm-including', operand: t.cast.owner.id }])).toEqual([ids.d2]);
      expect(await narrowIds(t.cast.member, [{ operator: 'is', operand: 'dm' }])).toEqual([ids.d1, ids.d2]);
      expect(
        await narrowIds(t.cast.member, [
          { operator: 'is', operand: 'private', negated: true },
          { operator: 'channel', operand: 'general' },
        ]),
      ).toEqual([ids.g1, ids.g2, ids.g3]);
    });

    it('is:mentioned, is:resolved, is:unread, has:link, id', async () => {
      expect(await narrowIds(t.cast.member, [{ operator: 'is', operand: 'mentioned' }])).toEqual([ids.g3]);
      expect(await narrowIds(t.cast.member, [{ operator: 'is', operand: 'resolved' }])).toEqual([ids.g3]);
      expect(
        await narrowIds(t.cast.member, [
          { operator: 'is', operand: 'resolved', negated: true },
          { operator: 'channel', operand: 'general' },
        ]),
      ).toEqual([ids.g1, ids.g2]);
      expect(await narrowIds(t.cast.member, [{ operator: 'has', operand: 'link' }])).toEqual([ids.g1]);
      expect(await narrowIds(t.cast.member, [{ operator: 'id', operand: ids.g2 }])).toEqual([ids.g2]);
      const unread = await narrowIds(t.cast.member, [{ operator: 'is', operand: 'unread' }]);
      expect(unread).toContain(ids.g1);
    });

    it('search: full text with highlighting', async () => {
      const res = await fetch(t.cast.member, { narrow: [{ operator: 'search', operand: 'kenobi' }] });
      expect(idsOf(res)).toEqual([ids.g2]);
      expect(res.body.messages[0].match_content).toBe('<p>general <span class="highlight">kenobi</span></p>');
      expect(res.body.messages[0].match_subject).toBe('greetings');
      const prefix = await fetch(t.cast.member, {
        narrow: [
          { operator: 'channels', operand: 'public' },
          { operator: 'search', operand: 'pengu' },
        ],
      });
      expect(idsOf(prefix)).toEqual([ids.l1]);
      const none = await fetch(t.cast.member, { narrow: [{ operator: 'search', operand: 'nonexistentword' }] });
      expect(idsOf(none)).toEqual([]);
      expect(none.body.messages).toEqual([]);
    });

    it('search with a 20,000-character word finds and highlights what begins with its first 64 characters', async () => {
      const long = 'x'.repeat(80);
      const sent = await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'lobby', topic: 'long', content: `a ${long}` });
      // Over Parley's own HTTP server: the query string is longer than Node's default header limit (16 KB).
      const server = await startRawServer(t.app);
      try {
        const narrow = [
          { operator: 'channels', operand: 'public' },
          { operator: 'search', operand: `${'x'.repeat(20_000)} a` },
        ];
        const query = new URLSearchParams({ narrow: JSON.stringify(narrow), anchor: 'newest', num_before: '10', num_after: '0' });
        const res = await server.request({ method: 'GET', path: `/api/v1/messages?${query}`, user: t.cast.member });
        expect([res.status, res.body?.messages?.map((m: { id: number }) => m.id)]).toEqual([200, [sent.body.id]]);
        expect(res.body.messages[0].match_content).toBe(`<p><span class="highlight">a</span> <span class="highlight">${long}</span></p>`);
      } finally {
        await server.close();
      }
      await t.ctx.db('user_messages').where({ message_id: sent.body.id }).delete();
      await t.ctx.db('messages').where({ id: sent.body.id }).delete();
    });

    it('search finds short words and stopwords too, on both databases', async () => {
      const sent = await t.api.post('/messages', t.cast.owner, {
        type: 'channel',
        to: 'lobby',
        topic: 'fox',
        content: 'the quick brown fox is at home with me on db',
      });
      for (const operand of ['the fox', 'db', 'at home', 'is', 'quick db']) {
        const res = await fetch(t.cast.member, {
          narrow: [
            { operator: 'channels', operand: 'public' },
            { operator: 'search', operand },
          ],
        });
        expect([operand, idsOf(res)]).toEqual([operand, [sent.body.id]]);
      }
      await t.ctx.db('user_messages').where({ message_id: sent.body.id }).delete();
      await t.ctx.db('messages').where({ id: sent.body.id }).delete();
    });

    it('with: the conversation that holds the message', async () => {
      expect(await narrowIds(t.cast.member, [{ operator: 'with', operand: ids.g2 }])).toEqual([ids.g1, ids.g2]);
      expect(await narrowIds(t.cast.member, [{ operator: 'with', operand: ids.d1 }])).toEqual([ids.d1]);
    });

    it.each([
      ['an unknown operator', [{ operator: 'color', operand: 'blue' }], 'BAD_NARROW', 'Invalid narrow operator: unknown operator color'],
      ['an unknown channel', [{ operator: 'channel', operand: 'nope' }], 'BAD_NARROW', 'Invalid narrow operator: unknown channel nope'],
      [
        'an unknown is operand',
        [{ operator: 'is', operand: 'shiny' }],
        'BAD_NARROW',
        "Invalid narrow operator: unknown 'is' operand shiny",
      ],
      [
        'a channel and a dm',
        [
          { operator: 'channel', operand: 'general' },
          { operator: 'is', operand: 'dm' },
        ],
        'BAD_NARROW',
        'Invalid narrow operator: No message can be both a channel message and direct message',
      ],
      ['an operand of the wrong type', [{ operator: 'topic', operand: 5 }], 'BAD_REQUEST', 'Invalid narrow'],
      ['a term without an operand', [{ operator: 'topic' }], 'BAD_REQUEST', 'Invalid narrow[0]'],
    ])('refuses %s', async (_what, narrow, code, msg) => {
      const res = await fetch(t.cast.member, { narrow });
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg, code }]);
    });
  });

  describe('access', () => {
    it('gives a non-subscriber public history, flagged read and historical', async () => {
      const res = await fetch(t.cast.member, { narrow: [{ operator: 'channel', operand: 'lobby' }] });
      expect(idsOf(res)).toEqual([ids.l1]);
      expect(res.body.messages[0].flags).toEqual(['read', 'historical']);
    });

    it('keeps guests to channels they are subscribed to', async () => {
      expect(idsOf(await fetch(t.cast.guest, { narrow: [{ operator: 'channel', operand: 'lobby' }] }))).toEqual([]);
      expect(idsOf(await fetch(t.cast.guest, { narrow: [{ operator: 'channel', operand: 'general' }] }))).toEqual([ids.g1, ids.g2, ids.g3]);
      expect(idsOf(await fetch(t.cast.guest, { narrow: [{ operator: 'channels', operand: 'public' }] }))).toEqual([ids.g1, ids.g2, ids.g3]);
    });

    it('shows a late subscriber the shared history of a private channel', async () => {
      const res = await fetch(t.cast.moderator, { narrow: [{ operator: 'channel', operand: 'staff' }] });
      expect(idsOf(res)).toEqual([ids.s1, ids.s2]);
      expect(res.body.messages[0].flags).toEqual(['read', 'historical']);
    });

    it('shows a late subscriber only what they received of protected history', async () => {
      expect(idsOf(await fetch(t.cast.moderator, { narrow: [{ operator: 'channel', operand: 'vault' }] }))).toEqual([ids.v2]);
      expect((await t.api.get(`/messages/${ids.v1}`, t.cast.moderator)).body).toEqual({
        result: 'error',
        msg: 'Invalid message(s)',
        code: 'BAD_REQUEST',
      });
    });

    it("hides private channels and other people's DMs, with one error for missing and forbidden", async () => {
      expect(idsOf(await fetch(t.cast.member, { narrow: [{ operator: 'channel', operand: 'staff' }] }))).toEqual([]);
      const forbidden = await t.api.get(`/messages/${ids.d1}`, t.cast.guest);
      const missing = await t.api.get('/messages/99999999', t.cast.guest);
      expect(forbidden.body).toEqual(missing.body);
      expect([forbidden.status, forbidden.body]).toEqual([400, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' }]);
    });

    it('keeps what a user received after they unsubscribe', async () => {
      await t.ctx.db('subscriptions').where({ user_id: t.cast.admin.id, recipient_id: vault.recipient_id }).update({ active: false });
      try {
        expect(idsOf(await fetch(t.cast.admin, { narrow: [{ operator: 'channel', operand: 'vault' }] }))).toEqual([ids.v1, ids.v2]);
      } finally {
        await t.ctx.db('subscriptions').where({ user_id: t.cast.admin.id, recipient_id: vault.recipient_id }).update({ active: true });
      }
    });
  });

  describe('message objects', () => {
    it('carry every field, raw markdown on request, and the empty topic as Zulip shows it', async () => {
      const res = await fetch(t.cast.member, {
        anchor: String(ids.g2),
        num_before: 0,
        num_after: 0,
        apply_markdown: false,
        client_gravatar: false,
      });
      const m = res.body.messages[0];
      expect(m).toMatchObject({
        id: ids.g2,
        content: 'general kenobi',
        content_type: 'text/x-markdown',
        client: 'API',
        is_me_message: false,
        reactions: [],
        submessages: [],
        topic_links: [],
        sender_realm_str: '',
        type: 'stream',
        display_recipient: 'general',
        sender_email: t.cast.member.email,
        sender_full_name: 'Test Member',
      });
      expect(typeof m.avatar_url).toBe('string');
      expect(typeof m.timestamp).toBe('number');
      const gravatar = await fetch(t.cast.member, { anchor: String(ids.g2), num_before: 0, num_after: 0 });
      expect(gravatar.body.messages[0].avatar_url).toBeNull();
      // client_gravatar's other name, alone, is not overridden by client_gravatar's default.
      const otherName = await fetch(t.cast.member, { anchor: String(ids.g2), num_before: 0, num_after: 0, client_avatar_service: false });
      expect(otherName.body.messages[0].avatar_url).toBe(m.avatar_url);
    });

    it('issue the same number of queries for 10 and for 200 messages', async () => {
      for (let i = 0; i < 200; i++) {
        await t.api.post('/messages', t.cast.owner, { type: 'channel', to: 'general', topic: `bulk ${i % 7}`, content: `bulk ${i}` });
      }
      // Once warm (the senders in the user cache), whatever the page size.
      await fetch(t.cast.member, { num_before: 200, num_after: 0 });
      const small = await countQueries(t, () => fetch(t.cast.member, { num_before: 10, num_after: 0 }));
      const large = await countQueries(t, () => fetch(t.cast.member, { num_before: 200, num_after: 0 }));
      expect(small.result.body.messages).toHaveLength(10);
      expect(large.result.body.messages).toHaveLength(200);
      expect(large.queries).toBe(small.queries);
      const narrowSmall = await countQueries(t, () =>
        fetch(t.cast.member, { num_before: 10, num_after: 0, narrow: [{ operator: 'channel', operand: 'general' }] }),
      );
      const narrowLarge = await countQueries(t, () =>
        fetch(t.cast.member, { num_before: 200, num_after: 0, narrow: [{ operator: 'channel', operand: 'general' }] }),
      );
      expect(narrowLarge.queries).toBe(narrowSmall.queries);
    });

    it('reads the users of a dm operand in one batch, however many it names', async () => {
      const dm = (operand: unknown) => fetch(t.cast.member, { num_before: 10, num_after: 0, narrow: [{ operator: 'dm', operand }] });
      const once = await countQueries(t, () => dm([t.cast.admin.id]));
      const many = await countQueries(t, () => dm(Array.from({ length: 1000 }, () => t.cast.admin.id)));
      const oneEmail = await countQueries(t, () => dm(t.cast.admin.email));
      const manyEmails = await countQueries(t, () => dm(Array.from({ length: 500 }, () => t.cast.admin.email).join(',')));
      const statuses = [once, many, oneEmail, manyEmails].map((c) => c.result.status);
      expect(statuses).toEqual([200, 200, 200, 200]);
      expect(many.queries).toBe(once.queries);
      expect(manyEmails.queries).toBe(oneEmail.queries);
      const unknown = await dm([t.cast.admin.id, 999_999]);
      expect([unknown.status, unknown.body.msg]).toEqual([400, 'Invalid narrow operator: unknown user 999999']);
    });
  });
});
