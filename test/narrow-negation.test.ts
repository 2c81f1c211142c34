import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';

/**
 * Every narrow operator and its negation split the viewer's messages in two:
 * a message matches exactly one of `term` and `-term`.
 */
eachDatabase('narrow negation', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, member, moderator } = t.cast;
    await createChannel(t, 'alpha', [owner, admin, member]);
    await createChannel(t, 'beta', [owner, member]);
    const send = (who: any, f: Record<string, unknown>) => t.api.post('/messages', who, f);
    await send(owner, { type: 'channel', to: 'alpha', topic: 'one', content: 'apples and https://example.com/x.png' });
    await send(admin, { type: 'channel', to: 'alpha', topic: '✔ done', content: 'pears @**Test Member**' });
    const star = await send(owner, { type: 'channel', to: 'beta', topic: 'two', content: 'cherries' });
    await send(member, { type: 'direct', to: [owner.id], content: 'a direct apple' });
    await send(owner, { type: 'direct', to: [member.id, moderator.id], content: 'group plums' });
    await t.api.post('/messages/flags', member, { messages: [star.body.id], op: 'add', flag: 'starred' });
    await t.api.post(`/messages/${star.body.id}/reactions`, member, { emoji_name: 'tada' });
  });
  afterAll(() => t.close());

  const ids = async (narrow: unknown[]) => {
    const res = await t.api.get('/messages', t.cast.member, { anchor: 'newest', num_before: 1000, num_after: 0, narrow });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.messages.map((m: any) => m.id) as number[];
  };

  it.each([
    ['channel', 'alpha'],
    ['topic', 'one'],
    ['sender', 'owner@example.com'],
    ['dm', 'owner@example.com'],
    ['dm-including', 'moderator@example.com'],
    ['is', 'dm'],
    ['is', 'starred'],
    ['is', 'unread'],
    ['is', 'mentioned'],
    ['is', 'resolved'],
    ['has', 'link'],
    ['has', 'image'],
    ['has', 'reaction'],
    ['search', 'apple'],
  ])('%s:%s and its negation partition the messages', async (operator, operand) => {
    const all = await ids([]);
    const yes = await ids([{ operator, operand }]);
    const no = await ids([{ operator, operand, negated: true }]);
    expect(yes.length).toBeGreaterThan(0);
    expect(yes.filter((id) => no.includes(id))).toEqual([]);
    expect([...yes, ...no].sort((a, b) => a - b)).toEqual(all);
  });

  it('id and its negation partition the messages', async () => {
    const all = await ids([]);
    const yes = await ids([{ operator: 'id', operand: all[0] }]);
    const no = await ids([{ operator: 'id', operand: all[0], negated: true }]);
    expect(yes).toEqual([all[0]]);
    expect(no).toEqual(all.slice(1));
  });
});
