import { flagMask } from '../src/domain/flags';
import { containsAlertWord } from '../src/domain/alert-words';
import { eachDatabase } from './support/databases';
import { countQueries, createChannel, startTestServer, type TestServer } from './support/server';
import { captureEvents } from './users-fixtures';

eachDatabase('alert words', (dialect) => {
  let t: TestServer;
  let channel: { id: number; recipient_id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    channel = await createChannel(t, 'alerts', [t.cast.owner, t.cast.member, t.cast.moderator]);
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const send = async (content: string, user = t.cast.owner) => {
    const res = await t.api.post('/messages', user, { type: 'channel', to: channel.id, topic: 'alerts', content });
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const flagsOf = async (messageId: number, userId: number) =>
    Number((await t.ctx.db('user_messages').where({ message_id: messageId, user_id: userId }).first('flags'))!.flags);
  const alerted = async (messageId: number, userId: number) => ((await flagsOf(messageId, userId)) & flagMask('has_alert_word')) !== 0;

  it("adds words once ignoring case, trimmed, and tells the user's clients the whole list", async () => {
    const { result: res, deliveries } = await captureEvents(t, () =>
      t.api.post('/users/me/alert_words', t.cast.member, { alert_words: ['Release', ' on call ', '', 'release'] }),
    );
    expect(res.body).toEqual({ result: 'success', msg: '', alert_words: ['Release', 'on call'] });
    expect(deliveries).toEqual([{ event: { type: 'alert_words', alert_words: ['Release', 'on call'] }, userIds: [t.cast.member.id] }]);
    const again = await t.api.post('/users/me/alert_words', t.cast.member, { alert_words: ['RELEASE', 'deploy'] });
    expect(again.body.alert_words).toEqual(['Release', 'on call', 'deploy']);
    expect((await t.api.get('/users/me/alert_words', t.cast.member)).body.alert_words).toEqual(['Release', 'on call', 'deploy']);
  });

  it('sends them in POST /register', async () => {
    const reg = await t.api.post('/register', t.cast.member, { fetch_event_types: ['alert_words'] });
    expect(reg.body.alert_words).toEqual(['Release', 'on call', 'deploy']);
  });

  it('flags messages containing a word on its boundaries, for the receivers who have it, never for the sender', async () => {
    const hit = await send('The RELEASE is out.');
    expect(await alerted(hit, t.cast.member.id)).toBe(true);
    expect(await alerted(hit, t.cast.moderator.id)).toBe(false);
    const inside = await send('prereleases happen');
    expect(await alerted(inside, t.cast.member.id)).toBe(false);
    const phrase = await send('who is (on call)?');
    expect(await alerted(phrase, t.cast.member.id)).toBe(true);
    const own = await send('my release notes', t.cast.member);
    expect(await alerted(own, t.cast.member.id)).toBe(false);
    const narrowed = await t.api.get('/messages', t.cast.member, {
      anchor: 'newest',
      num_before: 10,
      num_after: 0,
      narrow: [{ operator: 'is', operand: 'alerted' }],
    });
    expect(narrowed.body.messages.map((m: { id: number }) => m.id)).toEqual([hit, phrase]);
  });

  it("matches on Zulip's boundaries", () => {
    expect(containsAlertWord('release', 'release')).toBe(true);
    expect(containsAlertWord('(release),', 'release')).toBe(true);
    // Zulip's list of characters allowed after a word has '",' (two characters), which never
    // matches one character: a closing double quote does not end a word.
    expect(containsAlertWord('"release"', 'release')).toBe(false);
    expect(containsAlertWord('`release`', 'release')).toBe(true);
    expect(containsAlertWord('release-notes', 'release')).toBe(false);
    expect(containsAlertWord('#release', 'release')).toBe(false);
    expect(containsAlertWord('release2', 'release')).toBe(false);
  });

  it('removes words ignoring case, ignoring words the user does not have', async () => {
    const res = await t.api.delete('/users/me/alert_words', t.cast.member, { alert_words: ['ON CALL', 'never added'] });
    expect(res.body.alert_words).toEqual(['Release', 'deploy']);
    const phrase = await send('who is on call');
    expect(await alerted(phrase, t.cast.member.id)).toBe(false);
  });

  it('refuses a word over 100 characters, adding nothing', async () => {
    const res = await t.api.post('/users/me/alert_words', t.cast.moderator, { alert_words: ['ok', 'x'.repeat(101)] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: 'error', msg: 'alert_words[1] is too long (limit: 100 characters)', code: 'BAD_REQUEST' });
    expect((await t.api.get('/users/me/alert_words', t.cast.moderator)).body.alert_words).toEqual([]);
  });

  it('refuses an addition that would take the user past 1,000 words, adding nothing; words already held do not count twice', async () => {
    const words = (from: number, n: number) => Array.from({ length: n }, (_, i) => `word${from + i}`);
    expect((await t.api.post('/users/me/alert_words', t.cast.guest, { alert_words: words(0, 999) })).status).toBe(200);
    const refused = await t.api.post('/users/me/alert_words', t.cast.guest, { alert_words: words(999, 2) });
    expect([refused.status, refused.body]).toEqual([
      400,
      { result: 'error', msg: 'You may have at most 1000 alert words; remove some first.', code: 'BAD_REQUEST' },
    ]);
    expect((await t.api.get('/users/me/alert_words', t.cast.guest)).body.alert_words).toHaveLength(999);
    // One new word and one held (in another case) make 1,000.
    expect((await t.api.post('/users/me/alert_words', t.cast.guest, { alert_words: ['WORD0', 'word999'] })).status).toBe(200);
    await t.api.delete('/users/me/alert_words', t.cast.guest, { alert_words: words(0, 1000) });
  });

  it('costs sending nothing while the organization has no alert words', async () => {
    // Each measured with warm caches: changing alert words drops the cached organization row (its count).
    await send('warming the caches');
    const before = await countQueries(t, () => send('a message while someone has alert words'));
    await t.api.delete('/users/me/alert_words', t.cast.member, { alert_words: ['Release', 'deploy'] });
    expect(Number((await t.ctx.db('realms').where({ id: t.realmId }).first('alert_word_count'))!.alert_word_count)).toBe(0);
    await send('warming the caches again');
    const after = await countQueries(t, () => send('a message while nobody has alert words'));
    expect(after.queries).toBe(before.queries - 1);
  });
});
