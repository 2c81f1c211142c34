import { createUserInTx } from '../src/actions/users';
import { inTransaction } from '../src/db/transaction';
import { BOT_STORAGE_SIZE_LIMIT } from '../src/domain/bot-storage';
import { Role } from '../src/domain/roles';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { startTestServer, type TestServer } from './support/server';

eachDatabase('bot storage', (dialect) => {
  let t: TestServer;
  let bot: UserRow;
  let otherBot: UserRow;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    bot = t.cast.bot;
    otherBot = await inTransaction(t.ctx.db, (tx) =>
      createUserInTx(tx, null, {
        realmId: t.realmId,
        email: 'other-bot@example.com',
        fullName: 'Other Bot',
        role: Role.MEMBER,
        isBot: true,
        botType: 1,
      }),
    );
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
  });

  const get = (user: UserRow, keys?: unknown) => t.api.get('/bot_storage', user, keys === undefined ? {} : { keys });
  const put = (user: UserRow, storage: unknown) => t.api.call('put', '/bot_storage', user, { storage });
  const remove = (user: UserRow, keys?: unknown) => t.api.delete('/bot_storage', user, keys === undefined ? {} : { keys });
  const error = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  /** The bot's storage as a plain object, read through the API. */
  const all = async (user = bot) => {
    const res = await get(user);
    expect(res.status).toBe(200);
    return res.body.storage as Record<string, string>;
  };
  const storedSize = async (user = bot) =>
    Number((await t.ctx.db('bot_storage').where({ user_id: user.id }).sum({ n: 'size' }).first())?.n ?? 0);

  it('refuses human callers, whatever their role (feature level 494)', async () => {
    for (const user of [t.cast.member, t.cast.owner]) {
      expect((await get(user)).body).toEqual(error('Must be a bot user'));
      expect((await put(user, { a: 'b' })).body).toEqual(error('Must be a bot user'));
      expect((await remove(user)).body).toEqual(error('Must be a bot user'));
    }
    expect(await t.ctx.db('bot_storage').count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('sets entries, reads all of them or the keys named in their order, and updates a value', async () => {
    expect(await all()).toEqual({});
    const set = await put(bot, { greeting: 'hello', count: '3', Greeting: 'exact keys' });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ result: 'success', msg: '' });
    expect(await all()).toEqual({ greeting: 'hello', count: '3', Greeting: 'exact keys' });

    const some = await get(bot, ['count', 'greeting']);
    expect(some.body).toEqual({ result: 'success', msg: '', storage: { count: '3', greeting: 'hello' } });
    expect(Object.keys(some.body.storage)).toEqual(['count', 'greeting']);
    // An empty list reads everything, as Zulip's `keys or all keys`.
    expect(Object.keys((await get(bot, [])).body.storage).sort()).toEqual(['Greeting', 'count', 'greeting']);

    expect((await put(bot, { count: '4', empty: '' })).status).toBe(200);
    expect((await get(bot, ['count', 'empty'])).body.storage).toEqual({ count: '4', empty: '' });
    // Sizes in characters: 'count' + '4', 'empty' + ''.
    expect(
      Number((await t.ctx.db('bot_storage').where({ user_id: bot.id }).whereIn('key', ['count', 'empty']).sum({ n: 'size' }).first())!.n),
    ).toBe(11);
  });

  it('stores a key named __proto__ as a key like any other', async () => {
    const res = await put(bot, '{"__proto__":"p"}');
    expect(res.status).toBe(200);
    const read = await get(bot, ['__proto__']);
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body.storage)).toBe('{"__proto__":"p"}');
    expect((await remove(bot, ['__proto__'])).status).toBe(200);
  });

  it('refuses a key it does not store, for the whole request', async () => {
    expect((await get(bot, ['greeting', 'missing'])).body).toEqual(error('Key does not exist.'));
    expect((await get(bot, ['GREETING'])).body).toEqual(error('Key does not exist.'));
    const before = await all();
    expect((await remove(bot, ['greeting', 'missing'])).body).toEqual(error('Key does not exist.'));
    // As Zulip compares the entries found with the keys named, a key named twice is refused.
    expect((await remove(bot, ['greeting', 'greeting'])).body).toEqual(error('Key does not exist.'));
    expect(await all()).toEqual(before);
  });

  it('removes the keys named, then everything', async () => {
    expect((await remove(bot, ['greeting', 'Greeting'])).status).toBe(200);
    expect(Object.keys(await all()).sort()).toEqual(['count', 'empty']);
    const cleared = await remove(bot);
    expect(cleared.body).toEqual({ result: 'success', msg: '' });
    expect(await all()).toEqual({});
    // Nothing stored and nothing named: nothing to refuse.
    expect((await remove(bot, [])).status).toBe(200);
  });

  it('refuses values that are not strings and parameters that are not JSON, in Zulip words', async () => {
    expect((await put(bot, { a: 1 })).body).toEqual(error('storage["a"] is not a string'));
    expect((await put(bot, { a: 'ok', b: null })).body).toEqual(error('storage["b"] is not a string'));
    expect((await put(bot, ['a'])).body).toEqual(error('storage is not a dict'));
    expect((await put(bot, '{"a": ')).body).toEqual(error('storage is not valid JSON'));
    expect((await t.api.call('put', '/bot_storage', bot, {})).body).toEqual({
      result: 'error',
      msg: "Missing 'storage' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'storage',
    });
    expect((await get(bot, 'not json')).body).toEqual(error('keys is not valid JSON'));
    expect((await get(bot, { a: 1 })).body).toEqual(error('keys is not a list'));
    expect((await get(bot, [1])).body).toEqual(error('keys[0] is not a string'));
    expect((await remove(bot, 'greeting')).body).toEqual(error('keys is not valid JSON'));
    expect(await all()).toEqual({});
  });

  it('keeps each bot its own storage', async () => {
    expect((await put(bot, { shared: 'mine', only: 'one' })).status).toBe(200);
    expect((await put(otherBot, { shared: 'theirs' })).status).toBe(200);
    expect(await all(bot)).toEqual({ shared: 'mine', only: 'one' });
    expect(await all(otherBot)).toEqual({ shared: 'theirs' });
    expect((await get(otherBot, ['only'])).body).toEqual(error('Key does not exist.'));
    expect((await remove(otherBot, ['only'])).body).toEqual(error('Key does not exist.'));
    expect((await remove(otherBot)).status).toBe(200);
    expect(await all(otherBot)).toEqual({});
    expect(await all(bot)).toEqual({ shared: 'mine', only: 'one' });
    expect((await remove(bot)).status).toBe(200);
  });

  describe('the size limit', () => {
    afterAll(async () => {
      await remove(bot);
    });

    it('allows storage exactly at the limit and refuses one character more, storing nothing', async () => {
      // Two 4,000,001-character entries, then one that brings the total to the limit exactly.
      const big = 'v'.repeat(4_000_000);
      expect((await put(bot, { a: big })).status).toBe(200);
      expect((await put(bot, { b: big })).status).toBe(200);
      const rest = BOT_STORAGE_SIZE_LIMIT - 2 * 4_000_001 - 1;
      expect((await put(bot, { c: 'w'.repeat(rest) })).status).toBe(200);
      expect(await storedSize()).toBe(BOT_STORAGE_SIZE_LIMIT);

      const over = await put(bot, { d: '' });
      expect(over.body).toEqual(error('Request exceeds storage limit by 1 characters. The limit is 10000000 characters.'));
      // Characters, not UTF-16 units or bytes: an emoji counts one.
      const emoji = await put(bot, { '\u{1F600}': '\u{1F600}\u{1F600}', e: 'x' });
      expect(emoji.body).toEqual(error('Request exceeds storage limit by 5 characters. The limit is 10000000 characters.'));
      expect(await storedSize()).toBe(BOT_STORAGE_SIZE_LIMIT);
      expect((await get(bot, ['d'])).body).toEqual(error('Key does not exist.'));
      expect((await get(bot, ['e'])).body).toEqual(error('Key does not exist.'));
    });

    it('counts a replaced entry by its new size only', async () => {
      // c one character shorter makes room for d (key 'd', empty value): the limit exactly again.
      const rest = BOT_STORAGE_SIZE_LIMIT - 2 * 4_000_001 - 2;
      expect((await put(bot, { c: 'w'.repeat(rest), d: '' })).status).toBe(200);
      expect(await storedSize()).toBe(BOT_STORAGE_SIZE_LIMIT);
      const c = await get(bot, ['c', 'd']);
      expect(c.body.storage.c).toHaveLength(rest);
      expect(c.body.storage.d).toBe('');
      // Replacing with a longer value: the excess is the growth.
      expect((await put(bot, { d: 'xy' })).body).toEqual(
        error('Request exceeds storage limit by 2 characters. The limit is 10000000 characters.'),
      );
      // Removing makes room again.
      expect((await remove(bot, ['a'])).status).toBe(200);
      expect(await storedSize()).toBe(BOT_STORAGE_SIZE_LIMIT - 4_000_001);
    });

    it('lets only one of two concurrent requests that each fit alone, but not together, through', async () => {
      await remove(bot);
      const third = 'z'.repeat(3_400_000);
      expect((await put(bot, { base: third })).status).toBe(200);
      const results = await Promise.all([put(bot, { one: third }), put(bot, { two: third })]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 400]);
      expect(results.find((r) => r.status === 400)!.body.msg).toMatch(/^Request exceeds storage limit by \d+ characters\./);
      expect(await storedSize()).toBeLessThanOrEqual(BOT_STORAGE_SIZE_LIMIT);
    });
  });
});
