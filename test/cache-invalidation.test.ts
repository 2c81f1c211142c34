/**
 * The per-process caches (src/cache/) against every change to what they
 * hold: each test warms the cache with a request, changes the object
 * through the API (or the action the CLI runs), and checks that the very
 * next request sees the change. The harness's flush after raw SQL writes is
 * off here, so only the invalidations the code publishes empty the caches.
 */
import { doCreateRealm } from '../src/actions/realms';
import { createChannelInTx } from '../src/actions/channels';
import { doRegenerateApiKey } from '../src/actions/users';
import { inTransaction } from '../src/db/transaction';
import { FieldType } from '../src/domain/profile-fields';
import { Role } from '../src/domain/roles';
import { addGroupMembers, getSystemGroupIds, insertGroup, removeGroupMembers } from '../src/queries/groups';
import { updateRealm } from '../src/queries/realms';
import { updateUser } from '../src/queries/users';
import type { UserRow } from '../src/queries/rows';
import { parseInvalidation } from '../src/cache/remote';
import { merge } from '../src/db/invalidations';
import { runCli } from './support/cli';
import { createProfileField } from './users-fixtures';
import { ContractChecker } from './support/contract';
import { eachDatabase } from './support/databases';
import { newInstance, type Instance } from './support/instances';
import { ProcessClient, startServerProcess, type ServerProcess } from './support/server-process';
import { createChannel, startTestServer, testSpec, type TestServer } from './support/server';

const me = (t: TestServer, who: UserRow) => t.api.get('/users/me', who);

eachDatabase('cache invalidation', (dialect) => {
  let t: TestServer;
  beforeEach(async () => {
    t = await startTestServer(dialect, undefined, { flushOnRawWrites: false });
  });
  afterEach(() => t.close());

  /** Sends to a channel and returns who received the message. */
  async function receiversOf(sender: UserRow, channel: string): Promise<number[]> {
    const res = await t.api.post('/messages', sender, { type: 'channel', to: channel, topic: 'cache', content: 'hello' });
    expect(res.status).toBe(200);
    const ids: Array<number | string> = await t.ctx.db('user_messages').where({ message_id: res.body.id }).pluck('user_id');
    return ids.map(Number).sort((a, b) => a - b);
  }

  describe('the caller', () => {
    it('a deactivated user is refused on the next request, and let in again once reactivated', async () => {
      const { member, admin } = t.cast;
      expect((await me(t, member)).status).toBe(200);
      expect((await t.api.delete(`/users/${member.id}`, admin)).status).toBe(200);
      const refused = await me(t, member);
      expect([refused.status, refused.body.msg]).toEqual([401, 'Account is deactivated']);
      expect((await t.api.post(`/users/${member.id}/reactivate`, admin)).status).toBe(200);
      expect((await me(t, member)).status).toBe(200);
    });

    it('a regenerated API key: the old one is refused at once, the new one works', async () => {
      const { member } = t.cast;
      expect((await me(t, member)).status).toBe(200);
      const key = await doRegenerateApiKey(t.ctx.db, member);
      const old = await me(t, member);
      expect([old.status, old.body.msg]).toEqual([401, 'Invalid API key']);
      expect((await me(t, { ...member, api_key: key })).status).toBe(200);
    });

    it('a changed address: the old one no longer authenticates, the new one does', async () => {
      const { member, owner } = t.cast;
      expect((await me(t, member)).status).toBe(200);
      expect((await me(t, owner)).status).toBe(200);
      // The permission is set only by the command line (no API): its write goes through the same query.
      await inTransaction(t.ctx.db, (tx) => updateUser(tx.trx, owner.id, { can_change_user_emails: true }));
      const changed = await t.api.patch(`/users/${member.id}`, owner, { new_email: 'renamed@example.com' });
      expect(changed.status).toBe(200);
      expect((await me(t, member)).status).toBe(401);
      expect((await me(t, { ...member, email: 'renamed@example.com' })).status).toBe(200);
    });

    it('a role change decides the next permission check', async () => {
      const { member, owner } = t.cast;
      const defaults = () => t.api.patch('/realm/user_settings_defaults', member, { enter_sends: true });
      expect((await defaults()).status).toBe(400);
      expect((await t.api.patch(`/users/${member.id}`, owner, { role: Role.ADMINISTRATOR })).status).toBe(200);
      expect((await defaults()).status).toBe(200);
      expect((await t.api.patch(`/users/${member.id}`, owner, { role: Role.MEMBER })).status).toBe(200);
      expect((await defaults()).status).toBe(400);
    });

    it('own settings and profile are what the next request sees', async () => {
      const { member } = t.cast;
      expect((await me(t, member)).body.full_name).toBe('Test Member');
      expect((await t.api.patch('/settings', member, { full_name: 'Renamed Member' })).status).toBe(200);
      expect((await me(t, member)).body.full_name).toBe('Renamed Member');
    });

    it('subscribing makes a private channel readable on the next request, unsubscribing the reverse', async () => {
      const { owner, admin, member } = t.cast;
      await createChannel(t, 'secret', [owner], { inviteOnly: true, historyPublicToSubscribers: true });
      const sent = await t.api.post('/messages', owner, { type: 'channel', to: 'secret', topic: 'plans', content: 'hidden' });
      const read = () => t.api.get(`/messages/${sent.body.id}`, member);
      expect((await read()).status).toBe(400);
      const principals = { subscriptions: [{ name: 'secret' }], principals: [member.id] };
      expect((await t.api.post('/users/me/subscriptions', admin, principals)).status).toBe(200);
      expect((await read()).status).toBe(200);
      expect((await t.api.delete('/users/me/subscriptions', admin, { subscriptions: ['secret'], principals: [member.id] })).status).toBe(
        200,
      );
      expect((await read()).status).toBe(400);
    });

    it('a role change moves the user between system groups: a channel permission given to a group follows', async () => {
      const { owner, member } = t.cast;
      const admins = (await getSystemGroupIds(t.ctx.db, t.realmId)).get('role:administrators')!;
      await inTransaction(t.ctx.db, (tx) =>
        createChannelInTx(tx, owner, {
          name: 'announcements',
          subscriberIds: [owner.id, member.id],
          groupSettings: { can_send_message_group: admins },
        }),
      );
      const send = () => t.api.post('/messages', member, { type: 'channel', to: 'announcements', topic: 'x', content: 'y' });
      expect((await send()).status).toBe(400);
      expect((await t.api.patch(`/users/${member.id}`, owner, { role: Role.ADMINISTRATOR })).status).toBe(200);
      expect((await send()).status).toBe(200);
    });

    it('direct group membership: adding and removing a member changes the check on the next request', async () => {
      const { owner, member } = t.cast;
      const group = await inTransaction(t.ctx.db, async (tx) => {
        const id = await insertGroup(tx.trx, { realm_id: t.realmId, name: 'club senders' });
        await addGroupMembers(tx.trx, id, [owner.id]);
        return id;
      });
      await inTransaction(t.ctx.db, (tx) =>
        createChannelInTx(tx, owner, {
          name: 'club',
          subscriberIds: [owner.id, member.id],
          groupSettings: { can_send_message_group: group },
        }),
      );
      const send = () => t.api.post('/messages', member, { type: 'channel', to: 'club', topic: 'x', content: 'y' });
      expect((await send()).status).toBe(400);
      await inTransaction(t.ctx.db, (tx) => addGroupMembers(tx.trx, group, [member.id]));
      expect((await send()).status).toBe(200);
      await inTransaction(t.ctx.db, (tx) => removeGroupMembers(tx.trx, group, [member.id]));
      expect((await send()).status).toBe(400);
    });
  });

  describe('the organization', () => {
    it('a deactivated organization refuses the next request', async () => {
      const { member } = t.cast;
      expect((await me(t, member)).status).toBe(200);
      await inTransaction(t.ctx.db, (tx) => updateRealm(tx.trx, t.realmId, { deactivated: true }));
      const refused = await me(t, member);
      expect([refused.status, refused.body.msg]).toEqual([401, 'This organization has been deactivated']);
    });

    it('a changed setting decides the next check, and shows in GET /server_settings and register', async () => {
      const { member } = t.cast;
      const sent = await t.api.post('/messages', member, { type: 'direct', to: [member.id], content: 'draft' });
      const edit = (content: string) => t.api.patch(`/messages/${sent.body.id}`, member, { content });
      expect((await edit('first edit')).status).toBe(200);
      await inTransaction(t.ctx.db, (tx) => updateRealm(tx.trx, t.realmId, { allow_message_editing: false, name: 'Renamed Org' }));
      const refused = await edit('second edit');
      expect([refused.status, refused.body.msg]).toEqual([400, 'Your organization has turned off message editing']);
      expect((await t.api.get('/server_settings', null)).body.realm_name).toBe('Renamed Org');
      const state = await t.api.post('/register', member, { fetch_event_types: ['realm'] });
      expect(state.body.realm_name).toBe('Renamed Org');
    });

    it("a user's first alert word changes the organization's count: the next message is flagged", async () => {
      const { owner, member } = t.cast;
      await createChannel(t, 'news', [owner, member]);
      const send = async (content: string) =>
        (await t.api.post('/messages', owner, { type: 'channel', to: 'news', topic: 'x', content })).body.id as number;
      await send('release notes'); // the organization row is cached with no alert words
      expect((await t.api.post('/users/me/alert_words', member, { alert_words: ['release'] })).status).toBe(200);
      const id = await send('the release is out');
      const row = await t.ctx.db('user_messages').where({ message_id: id, user_id: member.id }).first('flags');
      expect(Number(row!.flags) & (1 << 9)).toBe(1 << 9); // has_alert_word
    });

    it('a new organization changes which one a host name addresses', async () => {
      const { member } = t.cast;
      const atOther = () => t.api.call('get', '/users/me', member, {}, { headers: { host: 'other.example.com' } });
      // No organization has the subdomain "other": the root organization answers there.
      expect((await atOther()).status).toBe(200);
      await doCreateRealm(t.ctx.db, { stringId: 'other', name: 'Other' });
      expect((await atOther()).status).toBe(401);
      expect((await me(t, member)).status).toBe(200);
    });
  });

  describe("the organization's domains and code playgrounds (register's realm_domains and realm_playgrounds)", () => {
    const state = async (who: UserRow) =>
      (await t.api.post('/register', who, { fetch_event_types: ['realm_domains', 'realm_playgrounds'] })).body as Record<string, any>;

    it('each change shows in the next register, warm caches and all', async () => {
      const { admin, member } = t.cast;
      expect((await state(member)).realm_domains).toEqual([]);
      expect((await t.api.post('/realm/domains', admin, { domain: 'example.org', allow_subdomains: false })).status).toBe(200);
      expect((await state(member)).realm_domains).toEqual([{ domain: 'example.org', allow_subdomains: false }]);
      expect((await t.api.patch('/realm/domains/example.org', admin, { allow_subdomains: true })).status).toBe(200);
      expect((await state(member)).realm_domains).toEqual([{ domain: 'example.org', allow_subdomains: true }]);
      expect((await t.api.delete('/realm/domains/example.org', admin)).status).toBe(200);
      expect((await state(member)).realm_domains).toEqual([]);

      expect((await state(member)).realm_playgrounds).toEqual([]);
      const fields = { name: 'Python playground', pygments_language: 'Python', url_template: 'https://python.example.com/?code={code}' };
      const added = await t.api.post('/realm/playgrounds', admin, fields);
      expect(added.status).toBe(200);
      expect((await state(member)).realm_playgrounds).toEqual([{ id: added.body.id, ...fields }]);
      expect((await t.api.delete(`/realm/playgrounds/${added.body.id}`, admin)).status).toBe(200);
      expect((await state(member)).realm_playgrounds).toEqual([]);
    });

    it('travel to other nodes as kinds of their own, one per organization', () => {
      const domains = { kind: 'realm_domains', realmId: 7 } as const;
      const playgrounds = { kind: 'playgrounds', realmId: 7 } as const;
      expect(merge([domains, domains, playgrounds, { kind: 'realm_domains', realmId: 8 }])).toEqual([
        domains,
        playgrounds,
        { kind: 'realm_domains', realmId: 8 },
      ]);
      // Read back as themselves, not as the flush of everything an unknown kind becomes.
      expect(parseInvalidation(JSON.stringify(domains))).toEqual(domains);
      expect(parseInvalidation(JSON.stringify(playgrounds))).toEqual(playgrounds);
    });
  });

  describe("a channel's topic list (GET /users/me/{stream_id}/topics)", () => {
    const topics = async (who: UserRow, channelId: number) => {
      const res = await t.api.get(`/users/me/${channelId}/topics`, who);
      expect(res.status).toBe(200);
      return (res.body.topics as Array<{ name: string }>).map((x) => x.name);
    };

    it('shows a send, a rename, a move and a deletion on the very next request', async () => {
      const { owner, member } = t.cast;
      const one = await createChannel(t, 'topics here', [owner, member]);
      const two = await createChannel(t, 'topics there', [owner, member]);
      const send = async (topic: string) =>
        (await t.api.post('/messages', owner, { type: 'channel', to: 'topics here', topic, content: 'hi' })).body.id as number;
      await send('first');
      expect(await topics(member, one.id)).toEqual(['first']);
      const id = await send('second');
      expect(await topics(member, one.id)).toEqual(['second', 'first']);
      expect((await t.api.patch(`/messages/${id}`, owner, { topic: 'renamed', send_notification_to_new_thread: false })).status).toBe(200);
      expect(await topics(member, one.id)).toEqual(['renamed', 'first']);
      expect(await topics(member, two.id)).toEqual([]);
      const moved = await t.api.patch(`/messages/${id}`, owner, {
        stream_id: two.id,
        send_notification_to_new_thread: false,
        send_notification_to_old_thread: false,
      });
      expect(moved.status).toBe(200);
      expect(await topics(member, one.id)).toEqual(['first']);
      expect(await topics(member, two.id)).toEqual(['renamed']);
      expect((await t.api.post(`/streams/${two.id}/delete_topic`, owner, { topic_name: 'renamed' })).status).toBe(200);
      expect(await topics(member, two.id)).toEqual([]);
    });

    it('names the empty topic as each request asks, from one cached list whose text follows its changes', async () => {
      // The cached list is kept encoded per way of naming the empty topic (src/serializers/topic-summaries.ts).
      const { owner, member } = t.cast;
      const c = await createChannel(t, 'topics named', [owner, member]);
      const send = (topic: string) => t.api.post('/messages', owner, { type: 'channel', to: 'topics named', topic, content: 'hi' });
      const named = async (allow: boolean) => {
        const res = await t.api.get(`/users/me/${c.id}/topics`, member, { allow_empty_topic_name: allow });
        expect(res.status).toBe(200);
        return (res.body.topics as Array<{ name: string; max_id: number }>).map((x) => x.name);
      };
      await send('');
      for (let i = 0; i < 2; i++) {
        expect(await named(true)).toEqual(['']);
        expect(await named(false)).toEqual(['general chat']);
      }
      await send('after');
      expect(await named(false)).toEqual(['after', 'general chat']);
      expect(await named(true)).toEqual(['after', '']);
    });

    it('travel to other nodes as a kind of their own', () => {
      const lists = { kind: 'topics', recipientIds: [4, 5] } as const;
      expect(merge([lists, { kind: 'topics', recipientIds: [5, 6] }])).toEqual([{ kind: 'topics', recipientIds: [4, 5, 6] }]);
      expect(parseInvalidation(JSON.stringify(lists))).toEqual(lists);
    });
  });

  describe('the people a page names (users by id)', () => {
    /** The one message `viewer` fetches by id. */
    async function fetched(viewer: UserRow, id: number) {
      const res = await t.api.get('/messages', viewer, { message_ids: [id] });
      expect(res.status).toBe(200);
      return res.body.messages[0];
    }

    it("a sender's own new name (PATCH /settings) shows on the next page", async () => {
      const { owner, member, moderator } = t.cast;
      await createChannel(t, 'people', [owner, member, moderator]);
      const sent = await t.api.post('/messages', member, { type: 'channel', to: 'people', topic: 'who', content: 'me' });
      expect((await fetched(moderator, sent.body.id)).sender_full_name).toBe(member.full_name);
      expect((await t.api.patch('/settings', member, { full_name: 'Self Named' })).status).toBe(200);
      expect((await fetched(moderator, sent.body.id)).sender_full_name).toBe('Self Named');
    });

    it("an administrator's rename of a direct message's sender shows in both places at once", async () => {
      const { owner, member, admin } = t.cast;
      const sent = await t.api.post('/messages', member, { type: 'direct', to: [owner.id], content: 'dm' });
      const before = await fetched(owner, sent.body.id);
      expect(before.display_recipient.map((u: { id: number }) => u.id)).toContain(member.id);
      expect((await t.api.patch(`/users/${member.id}`, admin, { full_name: 'Another Name' })).status).toBe(200);
      const after = await fetched(owner, sent.body.id);
      expect(after.sender_full_name).toBe('Another Name');
      expect(after.display_recipient.find((u: { id: number }) => u.id === member.id).full_name).toBe('Another Name');
    });
  });

  describe('the channel a narrow names', () => {
    // Channels are not renamed or made private through the API yet; their creation and
    // subscriptions are what changes what a narrow finds and reads.
    const narrow = (who: UserRow, operand: string | number) =>
      t.api.get('/messages', who, { narrow: [{ operator: 'channel', operand }], anchor: 'newest', num_before: 5, num_after: 0 });

    it('a channel created after a narrow that named it is found by the next one', async () => {
      const { owner } = t.cast;
      const before = await narrow(owner, 'later');
      expect([before.status, before.body.code]).toEqual([400, 'BAD_NARROW']);
      await createChannel(t, 'later', [owner]);
      await t.api.post('/messages', owner, { type: 'channel', to: 'later', topic: 'n', content: 'x' });
      expect((await narrow(owner, 'later')).body.messages).toHaveLength(1);
    });

    it("a private channel's history: readable once subscribed, not after leaving", async () => {
      const { owner, member } = t.cast;
      const channel = await createChannel(t, 'closed', [owner], { inviteOnly: true, historyPublicToSubscribers: true });
      await t.api.post('/messages', owner, { type: 'channel', to: 'closed', topic: 'n', content: 'history' });
      expect((await narrow(member, channel.id)).body.messages).toHaveLength(0);
      const add = { subscriptions: [{ name: 'closed' }], principals: [member.id] };
      expect((await t.api.post('/users/me/subscriptions', owner, add)).status).toBe(200);
      expect((await narrow(member, channel.id)).body.messages).toHaveLength(1);
      expect((await t.api.delete('/users/me/subscriptions', member, { subscriptions: ['closed'] })).status).toBe(200);
      expect((await narrow(member, channel.id)).body.messages).toHaveLength(0);
    });
  });

  describe("GET /users/me's extras (the newest message held, profile values)", () => {
    const maxOf = async (who: UserRow): Promise<number> => {
      const res = await me(t, who);
      expect(res.status).toBe(200);
      return res.body.max_message_id as number;
    };

    it('a message received raises max_message_id on the next request; deleting it lowers it again', async () => {
      const { owner, member } = t.cast;
      await createChannel(t, 'mine', [owner, member]);
      const before = await maxOf(member);
      const sent = await t.api.post('/messages', owner, { type: 'channel', to: 'mine', topic: 'm', content: 'new' });
      expect(sent.body.id).toBeGreaterThan(before);
      expect(await maxOf(member)).toBe(sent.body.id);
      expect((await t.api.delete(`/messages/${sent.body.id}`, owner)).status).toBe(200);
      expect(await maxOf(member)).toBe(before);
    });

    it("a message of a channel's history the user stars (a row of their own) raises it", async () => {
      const { owner, member } = t.cast;
      await createChannel(t, 'history', [owner]);
      const sent = await t.api.post('/messages', owner, { type: 'channel', to: 'history', topic: 'h', content: 'old news' });
      expect(await maxOf(member)).toBeLessThan(sent.body.id);
      const star = await t.api.post('/messages/flags', member, { messages: [sent.body.id], op: 'add', flag: 'starred' });
      expect(star.status).toBe(200);
      expect(await maxOf(member)).toBe(sent.body.id);
    });

    it('a move into a private channel the user is not in takes the message away', async () => {
      const { owner, member } = t.cast;
      await createChannel(t, 'open', [owner, member]);
      const closed = await createChannel(t, 'closed', [owner], { inviteOnly: true });
      const before = await maxOf(member);
      const sent = await t.api.post('/messages', owner, { type: 'channel', to: 'open', topic: 'm', content: 'moving' });
      expect(await maxOf(member)).toBe(sent.body.id);
      const moved = await t.api.patch(`/messages/${sent.body.id}`, owner, { stream_id: closed.id, propagate_mode: 'change_one' });
      expect(moved.status).toBe(200);
      expect(await maxOf(member)).toBe(before);
    });

    it("an administrator's change to a profile value shows on the next request", async () => {
      const { admin, member } = t.cast;
      const field = await createProfileField(t, 'Team', FieldType.SHORT_TEXT);
      expect((await me(t, member)).body.profile_data).toEqual({});
      expect((await t.api.patch(`/users/${member.id}`, admin, { profile_data: [{ id: field, value: 'Blue' }] })).status).toBe(200);
      expect((await me(t, member)).body.profile_data).toEqual({ [field]: { value: 'Blue', rendered_value: '<p>Blue</p>' } });
      expect((await t.api.patch(`/users/${member.id}`, admin, { profile_data: [{ id: field, value: null }] })).status).toBe(200);
      expect((await me(t, member)).body.profile_data).toEqual({});
    });
  });

  describe('the channel to send to', () => {
    it('a new subscriber receives the next message; one who left does not', async () => {
      const { owner, member, moderator, admin } = t.cast;
      await createChannel(t, 'crowd', [owner, member]);
      expect(await receiversOf(owner, 'crowd')).toEqual([owner.id, member.id].sort((a, b) => a - b));
      const add = { subscriptions: [{ name: 'crowd' }], principals: [moderator.id] };
      expect((await t.api.post('/users/me/subscriptions', admin, add)).status).toBe(200);
      expect(await receiversOf(owner, 'crowd')).toEqual([owner.id, moderator.id, member.id].sort((a, b) => a - b));
      expect((await t.api.delete('/users/me/subscriptions', member, { subscriptions: ['crowd'] })).status).toBe(200);
      expect(await receiversOf(owner, 'crowd')).toEqual([owner.id, moderator.id].sort((a, b) => a - b));
    });

    it('a deactivated subscriber stops receiving, and receives again once reactivated', async () => {
      const { owner, member, admin } = t.cast;
      const channel = await createChannel(t, 'crowd', [owner, member]);
      expect(await receiversOf(owner, 'crowd')).toContain(member.id);
      expect((await t.api.delete(`/users/${member.id}`, admin)).status).toBe(200);
      expect(await receiversOf(owner, 'crowd')).not.toContain(member.id);
      expect((await t.api.post(`/users/${member.id}/reactivate`, admin)).status).toBe(200);
      // By id as well as by name: both keys of the same channel were dropped.
      const byId = await t.api.post('/messages', owner, { type: 'channel', to: channel.id, topic: 'cache', content: 'again' });
      expect(await t.ctx.db('user_messages').where({ message_id: byId.body.id, user_id: member.id }).first()).toBeDefined();
    });

    it('a channel created after a failed send is found by the next one', async () => {
      const { owner } = t.cast;
      const before = await t.api.post('/messages', owner, { type: 'channel', to: 'later', topic: 'x', content: 'y' });
      expect([before.status, before.body.code]).toEqual([400, 'STREAM_DOES_NOT_EXIST']);
      await createChannel(t, 'later', [owner]);
      expect(await receiversOf(owner, 'later')).toEqual([owner.id]);
    });
  });
});

eachDatabase('cache invalidation from the CLI (another process)', (dialect) => {
  let instance: Instance;
  let server: ServerProcess | null = null;
  beforeEach(async () => {
    instance = await newInstance(dialect);
  });
  afterEach(async () => {
    await server?.kill();
    server = null;
    await instance.drop();
  });

  /** Repeats `check` until it holds (the server reads what the CLI recorded every CACHE_POLL_MS). */
  async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`never: ${what}`);
  }

  it('api-key --regenerate: the running server refuses the old key', async () => {
    server = await startServerProcess({ ...instance.env, DATABASE_URL: instance.databaseUrl ?? '' });
    const client = new ProcessClient(server.url, new ContractChecker(await testSpec()));
    const owner = server.owner;
    expect((await client.call('GET', '/users/me', owner)).status).toBe(200);
    const cli = await runCli(['api-key', '--email', owner.email, '--regenerate'], instance.env);
    expect(cli.code).toBe(0);
    const newKey = cli.stdout.trim();
    await eventually(async () => (await client.call('GET', '/users/me', owner)).status === 401, 'the old key is refused');
    expect((await client.call('GET', '/users/me', { email: owner.email, apiKey: newKey })).status).toBe(200);
  });

  it('cache flush: a row edited by hand is seen once flushed', async () => {
    server = await startServerProcess({ ...instance.env, DATABASE_URL: instance.databaseUrl ?? '' });
    const client = new ProcessClient(server.url, new ContractChecker(await testSpec()));
    const owner = server.owner;
    const name = async () => (await client.call('GET', '/users/me', owner)).body.full_name as string;
    const before = await name();
    const db = instance.open();
    await db('users').where({ api_key: owner.apiKey }).update({ full_name: 'Edited By Hand' });
    // Cached, and no process said it changed.
    expect(await name()).toBe(before);
    const cli = await runCli(['cache', 'flush'], instance.env);
    expect(cli.code).toBe(0);
    await eventually(async () => (await name()) === 'Edited By Hand', 'the edited name is served');
  });
});
