/**
 * The message cache (src/cache/messages.ts): GET /messages and GET
 * /messages/{id} serve message dicts from it, and every action that changes
 * a stored message drops its dict after commit. Each test warms the cache
 * through the API (and checks the dict is there), acts through the API,
 * and expects the next fetch — by another user too — to show the change.
 */
import request from 'supertest';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { countQueries, createChannel, startTestServer, TestServer } from './support/server';
import { duplicateKeys } from './support/json-keys';

eachDatabase('message cache', (dialect) => {
  let t: TestServer;
  let general: { id: number; recipient_id: number };
  let other: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, moderator, member]);
    other = await createChannel(t, 'other', [owner, admin, moderator, member]);
  });
  afterAll(() => t.close());

  const cache = () => t.ctx.messageCache!;
  const send = async (content: string, topic = 'cached', user = t.cast.member, to: string | number = 'general') => {
    const res = await t.api.post('/messages', user, { type: 'channel', to, topic, content });
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const byId = async (user: UserRow, id: number, q: Record<string, unknown> = {}) => {
    const res = await t.api.get('/messages', user, { anchor: String(id), num_before: 0, num_after: 0, ...q });
    expect(res.status).toBe(200);
    return res.body.messages[0] as Record<string, any> | undefined;
  };
  const single = async (user: UserRow, id: number, q: Record<string, unknown> = {}) => {
    const res = await t.api.get(`/messages/${id}`, user, q);
    return res.status === 200 ? (res.body.message as Record<string, any>) : undefined;
  };
  /** Fetches through both operations, as two users, and checks the dict is cached afterwards. */
  const warm = async (id: number) => {
    await byId(t.cast.member, id);
    await single(t.cast.owner, id);
    expect(cache().peek(id)).toBeDefined();
  };
  const topicNarrow = (channel: string, topic: string) => [
    { operator: 'channel', operand: channel },
    { operator: 'topic', operand: topic },
  ];

  it('puts the sent message in the cache, so that its first fetch is a hit', async () => {
    const id = await send('fresh from the oven');
    expect(cache().peek(id)).toBeDefined();
    const hits = cache().hits;
    const m = await byId(t.cast.owner, id);
    expect(m).toMatchObject({ id, content: '<p>fresh from the oven</p>', display_recipient: 'general', subject: 'cached' });
    expect(cache().hits).toBe(hits + 1);
  });

  it('puts a direct message in the cache with its participants', async () => {
    const res = await t.api.post('/messages', t.cast.member, { type: 'direct', to: [t.cast.admin.id], content: 'psst' });
    const id = res.body.id as number;
    expect(cache().peek(id)).toBeDefined();
    const m = await byId(t.cast.admin, id);
    expect(m!.display_recipient.map((u: any) => u.id)).toEqual([t.cast.admin.id, t.cast.member.id].sort((a, b) => a - b));
    expect(m!.type).toBe('private');
  });

  it('serves a page of cached messages and cached senders with the page query alone', async () => {
    const ids = [await send('one', 'counted'), await send('two', 'counted', t.cast.owner)];
    const q = { message_ids: ids };
    const first = await countQueries(t, () => t.api.get('/messages', t.cast.moderator, q));
    const warmed = await countQueries(t, () => t.api.get('/messages', t.cast.moderator, q));
    expect(warmed.result.body).toEqual(first.result.body);
    expect(warmed.result.body.messages.map((m: any) => m.id)).toEqual(ids);
    // The page (ids, flags, channel names); the senders come from the user cache and
    // authentication from the caller cache.
    expect(warmed.queries).toBe(1);
  });

  it('keeps flags per user on a cached message', async () => {
    const id = await send('star me');
    await warm(id);
    await t.api.post('/messages/flags', t.cast.moderator, { messages: [id], op: 'add', flag: 'starred' });
    expect((await byId(t.cast.moderator, id))!.flags).toEqual(expect.arrayContaining(['starred']));
    expect((await byId(t.cast.admin, id))!.flags).not.toContain('starred');
    expect((await byId(t.cast.member, id))!.flags).toEqual([]);
    expect((await single(t.cast.moderator, id))!.flags).toContain('starred');
  });

  it('serves every client variant from one cached dict', async () => {
    const id = await send('**bold** move', '');
    await warm(id);
    const size = cache().size;
    const html = await byId(t.cast.owner, id, { apply_markdown: true, allow_empty_topic_name: true });
    const raw = await byId(t.cast.owner, id, { apply_markdown: false, allow_empty_topic_name: false });
    expect(html).toMatchObject({ content: '<p><strong>bold</strong> move</p>', content_type: 'text/html', subject: '' });
    expect(raw).toMatchObject({ content: '**bold** move', content_type: 'text/x-markdown', subject: 'general chat' });
    expect((await single(t.cast.owner, id, { apply_markdown: false }))!.content).toBe('**bold** move');
    // client_gravatar: a null avatar_url when the reader may see the sender's address and the avatar is a Gravatar.
    const gravatar = await byId(t.cast.owner, id, { client_gravatar: true });
    const url = await byId(t.cast.owner, id, { client_gravatar: false });
    expect(gravatar!.avatar_url).toBeNull();
    expect(typeof url!.avatar_url).toBe('string');
    expect(cache().size).toBe(size);
  });

  it('edit content: the next fetch shows the new content and its edit history', async () => {
    const id = await send('first draft');
    await warm(id);
    expect((await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'second draft' })).status).toBe(200);
    const m = await byId(t.cast.owner, id);
    expect(m!.content).toBe('<p>second draft</p>');
    expect(m!.edit_history).toEqual([expect.objectContaining({ prev_content: 'first draft' })]);
    expect(typeof m!.last_edit_timestamp).toBe('number');
    expect((await single(t.cast.admin, id))!.content).toBe('<p>second draft</p>');
  });

  it('edit topic (change_one): the next fetch shows the new topic', async () => {
    const id = await send('topic edit', 'old name');
    await warm(id);
    expect((await t.api.patch(`/messages/${id}`, t.cast.member, { topic: 'new name', propagate_mode: 'change_one' })).status).toBe(200);
    expect((await byId(t.cast.owner, id))!.subject).toBe('new name');
    expect((await single(t.cast.admin, id))!.subject).toBe('new name');
  });

  it('move a whole topic to another channel (change_all): every message of it follows', async () => {
    const ids = [await send('move a', 'moving'), await send('move b', 'moving'), await send('move c', 'moving')];
    for (const id of ids) await warm(id);
    const res = await t.api.patch(`/messages/${ids[1]}`, t.cast.owner, {
      stream_id: other.id,
      topic: 'moved',
      propagate_mode: 'change_all',
      send_notification_to_old_thread: false,
      send_notification_to_new_thread: false,
    });
    expect(res.status).toBe(200);
    for (const id of ids) {
      const m = await byId(t.cast.admin, id);
      expect(m).toMatchObject({ stream_id: other.id, display_recipient: 'other', subject: 'moved' });
      expect(m!.edit_history[0]).toMatchObject({ prev_stream: general.id, stream: other.id });
    }
    const page = await t.api.get('/messages', t.cast.member, {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: topicNarrow('other', 'moved'),
    });
    expect(page.body.messages.map((m: any) => m.id)).toEqual(ids);
  });

  it('move the later messages of a topic (change_later): those after the anchor follow', async () => {
    const ids = [await send('later a', 'split'), await send('later b', 'split'), await send('later c', 'split')];
    for (const id of ids) await warm(id);
    expect((await t.api.patch(`/messages/${ids[1]}`, t.cast.owner, { topic: 'split 2', propagate_mode: 'change_later' })).status).toBe(200);
    expect((await byId(t.cast.member, ids[0]!))!.subject).toBe('split');
    expect((await byId(t.cast.member, ids[1]!))!.subject).toBe('split 2');
    expect((await byId(t.cast.member, ids[2]!))!.subject).toBe('split 2');
  });

  it('resolve and unresolve a topic: the next fetch shows the topic each time', async () => {
    const ids = [await send('resolve a', 'resolvable'), await send('resolve b', 'resolvable')];
    for (const id of ids) await warm(id);
    expect((await t.api.patch(`/messages/${ids[0]}`, t.cast.owner, { topic: '✔ resolvable', propagate_mode: 'change_all' })).status).toBe(
      200,
    );
    for (const id of ids) expect((await byId(t.cast.admin, id))!.subject).toBe('✔ resolvable');
    expect((await t.api.patch(`/messages/${ids[0]}`, t.cast.owner, { topic: 'resolvable', propagate_mode: 'change_all' })).status).toBe(
      200,
    );
    for (const id of ids) expect((await byId(t.cast.member, id))!.subject).toBe('resolvable');
  });

  it('delete a message: gone from pages and from GET /messages/{id}', async () => {
    const id = await send('doomed');
    await warm(id);
    expect((await t.api.delete(`/messages/${id}`, t.cast.owner)).status).toBe(200);
    expect(cache().peek(id)).toBeUndefined();
    expect(await byId(t.cast.admin, id)).toBeUndefined();
    expect(await single(t.cast.member, id)).toBeUndefined();
  });

  it('delete a topic: its messages leave the cache', async () => {
    const ids = [await send('topic doomed a', 'doomed topic'), await send('topic doomed b', 'doomed topic')];
    for (const id of ids) await warm(id);
    const res = await t.api.post(`/streams/${general.id}/delete_topic`, t.cast.owner, { topic_name: 'doomed topic' });
    expect(res.body).toMatchObject({ result: 'success', complete: true });
    for (const id of ids) {
      expect(cache().peek(id)).toBeUndefined();
      expect(await single(t.cast.member, id)).toBeUndefined();
    }
  });

  it('add and remove reactions (by name and by code): the next fetch shows them', async () => {
    const id = await send('react to me');
    await warm(id);
    expect((await t.api.post(`/messages/${id}/reactions`, t.cast.owner, { emoji_name: 'octopus' })).status).toBe(200);
    const add = { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji' };
    expect((await t.api.post(`/messages/${id}/reactions`, t.cast.admin, add)).status).toBe(200);
    expect((await byId(t.cast.member, id))!.reactions).toEqual([
      { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji', user_id: t.cast.owner.id },
      { emoji_name: 'thumbs_up', emoji_code: '1f44d', reaction_type: 'unicode_emoji', user_id: t.cast.admin.id },
    ]);
    await warm(id);
    const removed = await t.api.delete(`/messages/${id}/reactions`, t.cast.admin, { emoji_code: '1f44d', reaction_type: 'unicode_emoji' });
    expect(removed.status).toBe(200);
    expect((await single(t.cast.moderator, id))!.reactions).toEqual([
      { emoji_name: 'octopus', emoji_code: '1f419', reaction_type: 'unicode_emoji', user_id: t.cast.owner.id },
    ]);
    await warm(id);
    expect((await t.api.delete(`/messages/${id}/reactions`, t.cast.owner, { emoji_name: 'octopus' })).status).toBe(200);
    expect((await byId(t.cast.member, id))!.reactions).toEqual([]);
  });

  it('submessages (a poll vote): the next fetch lists it', async () => {
    const id = await send('/poll Tea or coffee?\nTea\nCoffee');
    await warm(id);
    expect((await byId(t.cast.owner, id))!.submessages).toHaveLength(1);
    const vote = { type: 'vote', key: 'canned,1', vote: 1 };
    const res = await t.api.post('/submessage', t.cast.owner, { message_id: id, msg_type: 'widget', content: JSON.stringify(vote) });
    expect(res.status).toBe(200);
    const list = (await byId(t.cast.admin, id))!.submessages;
    expect(list).toHaveLength(2);
    expect(JSON.parse(list[1].content)).toEqual(vote);
  });

  it("a sender's new name shows at once: the user cache drops them", async () => {
    const id = await send('who am i', 'names', t.cast.moderator);
    await warm(id);
    expect((await t.api.patch(`/users/${t.cast.moderator.id}`, t.cast.admin, { full_name: 'Renamed Moderator' })).status).toBe(200);
    expect((await byId(t.cast.member, id))!.sender_full_name).toBe('Renamed Moderator');
    expect((await single(t.cast.owner, id))!.sender_full_name).toBe('Renamed Moderator');
  });

  it("a direct message's participants show their new names at once", async () => {
    const res = await t.api.post('/messages', t.cast.admin, { type: 'direct', to: [t.cast.owner.id], content: 'names too' });
    const id = res.body.id as number;
    await byId(t.cast.owner, id);
    await t.api.patch(`/users/${t.cast.owner.id}`, t.cast.admin, { full_name: 'Renamed Owner' });
    const m = await byId(t.cast.admin, id);
    expect(m!.display_recipient.find((u: any) => u.id === t.cast.owner.id).full_name).toBe('Renamed Owner');
    expect(m!.sender_full_name).toBe(t.cast.admin.full_name);
  });

  it("a channel's new name shows at once: names come from the channel, not the cached message", async () => {
    const id = await send('rename the room', 'rooms', t.cast.member, 'other');
    await warm(id);
    // No API renames channels yet; the row changes as a rename would change it.
    await t.ctx.db('channels').where({ id: other.id }).update({ name: 'renamed', name_key: 'renamed' });
    try {
      expect((await byId(t.cast.owner, id))!.display_recipient).toBe('renamed');
      expect((await single(t.cast.admin, id))!.display_recipient).toBe('renamed');
    } finally {
      await t.ctx.db('channels').where({ id: other.id }).update({ name: 'other', name_key: 'other' });
    }
  });

  it("the organization's edit history policy applies per request to cached messages", async () => {
    const id = await send('policy draft', 'policy');
    await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'policy final' });
    await warm(id);
    const setPolicy = (policy: string) =>
      t.ctx.db('realms').where({ id: t.realmId }).update({ message_edit_history_visibility_policy: policy });
    try {
      await setPolicy('none');
      expect((await byId(t.cast.owner, id))!.edit_history).toBeUndefined();
      await setPolicy('moves');
      expect((await single(t.cast.owner, id))!.edit_history).toBeUndefined();
      await setPolicy('all');
      expect((await byId(t.cast.owner, id))!.edit_history).toEqual([expect.objectContaining({ prev_content: 'policy draft' })]);
    } finally {
      await setPolicy('all');
    }
  });

  it('search results highlight cached messages', async () => {
    const id = await send('a distinctive marmalade sentence', 'search');
    await warm(id);
    const res = await t.api.get('/messages', t.cast.owner, {
      anchor: 'newest',
      num_before: 5,
      num_after: 0,
      narrow: [{ operator: 'search', operand: 'marmalade' }],
    });
    expect(res.body.messages.map((m: any) => m.id)).toEqual([id]);
    expect(res.body.messages[0].match_content).toContain('marmalade</span>');
  });

  it('encodes a page as GET /messages/{id} renders each message, in every variant, cold and warm', async () => {
    // GET /messages splices each cached dict's encoded text (src/serializers/message-json.ts);
    // GET /messages/{id} builds the object. Every part of a message is exercised here.
    await t.api.post('/realm/filters', t.cast.admin, { pattern: 'JSON-(?P<id>[0-9]+)', url_template: 'https://issues.example/{id}' });
    const { member, owner, admin } = t.cast;
    const ids = [
      await send('**first** of the page', 'JSON-12 spliced'),
      await send('second, another sender, same topic', 'JSON-12 spliced', owner),
      await send('same topic name in another channel', 'JSON-12 spliced', member, 'other'),
      await send('/me splices', '', admin),
      await send('/poll Which?\nOne\nTwo', 'poll'),
      (await t.api.post('/messages', member, { type: 'direct', to: [admin.id, owner.id], content: 'a group DM' })).body.id as number,
      (await t.api.post('/messages', member, { type: 'direct', to: [member.id], content: 'a note to self' })).body.id as number,
    ];
    // A public channel the reader is not in: its history reads without a row of their own (historical).
    const notJoined = await createChannel(t, 'not joined', [owner]);
    const historicalId = await send('history the reader never received', 'elsewhere', owner, notJoined.id);
    await t.api.post(`/messages/${ids[0]}/reactions`, owner, { emoji_name: 'octopus' });
    await t.api.post(`/messages/${ids[0]}/reactions`, admin, { emoji_name: 'tada' });
    await t.api.patch(`/messages/${ids[1]}`, owner, { content: 'second, edited' });
    await t.api.patch(`/messages/${ids[4]}`, member, { topic: 'moved poll' });
    await t.api.post('/messages/flags', member, { messages: [ids[0], ids[5]], op: 'add', flag: 'starred' });
    for (const coldFirst of [true, false]) {
      if (coldFirst) t.ctx.caches.apply({ kind: 'all' });
      for (const apply_markdown of [true, false]) {
        for (const allow_empty_topic_name of [true, false]) {
          // GET /messages/{id} has no client_gravatar: it always sends avatar URLs.
          const q = { apply_markdown, allow_empty_topic_name };
          const page = await t.api.get('/messages', member, { message_ids: ids, client_gravatar: false, ...q });
          expect(page.status).toBe(200);
          expect(page.body.messages.map((m: any) => m.id)).toEqual(ids);
          for (const m of page.body.messages) expect(m).toEqual(await single(member, m.id, q));
          // The spliced text itself: no field named twice by two of a message's parts.
          const raw = await request(t.app)
            .get('/api/v1/messages')
            .query({ message_ids: JSON.stringify(ids), client_gravatar: false, ...q })
            .auth(member.email, member.api_key);
          expect(duplicateKeys(raw.text)).toEqual([]);
          const history = await t.api.get('/messages', member, {
            anchor: 'newest',
            num_before: 5,
            num_after: 0,
            narrow: [{ operator: 'channel', operand: notJoined.id }],
            client_gravatar: false,
            ...q,
          });
          expect(history.body.messages.map((m: any) => m.id)).toEqual([historicalId]);
          expect(history.body.messages[0]).toEqual(await single(member, historicalId, q));
        }
      }
    }
    const [first, , , me, poll] = (await t.api.get('/messages', member, { message_ids: ids })).body.messages;
    expect((await single(member, historicalId))!.flags).toEqual(['read', 'historical']);
    expect(first).toMatchObject({ topic_links: [{ text: 'JSON-12', url: 'https://issues.example/12' }], flags: ['starred'] });
    expect(first.reactions.map((r: any) => r.emoji_name).sort()).toEqual(['octopus', 'tada']);
    expect(me).toMatchObject({ is_me_message: true, subject: 'general chat' });
    expect(poll.submessages).toHaveLength(1);
    expect(poll.edit_history).toHaveLength(1);
  });

  it('a cold page (dicts dropped) is still right', async () => {
    const id = await send('cold one', 'cold');
    await t.api.post(`/messages/${id}/reactions`, t.cast.owner, { emoji_name: 'octopus' });
    await t.api.patch(`/messages/${id}`, t.cast.member, { content: 'cold two' });
    const warmed = await byId(t.cast.admin, id);
    t.ctx.caches.apply({ kind: 'all' });
    expect(cache().peek(id)).toBeUndefined();
    expect(await byId(t.cast.admin, id)).toEqual(warmed);
    expect(cache().peek(id)).toBeDefined();
  });
});

eachDatabase('message cache off (CACHE_MESSAGES=0)', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { config: { cacheMessages: 0 } });
    await createChannel(t, 'general', [t.cast.owner, t.cast.member]);
  });
  afterAll(() => t.close());

  it('serves messages from the database alone', async () => {
    expect(t.ctx.messageCache).toBeNull();
    const id = (await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'general', topic: 'x', content: 'no cache' })).body.id;
    await t.api.post(`/messages/${id}/reactions`, t.cast.owner, { emoji_name: 'octopus' });
    const res = await t.api.get('/messages', t.cast.owner, { anchor: 'newest', num_before: 5, num_after: 0 });
    expect(res.body.messages).toEqual([
      expect.objectContaining({
        id,
        content: '<p>no cache</p>',
        display_recipient: 'general',
        reactions: [expect.objectContaining({ emoji_name: 'octopus' })],
      }),
    ]);
    expect((await t.api.get(`/messages/${id}`, t.cast.member)).body.message.content).toBe('<p>no cache</p>');
  });
});
