import { eachDatabase } from './support/databases';
import { pending, register, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import type { TestServer } from './support/server';

/** What a queue was registered with decides which events it takes and how they look. */
eachDatabase('events: filters and formats per queue', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
  });
  afterAll(() => stopEventsServer(t));

  it('event_types keeps only those types, and unknown names are ignored', async () => {
    const c = await register(t, t.cast.member, { event_types: ['reaction', 'no_such_event'] });
    const id = await sendToChannel(t, t.cast.owner, 'general', 'types', 'hello');
    await t.api.post(`/messages/${id}/reactions`, t.cast.owner, { emoji_name: 'tada' });
    expect((await pending(t, c)).map((e) => e.type)).toEqual(['reaction']);
  });

  it('a narrow keeps matching messages, and takes public channels the user is not in', async () => {
    const c = await register(t, t.cast.member, {
      narrow: [
        ['channel', 'open'],
        ['topic', 'Plans'],
      ],
    });
    const listed = await register(t, t.cast.member, {
      narrow: [
        { operator: 'stream', operand: 'general' },
        { operator: 'is', operand: 'mentioned' },
      ],
    });
    const guest = await register(t, t.cast.guest, { narrow: [['channel', 'open']] });
    const hit = await sendToChannel(t, t.cast.owner, 'open', 'plans', 'in the narrow');
    await sendToChannel(t, t.cast.owner, 'open', 'other', 'other topic');
    await sendToChannel(t, t.cast.owner, 'general', 'plans', 'other channel');
    const mention = await sendToChannel(t, t.cast.owner, 'general', 'x', '@**Test Member** look');
    await sendToChannel(t, t.cast.owner, 'secret', 'plans', 'private');
    // A narrow filters messages only: being mentioned made the member follow topic "x"
    // (automatically_follow_topics_where_mentioned), which every queue of theirs hears.
    const messagesOf = async (q: typeof c) => (await pending(t, q)).filter((e) => e.type === 'message');
    const got = await messagesOf(c);
    expect(got.map((e) => e.message.id)).toEqual([hit]);
    expect(got[0]!.flags).toEqual([]);
    expect((await messagesOf(listed)).map((e) => e.message.id)).toEqual([mention]);
    expect(await pending(t, guest)).toEqual([]);
  });

  it('refuses narrows events cannot be filtered by, as Zulip', async () => {
    for (const [narrow, msg] of [
      [[['search', 'x']], 'Operator search not supported.'],
      [[['has', 'link']], 'Operator has not supported.'],
      [[['is', 'followed']], 'Operand followed not supported.'],
      // A queue keeps its narrow for its whole life: bounded tighter than a fetch's.
      [[['topic', 'x'.repeat(501)]], 'narrow operand is too long (limit: 500 characters)'],
      [Array.from({ length: 11 }, () => ['is', 'starred']), 'narrow has too many terms (limit: 10)'],
    ] as const) {
      const res = await t.api.post('/register', t.cast.member, { narrow });
      expect([res.status, res.body]).toEqual([400, { result: 'error', msg, code: 'BAD_REQUEST' }]);
    }
  });

  it('all_public_streams takes every public channel, never private ones; guests may not ask', async () => {
    const c = await register(t, t.cast.admin, { all_public_streams: true, event_types: ['message'] });
    const open = await sendToChannel(t, t.cast.owner, 'open', 'all', 'public');
    await sendToChannel(t, t.cast.owner, 'secret', 'all', 'private');
    expect((await pending(t, c)).map((e) => e.message.id)).toEqual([open]);
    const res = await t.api.post('/register', t.cast.guest, { all_public_streams: true });
    expect([res.status, res.body]).toEqual([400, { result: 'error', msg: 'User not authorized for this query', code: 'BAD_REQUEST' }]);
  });

  it('apply_markdown chooses HTML or the Markdown source', async () => {
    const html = await register(t, t.cast.member, { apply_markdown: true });
    const raw = await register(t, t.cast.member);
    await sendToChannel(t, t.cast.owner, 'general', 'md', 'some **bold**');
    expect((await pending(t, html))[0]!.message).toMatchObject({ content: '<p>some <strong>bold</strong></p>', content_type: 'text/html' });
    expect((await pending(t, raw))[0]!.message).toMatchObject({ content: 'some **bold**', content_type: 'text/x-markdown' });
  });

  it('local_message_id goes to the sending queue only', async () => {
    const sending = await register(t, t.cast.member);
    const otherTab = await register(t, t.cast.member);
    const id = await sendToChannel(t, t.cast.member, 'general', 'echo', 'local echo', { queue_id: sending.queueId, local_id: '103.01' });
    // Starting the topic made the member follow it: the user_topic events come first.
    const mine = (await pending(t, sending)).find((e) => e.type === 'message');
    const theirs = (await pending(t, otherTab)).find((e) => e.type === 'message');
    expect(theirs).toMatchObject({ type: 'message', message: { id } });
    expect(mine).toMatchObject({ type: 'message', local_message_id: '103.01', message: { id } });
    expect(theirs).not.toHaveProperty('local_message_id');
  });

  it('client_gravatar leaves computable avatars to the client', async () => {
    const computes = await register(t, t.cast.member, { client_gravatar: true });
    const asks = await register(t, t.cast.member, { client_gravatar: false });
    await sendToChannel(t, t.cast.owner, 'general', 'avatars', 'look at me');
    expect((await pending(t, computes))[0]!.message.avatar_url).toBeNull();
    expect((await pending(t, asks))[0]!.message.avatar_url).toMatch(/^https:\/\/secure\.gravatar\.com\/avatar\//);
  });

  it('the empty topic shows as "general chat" unless the client handles ""', async () => {
    const modern = await register(t, t.cast.member, { client_capabilities: { empty_topic_name: true } });
    const legacy = await register(t, t.cast.member);
    await sendToChannel(t, t.cast.owner, 'general', '', 'no topic');
    expect((await pending(t, modern))[0]!.message.subject).toBe('');
    expect((await pending(t, legacy))[0]!.message.subject).toBe('general chat');
  });
});
