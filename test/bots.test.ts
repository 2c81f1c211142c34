import sharp from 'sharp';
import request from 'supertest';
import { realmHost } from '../src/domain/realm-address';
import { Role } from '../src/domain/roles';
import { getSystemGroupIds } from '../src/queries/groups';
import type { UserRow } from '../src/queries/rows';
import { getUserById } from '../src/queries/users';
import { ContractChecker } from './support/contract';
import { eachDatabase } from './support/databases';
import { pending, register, type Client } from './support/events';
import { createChannel, startTestServer, type TestServer } from './support/server';
import { tempDataDir } from './support/uploads';
import { freshUser } from './users-fixtures';

const AUDIT = { BOT_OWNER_CHANGED: 123, DEFAULT_SENDING_STREAM_CHANGED: 129 };

eachDatabase('bots', (dialect) => {
  let t: TestServer;
  let contract: ContractChecker;
  let groups: Map<string, number>;
  let domain: string;
  const data = tempDataDir();
  let serial = 0;

  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, { dataDir: data.dir });
    contract = new ContractChecker(t.spec);
    const { owner, admin, moderator, member, guest, bot } = t.cast;
    await createChannel(t, 'general', [owner, admin, moderator, member, guest, bot]);
    await createChannel(t, 'secret', [owner, member], { inviteOnly: true });
    await createChannel(t, 'hidden', [owner], { inviteOnly: true });
    groups = await getSystemGroupIds(t.ctx.db, t.realmId);
    domain = realmHost(t.ctx.config.externalUrl, '');
  });
  afterAll(async () => {
    t.ctx.queues.close();
    await t.close();
    data.remove();
  });
  beforeEach(async () => {
    await setPolicy('role:members', 'role:members');
  });

  /** The organization's two bot-creation settings, by system group name (a raw write: the harness empties the caches). */
  async function setPolicy(any: string, writeOnly: string): Promise<void> {
    await t.ctx
      .db('realms')
      .where({ id: t.realmId })
      .update({
        can_create_bots_group: groups.get(any)!,
        can_create_write_only_bots_group: groups.get(writeOnly)!,
      });
  }
  const unique = () => `b${++serial}${Date.now().toString(36)}`;
  const addBot = (who: UserRow, fields: Record<string, unknown> = {}) =>
    t.api.post('/bots', who, { full_name: `Bot ${unique()}`, short_name: unique(), ...fields });
  const refusal = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
  const botRow = async (id: number) => (await getUserById(t.ctx.db, id))!;
  /** A bot made through the API, as `owner`; its row. */
  async function newBot(owner: UserRow, fields: Record<string, unknown> = {}): Promise<UserRow> {
    const res = await addBot(owner, fields);
    expect(res.status).toBe(200);
    return botRow(res.body.user_id);
  }
  const drain = async (clients: Client[]) => Promise.all(clients.map((c) => pending(t, c)));
  const botEvents = (events: Array<Record<string, any>>) => events.filter((e) => e.type === 'realm_bot').map(({ id: _, ...e }) => e);

  describe('POST /bots', () => {
    it('makes a generic bot owned by the caller, with its address, key and defaults, and the bot can call the API', async () => {
      const { member } = t.cast;
      const short = unique();
      const res = await t.api.post('/bots', member, { full_name: '  Build Bot  ', short_name: ` ${short} ` });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        result: 'success',
        msg: '',
        user_id: expect.any(Number),
        api_key: expect.stringMatching(/^[A-Za-z0-9]{32}$/),
        avatar_url: expect.stringContaining('gravatar.com'),
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
      });
      const bot = await botRow(res.body.user_id);
      expect(bot).toMatchObject({
        email: `${short}-bot@${domain}`,
        full_name: 'Build Bot',
        is_bot: true,
        bot_type: 1,
        bot_owner_id: member.id,
        role: Role.MEMBER,
        api_key: res.body.api_key,
        is_active: true,
      });
      const me = await t.api.get('/users/me', bot);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ user_id: bot.id, is_bot: true, bot_type: 1, bot_owner_id: member.id });
    });

    it('tells everyone of the new user, and only the owner and administrators of the bot (only the owner for a private default)', async () => {
      const { owner, admin, moderator, member } = t.cast;
      const clients = await Promise.all(
        [owner, admin, moderator, member].map((u) => register(t, u, { event_types: ['realm_bot', 'realm_user'] })),
      );
      const res = await addBot(member, { bot_type: 3, payload_url: '"https://hooks.example.com/in"', interface_type: 2 });
      expect(res.status).toBe(200);
      const [ownerEv, adminEv, modEv, memberEv] = await drain(clients);
      for (const events of [ownerEv!, adminEv!, modEv!, memberEv!]) {
        expect(events).toContainEqual(
          expect.objectContaining({
            type: 'realm_user',
            op: 'add',
            person: expect.objectContaining({ user_id: res.body.user_id, is_bot: true, bot_type: 3, bot_owner_id: member.id }),
          }),
        );
      }
      const token = (await t.ctx.db('bot_services').where({ user_id: res.body.user_id }).first())!.token as string;
      expect(token).toMatch(/^[A-Za-z0-9]{32}$/);
      const add = {
        type: 'realm_bot',
        op: 'add',
        bot: {
          user_id: res.body.user_id,
          default_sending_stream: null,
          default_events_register_stream: null,
          default_all_public_streams: false,
          services: [{ base_url: 'https://hooks.example.com/in', token, interface: 2 }],
        },
      };
      for (const events of [ownerEv!, adminEv!, memberEv!]) expect(botEvents(events)).toEqual([add]);
      expect(botEvents(modEv!)).toEqual([]);

      // #secret is private: its name goes to the owner alone.
      const again = await Promise.all([owner, member].map((u) => register(t, u, { event_types: ['realm_bot'] })));
      const priv = await addBot(member, { default_sending_stream: 'secret' });
      expect(priv.status).toBe(200);
      expect(priv.body.default_sending_stream).toBe('secret');
      const [o, m] = await drain(again);
      expect(botEvents(o!)).toEqual([]);
      expect(botEvents(m!)).toEqual([
        expect.objectContaining({ op: 'add', bot: expect.objectContaining({ default_sending_stream: 'secret' }) }),
      ]);
    });

    it('stores the default channels by name as the caller may access them', async () => {
      const { member } = t.cast;
      const res = await addBot(member, {
        default_sending_stream: 'GENERAL',
        default_events_register_stream: 'secret',
        default_all_public_streams: true,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        default_sending_stream: 'general',
        default_events_register_stream: 'secret',
        default_all_public_streams: true,
      });
      const list = await t.api.get('/bots', member);
      expect(list.body.bots).toContainEqual(
        expect.objectContaining({
          full_name: expect.any(String),
          default_sending_stream: 'general',
          default_events_register_stream: 'secret',
          default_all_public_streams: true,
        }),
      );
      expect((await addBot(member, { default_sending_stream: 'hidden' })).body).toEqual(refusal("Invalid channel name 'hidden'"));
      expect((await addBot(member, { default_events_register_stream: 'nowhere' })).body).toEqual(refusal("Invalid channel name 'nowhere'"));
    });

    it('refuses in Zulip words, writing nothing', async () => {
      const { member, guest, bot } = t.cast;
      const before = await t.ctx.db('users').count({ n: '*' }).first();
      const taken = await newBot(member, { full_name: 'Taken Name' });
      const takenShort = taken.email.slice(0, taken.email.indexOf('-bot@'));
      const cases: Array<[UserRow, Record<string, unknown>, string]> = [
        [guest, {}, 'Not allowed for guest users'],
        [bot, {}, 'This endpoint does not accept bot requests.'],
        [member, { short_name: '   ' }, 'Bad name or username'],
        [member, { short_name: 'two words' }, 'Bad name or username'],
        [member, { full_name: 'X' }, 'Name too short!'],
        [member, { full_name: 'Bad *name*' }, 'Invalid characters in name!'],
        [member, { bot_type: 4 }, 'Embedded bots are not enabled.'],
        [member, { short_name: takenShort.toUpperCase() }, 'Username already in use'],
        [member, { full_name: 'Taken Name' }, 'Name is already in use!'],
        [member, { full_name: t.cast.admin.full_name }, 'Name is already in use!'],
        [member, { bot_type: 99 }, 'Invalid bot type'],
        [member, { bot_type: 3, interface_type: 7 }, 'Invalid interface type'],
        [member, { bot_type: 3, payload_url: '"not a url"' }, 'payload_url is not a URL'],
        [member, { bot_type: 2, service_name: 'nowhere' }, "Invalid integration 'nowhere'."],
      ];
      for (const [who, fields, msg] of cases) {
        const res = await addBot(who, fields);
        expect([who.email, fields, res.status, res.body]).toEqual([who.email, fields, 400, refusal(msg)]);
      }
      const after = await t.ctx.db('users').count({ n: '*' }).first();
      expect(Number(after!.n)).toBe(Number(before!.n) + 1);
      // An integration the server has is accepted.
      expect((await addBot(member, { bot_type: 2, service_name: 'json' })).status).toBe(200);
    });

    it('follows can_create_bots_group for any type and can_create_write_only_bots_group for incoming webhook bots', async () => {
      const { admin, member, moderator } = t.cast;
      await setPolicy('role:administrators', 'role:members');
      expect((await addBot(member, { bot_type: 1 })).body).toEqual(refusal('Insufficient permission'));
      expect((await addBot(member, { bot_type: 3 })).body).toEqual(refusal('Insufficient permission'));
      expect((await addBot(member, { bot_type: 2 })).status).toBe(200);
      expect((await addBot(admin, { bot_type: 1 })).status).toBe(200);
      await setPolicy('role:administrators', 'role:moderators');
      expect((await addBot(member, { bot_type: 2 })).body).toEqual(refusal('Insufficient permission'));
      expect((await addBot(moderator, { bot_type: 2 })).status).toBe(200);
      // Only incoming webhook bots for those in the second group alone: any other type is refused first.
      expect((await addBot(moderator, { bot_type: 99 })).body).toEqual(refusal('Insufficient permission'));
      await setPolicy('role:nobody', 'role:nobody');
      expect((await addBot(admin, { bot_type: 2 })).body).toEqual(refusal('Insufficient permission'));
    });

    it('takes an avatar image in a multipart body, and refuses a second file', async () => {
      const { member } = t.cast;
      const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 1, g: 2, b: 3 } } })
        .png()
        .toBuffer();
      const post = async (files: number) => {
        let req = request(t.app).post('/api/v1/bots').auth(member.email, member.api_key);
        req = req.field('full_name', `Pictured ${unique()}`).field('short_name', unique());
        for (let i = 0; i < files; i++) req = req.attach(`file${i}`, png, { filename: 'a.png', contentType: 'image/png' });
        const res = await req;
        contract.check('post', '/api/v1/bots', res.status, res.body);
        return res;
      };
      const res = await post(1);
      expect(res.status).toBe(200);
      expect(res.body.avatar_url).toMatch(/^\/user_avatars\//);
      expect((await botRow(res.body.user_id)).avatar_source).toBe('U');
      const two = await post(2);
      expect(two.body).toEqual(refusal('You may only upload one file at a time'));
    });
  });

  describe('GET /bots', () => {
    it("lists the caller's own active bots, oldest first, with their keys", async () => {
      const owner = await freshUser(t);
      const first = await newBot(owner, { default_sending_stream: 'general' });
      const second = await newBot(owner);
      const gone = await newBot(owner);
      await newBot(t.cast.admin);
      expect((await t.api.delete(`/bots/${gone.id}`, owner)).status).toBe(200);
      const res = await t.api.get('/bots', owner);
      expect(res.status).toBe(200);
      expect(res.body.bots).toEqual([
        {
          username: first.email,
          full_name: first.full_name,
          api_key: first.api_key,
          avatar_url: expect.any(String),
          default_sending_stream: 'general',
          default_events_register_stream: null,
          default_all_public_streams: false,
        },
        expect.objectContaining({ username: second.email, api_key: second.api_key }),
      ]);
      // Administrators too see only their own.
      expect((await t.api.get('/bots', t.cast.admin)).body.bots.map((b: any) => b.username)).not.toContain(first.email);
      expect((await t.api.get('/bots', t.cast.guest)).body).toEqual(refusal('Not allowed for guest users'));
    });
  });

  describe('PATCH /bots/{bot_id}', () => {
    it("changes a bot's username and so its address (feature level 447), telling everyone", async () => {
      const { member, moderator } = t.cast;
      const bot = await newBot(member);
      const other = await newBot(member);
      const clients = await Promise.all([member, moderator].map((u) => register(t, u, { event_types: ['realm_user'] })));
      const short = unique();
      expect((await t.api.patch(`/bots/${bot.id}`, member, { short_name: ` ${short} ` })).status).toBe(200);
      const email = `${short}-bot@${domain}`;
      expect(await botRow(bot.id)).toMatchObject({ email, delivery_email: email, email_key: email.toLowerCase() });
      for (const events of await drain(clients)) {
        expect(events).toContainEqual(
          expect.objectContaining({ type: 'realm_user', op: 'update', person: { user_id: bot.id, new_email: email } }),
        );
        expect(events).toContainEqual(
          expect.objectContaining({ type: 'realm_user', op: 'update', person: { user_id: bot.id, delivery_email: email } }),
        );
      }
      // The key now goes with the new address only.
      expect((await t.api.get('/users/me', { ...bot, email })).status).toBe(200);
      expect((await t.api.get('/users/me', bot)).status).toBe(401);
      // Taken, empty or not an address: POST /bots's answers.
      expect((await t.api.patch(`/bots/${bot.id}`, member, { short_name: other.email.split('-bot@')[0] })).body).toEqual(
        refusal('Username already in use'),
      );
      expect((await t.api.patch(`/bots/${bot.id}`, member, { short_name: '  ' })).body).toEqual(refusal('Bad name or username'));
      expect((await t.api.patch(`/bots/${bot.id}`, member, { short_name: 'a b' })).body).toEqual(refusal('Bad name or username'));
      expect((await botRow(bot.id)).email).toBe(email);
    });

    it('lets the owner and administrators change a bot; others get Zulip answers', async () => {
      const { member, admin, moderator } = t.cast;
      const bot = await newBot(member);
      const clients = await Promise.all([member, moderator].map((u) => register(t, u, { event_types: ['realm_user'] })));
      const res = await t.api.patch(`/bots/${bot.id}`, member, { full_name: 'Renamed Bot' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        result: 'success',
        msg: '',
        full_name: 'Renamed Bot',
        avatar_url: expect.any(String),
        service_interface: 1,
        service_payload_url: null,
        config_data: null,
        default_sending_stream: null,
        default_events_register_stream: null,
        default_all_public_streams: false,
        bot_owner: member.email,
      });
      for (const events of await drain(clients)) {
        expect(events).toContainEqual(
          expect.objectContaining({ type: 'realm_user', op: 'update', person: { user_id: bot.id, full_name: 'Renamed Bot' } }),
        );
      }
      expect((await t.api.patch(`/bots/${bot.id}`, admin, { full_name: 'Admin Renamed' })).status).toBe(200);
      expect((await botRow(bot.id)).full_name).toBe('Admin Renamed');
      // The unchanged name is no change and no refusal.
      expect((await t.api.patch(`/bots/${bot.id}`, member, { full_name: 'Admin Renamed' })).status).toBe(200);
      expect((await t.api.patch(`/bots/${bot.id}`, member, { full_name: admin.full_name })).body).toEqual(
        refusal('Name is already in use!'),
      );
      expect((await t.api.patch(`/bots/${bot.id}`, moderator, { full_name: 'Other' })).body).toEqual(refusal('Insufficient permission'));
      expect((await t.api.patch(`/bots/${member.id}`, admin, { full_name: 'Other' })).body).toEqual(refusal('No such bot'));
      expect((await t.api.patch('/bots/999999', admin, { full_name: 'Other' })).body).toEqual(refusal('No such bot'));
      expect((await t.api.patch(`/bots/${bot.id}`, t.cast.guest, {})).body).toEqual(refusal('Not allowed for guest users'));
    });

    it('changes the role for administrators only', async () => {
      const { member, admin } = t.cast;
      const bot = await newBot(member);
      expect((await t.api.patch(`/bots/${bot.id}`, member, { role: Role.MODERATOR })).body).toEqual(
        refusal('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL'),
      );
      expect((await t.api.patch(`/bots/${bot.id}`, admin, { role: Role.OWNER })).body).toEqual(
        refusal('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'),
      );
      expect((await t.api.patch(`/bots/${bot.id}`, admin, { role: Role.MODERATOR })).status).toBe(200);
      expect((await botRow(bot.id)).role).toBe(Role.MODERATOR);
      // Its system groups follow the role.
      const moderators = groups.get('role:moderators')!;
      expect(await t.ctx.db('group_members').where({ group_id: moderators, user_id: bot.id }).first()).toBeDefined();
    });

    it('passes ownership: delete to the old owner, add to the new one, the user update to everyone', async () => {
      const oldOwner = await freshUser(t);
      const newOwner = await freshUser(t);
      const bot = await newBot(oldOwner);
      const [o, n, a, other] = await Promise.all(
        [oldOwner, newOwner, t.cast.admin, t.cast.moderator].map((u) => register(t, u, { event_types: ['realm_bot', 'realm_user'] })),
      );
      const res = await t.api.patch(`/bots/${bot.id}`, oldOwner, { bot_owner_id: newOwner.id });
      expect(res.status).toBe(200);
      expect(res.body.bot_owner).toBe(newOwner.email);
      expect((await botRow(bot.id)).bot_owner_id).toBe(newOwner.id);
      const [oe, ne, ae, xe] = await drain([o!, n!, a!, other!]);
      expect(botEvents(oe!)).toEqual([{ type: 'realm_bot', op: 'delete', bot: { user_id: bot.id } }]);
      expect(botEvents(ne!)).toEqual([expect.objectContaining({ op: 'add', bot: expect.objectContaining({ user_id: bot.id }) })]);
      expect(botEvents(ae!)).toEqual([]);
      for (const events of [oe!, ne!, ae!, xe!]) {
        expect(events).toContainEqual(
          expect.objectContaining({ type: 'realm_user', op: 'update', person: { user_id: bot.id, bot_owner_id: newOwner.id } }),
        );
      }
      const audit = await t.ctx.db('audit_log').where({ modified_user_id: bot.id, event_type: AUDIT.BOT_OWNER_CHANGED }).first();
      expect(audit).toBeDefined();
      // The old owner no longer administers it.
      expect((await t.api.patch(`/bots/${bot.id}`, oldOwner, { full_name: 'Mine Again' })).body).toEqual(
        refusal('Insufficient permission'),
      );
      const gone = await freshUser(t, { deactivated: true });
      expect((await t.api.patch(`/bots/${bot.id}`, newOwner, { bot_owner_id: 999999 })).body).toEqual(
        refusal('Failed to change owner, no such user'),
      );
      expect((await t.api.patch(`/bots/${bot.id}`, newOwner, { bot_owner_id: gone.id })).body).toEqual(
        refusal('Failed to change owner, user is deactivated'),
      );
      expect((await t.api.patch(`/bots/${bot.id}`, newOwner, { bot_owner_id: t.cast.bot.id })).body).toEqual(
        refusal("Failed to change owner, bots can't own other bots"),
      );
    });

    it('changes the defaults and the service with realm_bot updates, as register then shows them', async () => {
      const { member, admin } = t.cast;
      const bot = await newBot(member, { bot_type: 3, payload_url: 'https://a.example.com/' });
      const clients = await Promise.all([member, admin].map((u) => register(t, u, { event_types: ['realm_bot'] })));
      const res = await t.api.patch(`/bots/${bot.id}`, member, {
        default_sending_stream: 'general',
        default_all_public_streams: true,
        service_payload_url: '"https://b.example.com/"',
        service_interface: 2,
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        default_sending_stream: 'general',
        default_all_public_streams: true,
        service_payload_url: 'https://b.example.com/',
        service_interface: 2,
      });
      const token = (await t.ctx.db('bot_services').where({ user_id: bot.id }).first())!.token as string;
      const updates = [
        { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, default_sending_stream: 'general' } },
        { type: 'realm_bot', op: 'update', bot: { user_id: bot.id, default_all_public_streams: true } },
        {
          type: 'realm_bot',
          op: 'update',
          bot: { user_id: bot.id, services: [{ base_url: 'https://b.example.com/', interface: 2, token }] },
        },
      ];
      for (const events of await drain(clients)) expect(botEvents(events)).toEqual(updates);
      const state = await register(t, member, { fetch_event_types: ['realm_bot'] });
      expect(state.state.realm_bots).toContainEqual({
        user_id: bot.id,
        default_sending_stream: 'general',
        default_events_register_stream: null,
        default_all_public_streams: true,
        services: [{ base_url: 'https://b.example.com/', interface: 2, token }],
      });
      expect(
        await t.ctx.db('audit_log').where({ modified_user_id: bot.id, event_type: AUDIT.DEFAULT_SENDING_STREAM_CHANGED }).first(),
      ).toBeDefined();
      // The empty string clears a default.
      expect((await t.api.patch(`/bots/${bot.id}`, member, { default_sending_stream: '' })).body.default_sending_stream).toBeNull();
      expect((await botRow(bot.id)).default_sending_channel_id).toBeNull();
      expect((await t.api.patch(`/bots/${bot.id}`, member, { default_sending_stream: 'hidden' })).body).toEqual(
        refusal("Invalid channel name 'hidden'"),
      );
      expect(
        (await t.api.patch(`/bots/${bot.id}`, member, { service_payload_url: 'https://c.example.com/', service_interface: 5 })).body,
      ).toEqual(refusal('Invalid interface type'));
      expect((await t.api.patch(`/bots/${bot.id}`, member, { service_payload_url: 'nope' })).body).toEqual(
        refusal('service_payload_url is not a URL'),
      );
    });
  });

  describe('DELETE /bots/{bot_id}', () => {
    it('deactivates a bot its owner or an administrator names, with the deactivation events', async () => {
      const { member, admin, moderator } = t.cast;
      const bot = await newBot(member);
      const other = await newBot(member);
      const watcher = await register(t, moderator, { event_types: ['realm_user', 'realm_bot'] });
      expect((await t.api.delete(`/bots/${bot.id}`, moderator)).body).toEqual(refusal('Insufficient permission'));
      expect((await t.api.delete(`/bots/${moderator.id}`, admin)).body).toEqual(refusal('No such bot'));
      const res = await t.api.delete(`/bots/${bot.id}`, member);
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect((await botRow(bot.id)).is_active).toBe(false);
      const events = await pending(t, watcher);
      expect(events.map(({ id: _, ...e }) => e)).toEqual([
        { type: 'realm_user', op: 'update', person: { user_id: bot.id, is_active: false } },
      ]);
      expect((await t.api.get('/users/me', bot)).body).toEqual(refusal('Account is deactivated', 'UNAUTHORIZED'));
      // Again: still a success, nothing more.
      expect((await t.api.delete(`/bots/${bot.id}`, member)).status).toBe(200);
      expect(await pending(t, watcher)).toEqual([]);
      expect((await t.api.delete(`/bots/${other.id}`, admin)).status).toBe(200);
    });

    it('is brought back by POST /users/{id}/reactivate unless an active account has its name', async () => {
      const { member, admin } = t.cast;
      const bot = await newBot(member, { full_name: `Phoenix ${unique()}` });
      expect((await t.api.delete(`/bots/${bot.id}`, member)).status).toBe(200);
      const twin = await newBot(member, { full_name: bot.full_name });
      expect((await t.api.post(`/users/${bot.id}/reactivate`, admin)).body).toEqual(
        refusal(
          `There is already an active bot named "${bot.full_name}" in this organization. To reactivate this bot, you must rename or deactivate the other one first.`,
        ),
      );
      expect((await t.api.delete(`/bots/${twin.id}`, member)).status).toBe(200);
      await setPolicy('role:nobody', 'role:nobody');
      expect((await t.api.post(`/users/${bot.id}/reactivate`, admin)).body).toEqual(refusal('Insufficient permission'));
      await setPolicy('role:members', 'role:members');
      expect((await t.api.post(`/users/${bot.id}/reactivate`, admin)).status).toBe(200);
      expect((await botRow(bot.id)).is_active).toBe(true);
    });
  });

  describe('POST /bots/{bot_id}/api_key/regenerate', () => {
    it('replaces the key; the old one stops working', async () => {
      const { member, moderator } = t.cast;
      const bot = await newBot(member);
      const res = await t.api.post(`/bots/${bot.id}/api_key/regenerate`, member);
      expect(res.status).toBe(200);
      expect(res.body.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(res.body.api_key).not.toBe(bot.api_key);
      expect((await t.api.get('/users/me', bot)).status).toBe(401);
      expect((await t.api.get('/users/me', { ...bot, api_key: res.body.api_key })).status).toBe(200);
      expect((await t.api.post(`/bots/${bot.id}/api_key/regenerate`, moderator)).body).toEqual(refusal('Insufficient permission'));
      expect((await t.api.post(`/bots/${bot.id}/api_key/regenerate`, { ...bot, api_key: res.body.api_key })).body).toEqual(
        refusal('This endpoint does not accept bot requests.'),
      );
    });
  });

  describe('GET /bots/{bot_id}/api_key', () => {
    it("gives the bot's current key to its owner and to administrators, and no one else", async () => {
      const { member, admin, moderator, guest } = t.cast;
      const bot = await newBot(member);
      expect((await t.api.get(`/bots/${bot.id}/api_key`, member)).body).toEqual({ result: 'success', msg: '', api_key: bot.api_key });
      expect((await t.api.get(`/bots/${bot.id}/api_key`, admin)).body.api_key).toBe(bot.api_key);
      const renewed = (await t.api.post(`/bots/${bot.id}/api_key/regenerate`, member)).body.api_key as string;
      expect((await t.api.get(`/bots/${bot.id}/api_key`, member)).body.api_key).toBe(renewed);
      expect((await t.api.get(`/bots/${bot.id}/api_key`, moderator)).body).toEqual(refusal('Insufficient permission'));
      expect((await t.api.get(`/bots/${bot.id}/api_key`, guest)).body).toEqual(refusal('Not allowed for guest users'));
      expect((await t.api.get(`/bots/${member.id}/api_key`, admin)).body).toEqual(refusal('No such bot'));
      expect((await t.api.get(`/bots/999999/api_key`, admin)).body).toEqual(refusal('No such bot'));
    });
  });

  describe('incoming webhook bots', () => {
    it('may send messages and nothing else', async () => {
      const { member } = t.cast;
      const hook = await newBot(member, { bot_type: 2 });
      const sent = await t.api.post('/messages', hook, { type: 'direct', to: [member.id], content: 'deployed' });
      expect(sent.status).toBe(200);
      for (const res of [
        await t.api.get('/users/me', hook),
        await t.api.get('/messages', hook, { anchor: 'newest', num_before: 1, num_after: 0 }),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(refusal('This API is not available to incoming webhook bots.', 'UNAUTHORIZED'));
        expect(res.headers['www-authenticate']).toBe('Basic realm="zulip"');
      }
      // A generic bot is not limited.
      expect((await t.api.get('/users/me', await newBot(member))).status).toBe(200);
    });
  });
});
