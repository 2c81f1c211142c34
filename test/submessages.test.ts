import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, type TestServer } from './support/server';
import { captureEvents } from './users-fixtures';

eachDatabase('widgets: submessages', (dialect) => {
  let t: TestServer;
  let channel: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    channel = await createChannel(t, 'widgets', [t.cast.owner, t.cast.member, t.cast.moderator]);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const send = async (content: string, user = t.cast.member) => {
    const res = await t.api.post('/messages', user, { type: 'channel', to: channel.id, topic: 'widgets', content });
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const submessagesOf = async (id: number, user = t.cast.owner) => {
    const res = await t.api.get(`/messages/${id}`, user);
    expect(res.status).toBe(200);
    return res.body.message.submessages as Array<Record<string, any>>;
  };
  const attach = (user: typeof t.cast.member, messageId: number, content: unknown) =>
    t.api.post('/submessage', user, {
      message_id: messageId,
      msg_type: 'widget',
      content: typeof content === 'string' ? content : JSON.stringify(content),
    });
  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });

  it('makes a /poll message a poll: its definition is the first submessage, in the message event too', async () => {
    const { result: id, deliveries } = await captureEvents(t, () => send('/poll Where for lunch?\nPizza\n- Sushi\n\n* Salad'));
    const [widget] = await submessagesOf(id);
    expect(widget).toEqual({
      msg_type: 'widget',
      message_id: id,
      sender_id: t.cast.member.id,
      id: expect.any(Number),
      content: expect.any(String),
    });
    expect(JSON.parse(widget!.content)).toEqual({
      widget_type: 'poll',
      extra_data: { question: 'Where for lunch?', options: ['Pizza', 'Sushi', 'Salad'] },
    });
    const event = deliveries.find((d) => d.event.type === 'message')!.event as Record<string, any>;
    expect(event.message.submessages).toEqual([widget]);
  });

  it('makes a /todo message a to-do list, each line a task with an optional description after ": "', async () => {
    const id = await send('/todo Release\nTag it: on main\n- Announce');
    const [widget] = await submessagesOf(id);
    expect(JSON.parse(widget!.content)).toEqual({
      widget_type: 'todo',
      extra_data: {
        task_list_title: 'Release',
        tasks: [
          { task: 'Tag it', desc: 'on main' },
          { task: 'Announce', desc: '' },
        ],
      },
    });
  });

  it('leaves other messages without submessages', async () => {
    expect(await submessagesOf(await send('/unknown command'))).toEqual([]);
    expect(await submessagesOf(await send('a plain /poll mention'))).toEqual([]);
  });

  it('takes a vote from another reader, tells everyone who received the message, and lists it after the definition', async () => {
    const id = await send('/poll Tea or coffee?\nTea\nCoffee');
    const vote = { type: 'vote', key: 'canned,1', vote: 1 };
    const { result: res, deliveries } = await captureEvents(t, () => attach(t.cast.moderator, id, vote));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: 'success', msg: '' });
    const list = await submessagesOf(id);
    expect(list).toHaveLength(2);
    expect(list[1]).toMatchObject({ sender_id: t.cast.moderator.id, msg_type: 'widget', content: JSON.stringify(vote) });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.event).toEqual({
      type: 'submessage',
      msg_type: 'widget',
      message_id: id,
      submessage_id: list[1]!.id,
      sender_id: t.cast.moderator.id,
      content: JSON.stringify(vote),
    });
    expect([...deliveries[0]!.userIds].sort()).toEqual([t.cast.owner.id, t.cast.member.id, t.cast.moderator.id].sort());
  });

  it('takes at most 10,000 submessages on a message, and content of at most 10,000 characters', async () => {
    const id = await send('/poll Which one?\nA\nB');
    // 9,998 votes beside the definition, written straight to the table: 10,000 requests would take minutes.
    const rows = Array.from({ length: 9998 }, () => ({
      message_id: id,
      sender_id: t.cast.owner.id,
      msg_type: 'widget',
      content: '{"type":"vote","key":"canned,1","vote":1}',
    }));
    await t.ctx.db.batchInsert('submessages', rows, 500);
    const vote = { type: 'vote', key: 'canned,1', vote: -1 };
    expect((await attach(t.cast.moderator, id, vote)).status).toBe(200);
    expect(await attach(t.cast.moderator, id, vote)).toMatchObject({
      status: 400,
      body: refusal('A message may have at most 10000 submessages.'),
    });
    const long = await attach(t.cast.member, await send('/poll Long?\nA'), 'x'.repeat(10_001));
    expect([long.status, long.body.code]).toEqual([400, 'BAD_REQUEST']);
  });

  it('lets only the sender attach the first submessage', async () => {
    const id = await send('just text');
    expect((await attach(t.cast.moderator, id, { type: 'vote', key: 'x', vote: 1 })).body).toEqual(
      refusal('You cannot attach a submessage to this message.'),
    );
    expect((await attach(t.cast.member, id, { widget_type: 'zform', extra_data: {} })).status).toBe(200);
    expect((await attach(t.cast.moderator, id, { anything: true })).status).toBe(200);
  });

  it.each([
    ['text that is not JSON', 'not json', 'Invalid json for submessage'],
    ['an unknown poll update', { type: 'bogus' }, 'Unknown type for poll data: bogus'],
    ['a vote of 2', { type: 'vote', key: 'canned,1', vote: 2 }, 'Invalid poll data["vote"]'],
    ['a vote without a key', { type: 'vote', vote: 1 }, 'key key is missing from poll data'],
    ['an extra field', { type: 'vote', key: 'k', vote: 1, extra: 1 }, 'Unexpected arguments: extra'],
    ['an option index too large', { type: 'new_option', option: 'x', idx: 1001 }, 'poll data["idx"] is too large'],
    ['a question from someone else', { type: 'question', question: 'Mine now' }, "You can't edit a question unless you are the author."],
    ['a list, not an object', [1, 2], 'poll data is not a dict'],
  ])('refuses %s on a poll, storing nothing', async (_name, content, msg) => {
    const id = await send('/poll Q\nA\nB');
    const res = await attach(t.cast.moderator, id, content);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(msg));
    expect(await submessagesOf(id)).toHaveLength(1);
  });

  it("keeps a to-do list's title to its author, and checks tasks", async () => {
    const id = await send('/todo Chores');
    expect((await attach(t.cast.moderator, id, { type: 'new_task_list_title', title: 'Mine' })).body).toEqual(
      refusal("You can't edit the task list title unless you are the author."),
    );
    expect((await attach(t.cast.member, id, { type: 'new_task_list_title', title: 'Ours' })).status).toBe(200);
    expect((await attach(t.cast.moderator, id, { type: 'new_task', key: 0, task: 'Dishes', desc: '', completed: false })).status).toBe(200);
    expect((await attach(t.cast.moderator, id, { type: 'strike', key: '0,canned' })).status).toBe(200);
    expect((await attach(t.cast.moderator, id, { type: 'new_task', key: 0, task: 'Dishes', desc: '', completed: 'no' })).body).toEqual(
      refusal('todo data["completed"] is not a boolean'),
    );
    expect(await submessagesOf(id)).toHaveLength(4);
  });

  it('answers as for a missing message when the caller cannot read it', async () => {
    const hidden = await createChannel(t, 'hidden widgets', [t.cast.owner], { inviteOnly: true });
    const res = await t.api.post('/messages', t.cast.owner, { type: 'channel', to: hidden.id, topic: 'x', content: '/poll Secret?' });
    const forbidden = await attach(t.cast.member, res.body.id, { type: 'vote', key: 'k', vote: 1 });
    const missing = await attach(t.cast.member, 999999, { type: 'vote', key: 'k', vote: 1 });
    expect(forbidden.body).toEqual(refusal('Invalid message(s)'));
    expect(missing.body).toEqual(forbidden.body);
  });

  it('archives a deleted message with its submessages', async () => {
    const id = await send('/poll Gone?\nYes');
    await attach(t.cast.moderator, id, { type: 'vote', key: 'canned,0', vote: 1 });
    expect((await t.api.delete(`/messages/${id}`, t.cast.owner)).status).toBe(200);
    expect(await t.ctx.db('submessages').where({ message_id: id })).toEqual([]);
    expect(await t.ctx.db('archived_submessages').where({ message_id: id })).toHaveLength(2);
  });
});
