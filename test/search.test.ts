import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';
import type { UserRow } from '../src/queries/rows';
import { foldForSearch } from '../src/domain/search';

/**
 * Search over message_search_terms (migration 021): what the index must
 * follow at once (edits, renames, moves, deletions) and what access hides.
 * Each case runs three times, for the three ways a search word is read: as
 * is (it begins one indexed word: a join), and with rows of messages that do
 * not exist for longer words it begins (several indexed words: a semi-join;
 * more than can be listed: a range of words).
 */
eachDatabase('search', (dialect) => {
  let t: TestServer;
  let shared: { id: number; recipient_id: number };
  let hidden: { id: number; recipient_id: number };

  const send = async (who: UserRow, to: string, topic: string, content: string): Promise<number> => {
    const res = await t.api.post('/messages', who, { type: 'channel', to, topic, content });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.id;
  };
  const search = async (who: UserRow, operand: string, extra: object[] = []): Promise<number[]> => {
    const res = await t.api.get('/messages', who, {
      anchor: 'newest',
      num_before: 100,
      num_after: 0,
      narrow: [...extra, { operator: 'search', operand }],
    });
    expect(res.status).toBe(200);
    return res.body.messages.map((m: { id: number }) => m.id);
  };
  // Notices of a move would themselves contain the topic's words.
  const noNotices = { send_notification_to_old_thread: false, send_notification_to_new_thread: false };
  /** Rows of `extra` longer words beginning with `word`, for messages that do not exist. */
  const addLongerWords = async (word: string, extra: number) => {
    const rows = Array.from({ length: extra }, (_, i) => ({ term: `${foldForSearch(word)}x${i}`, message_id: 2_000_000_000 + i }));
    if (rows.length) await t.ctx.db('message_search_terms').insert(rows);
  };

  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, member } = t.cast;
    shared = await createChannel(t, 'shared', [owner, admin, member]);
    hidden = await createChannel(t, 'hidden', [owner, admin], { inviteOnly: true, historyPublicToSubscribers: true });
  });
  afterAll(() => t.close());

  describe.each([
    ['one indexed word', 'a', 0],
    ['several indexed words', 'b', 3],
    ['more indexed words than are listed', 'c', 60],
  ])('%s', (_label, suffix, extra) => {
    const w = (word: string) => `${word}${suffix}`;
    const prepare = async (...words: string[]) => {
      for (const word of words) await addLongerWords(word, extra);
    };

    it('an edit: the new word finds the message, the old word no longer does', async () => {
      await prepare(w('alphaold'), w('alphanew'));
      const id = await send(t.cast.member, 'shared', 'edits', `before ${w('alphaold')}`);
      expect(await search(t.cast.member, w('alphaold'))).toEqual([id]);
      const res = await t.api.patch(`/messages/${id}`, t.cast.member, { content: `after ${w('alphanew')}` });
      expect(res.status).toBe(200);
      expect(await search(t.cast.member, w('alphanew'))).toEqual([id]);
      expect(await search(t.cast.member, w('alphaold'))).toEqual([]);
      // A word in both the old and the new content stays found.
      expect(await search(t.cast.member, 'after')).toContain(id);
      expect(await search(t.cast.member, 'before')).not.toContain(id);
    });

    it('a topic rename: the new topic word finds every moved message, the old one none', async () => {
      await prepare(w('betaold'), w('betanew'));
      const a = await send(t.cast.member, 'shared', `${w('betaold')} talk`, 'one');
      const b = await send(t.cast.member, 'shared', `${w('betaold')} talk`, `two mentions ${w('betaold')} in the text`);
      expect(await search(t.cast.member, w('betaold'))).toEqual([a, b]);
      const res = await t.api.patch(`/messages/${a}`, t.cast.admin, {
        topic: `${w('betanew')} talk`,
        propagate_mode: 'change_all',
        ...noNotices,
      });
      expect(res.status).toBe(200);
      expect(await search(t.cast.member, w('betanew'))).toEqual([a, b]);
      // b still says the old word in its content.
      expect(await search(t.cast.member, w('betaold'))).toEqual([b]);
    });

    it('a move to a private channel: found by its subscribers, no longer by a user without access', async () => {
      await prepare(w('gammaword'));
      const id = await send(t.cast.admin, 'shared', 'moving', `secret ${w('gammaword')} plans`);
      expect(await search(t.cast.member, w('gammaword'))).toEqual([id]);
      const res = await t.api.patch(`/messages/${id}`, t.cast.admin, { stream_id: hidden.id, propagate_mode: 'change_one', ...noNotices });
      expect(res.status).toBe(200);
      expect(await search(t.cast.member, w('gammaword'))).toEqual([]);
      expect(await search(t.cast.member, w('gammaword'), [{ operator: 'channels', operand: 'public' }])).toEqual([]);
      expect(await search(t.cast.owner, w('gammaword'))).toEqual([id]);
      expect(await search(t.cast.owner, w('gammaword'), [{ operator: 'channel', operand: hidden.id }])).toEqual([id]);
    });

    it('a private channel the viewer cannot read: its words find nothing, even through channels:public', async () => {
      await prepare(w('deltaword'));
      const id = await send(t.cast.owner, 'hidden', 'inside', `only ${w('deltaword')} here`);
      expect(await search(t.cast.admin, w('deltaword'))).toEqual([id]);
      expect(await search(t.cast.member, w('deltaword'))).toEqual([]);
      expect(await search(t.cast.member, w('deltaword'), [{ operator: 'channels', operand: 'public' }])).toEqual([]);
    });

    it('a deletion: the message is gone from search and from the index', async () => {
      await prepare(w('epsilonword'));
      const id = await send(t.cast.member, 'shared', 'deleting', `doomed ${w('epsilonword')}`);
      expect(await search(t.cast.member, w('epsilonword'))).toEqual([id]);
      const res = await t.api.delete(`/messages/${id}`, t.cast.admin);
      expect(res.status).toBe(200);
      expect(await search(t.cast.member, w('epsilonword'))).toEqual([]);
      expect(await t.ctx.db('message_search_terms').where({ message_id: id }).count({ n: '*' })).toEqual([{ n: 0 }]);
    });

    it('prefixes, case, diacritics and underscores; every word must match', async () => {
      await prepare(w('zetadeployments'), w('café'), w('snake_case'));
      const id = await send(t.cast.member, 'shared', w('words'), `The ${w('ZetaDeployments')} ${w('Café')} ${w('snake_case')}`);
      const other = await send(t.cast.member, 'shared', w('words'), `only ${w('zetadeployments')}`);
      expect(await search(t.cast.member, 'zetadeploy')).toEqual(expect.arrayContaining([id, other]));
      expect(await search(t.cast.member, w('zetadeployments'))).toEqual([id, other]);
      expect(await search(t.cast.member, w('cafe'))).toEqual([id]);
      expect(await search(t.cast.member, w('CAFÉ'))).toEqual([id]);
      expect(await search(t.cast.member, w('snake_case'))).toEqual([id]);
      expect(await search(t.cast.member, `${w('zetadeployments')} ${w('cafe')}`)).toEqual([id]);
      expect(await search(t.cast.member, `${w('zetadeployments')} nosuchwordhere`)).toEqual([]);
      // A negated search keeps what does not match.
      const negated = await t.api.get('/messages', t.cast.member, {
        anchor: 'newest',
        num_before: 100,
        num_after: 0,
        narrow: [
          { operator: 'topic', operand: w('words') },
          { operator: 'channel', operand: shared.id },
          { operator: 'search', operand: w('cafe'), negated: true },
        ],
      });
      expect(negated.body.messages.map((m: { id: number }) => m.id)).toEqual([other]);
    });
  });
});
