import { doPresenceEnabledChanged } from '../src/actions/presence';
import type { UserRow } from '../src/queries/rows';
import { ManualClock } from './support/clock';
import { eachDatabase } from './support/databases';
import { pending, register, startEventsServer, stopEventsServer } from './support/events';
import { countQueries, createMembers, statementsOf, type TestServer } from './support/server';

eachDatabase('presence', (dialect) => {
  let t: TestServer;
  let clock: ManualClock;
  const now = () => Math.floor(clock.now() / 1000);
  const ping = (user: UserRow, fields: Record<string, unknown> = {}) =>
    t.api.post('/users/me/presence', user, { status: 'active', ...fields });
  const rowOf = async (user: UserRow) => {
    const r = await t.ctx.db('user_presence').where({ user_id: user.id }).first();
    return r
      ? {
          active: r.last_active_time === null ? null : Number(r.last_active_time),
          connected: r.last_connected_time === null ? null : Number(r.last_connected_time),
          updateId: Number(r.last_update_id),
        }
      : undefined;
  };
  const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
  /** Writes statements a piece of work issues (INSERT, UPDATE, DELETE, REPLACE). */
  const writesDuring = async (work: () => Promise<unknown>) => {
    const sqls: string[] = [];
    const on = (q: { sql: string }) => sqls.push(q.sql);
    t.ctx.db.on('query', on);
    try {
      await work();
    } finally {
      t.ctx.db.removeListener('query', on);
    }
    return sqls.flatMap(statementsOf).filter((s) => /^\s*(insert|update|delete|replace)\b/i.test(s));
  };

  beforeAll(async () => {
    clock = new ManualClock(1_800_000_000_000);
    ({ t } = await startEventsServer(dialect, { clock }));
  });
  afterAll(() => stopEventsServer(t));
  beforeEach(async () => {
    await t.ctx.db('user_presence').delete();
    await t.ctx.db('realms').where({ id: t.realmId }).update({ presence_disabled: false });
  });

  describe('POST /users/me/presence', () => {
    it('records the first report and answers in the legacy format keyed by email', async () => {
      const res = await ping(t.cast.member);
      expect(res.status).toBe(200);
      expect(await rowOf(t.cast.member)).toEqual({ active: now(), connected: now(), updateId: expect.any(Number) });
      expect(res.body.presences).toEqual({
        'member@example.com': {
          aggregated: { client: 'website', status: 'active', timestamp: now() },
          website: { client: 'website', status: 'active', timestamp: now(), pushable: false },
        },
      });
      expect(res.body.server_timestamp).toBe(clock.now() / 1000);
      expect(res.body.presence_last_update_id).toBe((await rowOf(t.cast.member))!.updateId);
    });

    it('an idle first report records the connection only; the modern format shows the join date for the activity', async () => {
      await ping(t.cast.admin, { status: 'idle' });
      expect(await rowOf(t.cast.admin)).toMatchObject({ active: null, connected: now() });
      const res = await ping(t.cast.member, { slim_presence: true });
      expect(res.body.presences[String(t.cast.admin.id)]).toEqual({ active_timestamp: t.cast.admin.date_joined, idle_timestamp: now() });
      expect(res.body.presences[String(t.cast.member.id)]).toEqual({ active_timestamp: now(), idle_timestamp: now() });
    });

    it('a ping within 55 seconds of the last write writes nothing; after that, one upsert with a new update id', async () => {
      await ping(t.cast.member);
      const first = (await rowOf(t.cast.member))!;
      clock.advance(55_000);
      expect(await writesDuring(() => ping(t.cast.member, { ping_only: true }))).toEqual([]);
      expect(await rowOf(t.cast.member)).toEqual(first);
      clock.advance(1_000);
      const writes = await writesDuring(() => ping(t.cast.member, { ping_only: true }));
      // The organization's sequence, then the user's row.
      expect(writes).toHaveLength(2);
      expect(writes[0]).toMatch(/presence_sequence/);
      expect(writes[1]).toMatch(/user_presence/);
      const second = (await rowOf(t.cast.member))!;
      expect(second).toEqual({ active: now(), connected: now(), updateId: expect.any(Number) });
      expect(second.updateId).toBeGreaterThan(first.updateId);
    });

    it('an idle report moves the connection but not the activity, and reads as idle in the legacy format', async () => {
      await ping(t.cast.member);
      const activeAt = now();
      clock.advance(120_000);
      const res = await ping(t.cast.member, { status: 'idle' });
      expect(await rowOf(t.cast.member)).toMatchObject({ active: activeAt, connected: now() });
      expect(res.body.presences['member@example.com'].aggregated).toEqual({ client: 'website', status: 'idle', timestamp: now() });
    });

    it('ping_only answers nothing but the envelope', async () => {
      const res = await ping(t.cast.member, { ping_only: true });
      expect(res.body).toEqual({ result: 'success', msg: '' });
      expect(await rowOf(t.cast.member)).toBeDefined();
    });

    it('last_update_id returns only the users changed since, in the modern format', async () => {
      await ping(t.cast.admin);
      const a = await ping(t.cast.member, { last_update_id: -1 });
      expect(Object.keys(a.body.presences).sort()).toEqual([String(t.cast.admin.id), String(t.cast.member.id)].sort());
      const since = a.body.presence_last_update_id as number;
      expect(since).toBe((await rowOf(t.cast.member))!.updateId);
      // Nothing changed: nobody, and the same id back.
      const b = await ping(t.cast.member, { last_update_id: since });
      expect(b.body.presences).toEqual({});
      expect(b.body.presence_last_update_id).toBe(since);
      await ping(t.cast.moderator);
      const c = await ping(t.cast.member, { last_update_id: since });
      expect(c.body.presences).toEqual({ [String(t.cast.moderator.id)]: { active_timestamp: now(), idle_timestamp: now() } });
      expect(c.body.presence_last_update_id).toBe((await rowOf(t.cast.moderator))!.updateId);
    });

    it('history_limit_days leaves out users not connected within it; 0 returns nobody', async () => {
      await ping(t.cast.admin);
      clock.advance(2 * 86_400_000);
      await ping(t.cast.member);
      const recent = await ping(t.cast.member, { slim_presence: true, history_limit_days: 1 });
      expect(Object.keys(recent.body.presences)).toEqual([String(t.cast.member.id)]);
      const both = await ping(t.cast.member, { slim_presence: true, history_limit_days: 3 });
      expect(Object.keys(both.body.presences).sort()).toEqual([String(t.cast.admin.id), String(t.cast.member.id)].sort());
      const none = await ping(t.cast.member, { slim_presence: true, history_limit_days: 0 });
      expect(none.body.presences).toEqual({});
      expect(none.body.presence_last_update_id).toBe(-1);
      // The default is 14 days.
      clock.advance(13 * 86_400_000);
      const fallback = await ping(t.cast.member, { slim_presence: true });
      expect(Object.keys(fallback.body.presences)).toEqual([String(t.cast.member.id)]);
    });

    it('refuses bots, unknown statuses and a missing status, writing nothing', async () => {
      expect((await ping(t.cast.bot)).body).toEqual(refusal('This endpoint does not accept bot requests.'));
      expect((await ping(t.cast.member, { status: 'away' })).body).toEqual(refusal('Invalid status: away'));
      const missing = await t.api.post('/users/me/presence', t.cast.member, {});
      expect(missing.body).toEqual({
        result: 'error',
        msg: "Missing 'status' argument",
        code: 'REQUEST_VARIABLE_MISSING',
        var_name: 'status',
      });
      expect(await t.ctx.db('user_presence').count('* as n').first()).toEqual({ n: 0 });
    });

    it('deactivated users are left out', async () => {
      await t.ctx.db('user_presence').insert({
        user_id: t.cast.deactivated.id,
        realm_id: t.realmId,
        last_active_time: now(),
        last_connected_time: now(),
        last_update_id: 1,
      });
      const res = await ping(t.cast.member, { slim_presence: true });
      expect(Object.keys(res.body.presences)).toEqual([String(t.cast.member.id)]);
    });

    it('an organization with presence disabled shares none, but still records it', async () => {
      await ping(t.cast.admin);
      await t.ctx.db('realms').where({ id: t.realmId }).update({ presence_disabled: true });
      const res = await ping(t.cast.member, { last_update_id: -1 });
      expect(res.body).toMatchObject({ presences: {}, presence_last_update_id: -1 });
      expect(await rowOf(t.cast.member)).toBeDefined();
      const { state } = await register(t, t.cast.member, { fetch_event_types: ['realm', 'presence'] });
      expect(state).toMatchObject({ realm_presence_disabled: true, presences: {}, presence_last_update_id: -1 });
      await t.ctx.db('realms').where({ id: t.realmId }).update({ presence_disabled: false });
      expect((await register(t, t.cast.member, { fetch_event_types: ['realm'] })).state.realm_presence_disabled).toBe(false);
    });

    it('users who turned presence_enabled off are not recorded', async () => {
      await setPresenceEnabled(t.cast.moderator, false);
      try {
        const res = await ping(await reload(t.cast.moderator), { slim_presence: true });
        expect(res.status).toBe(200);
        expect(await rowOf(t.cast.moderator)).toBeUndefined();
        expect(res.body.presences).toEqual({});
      } finally {
        await setPresenceEnabled(t.cast.moderator, true);
      }
    });

    it('a limited guest sees only the users it may know', async () => {
      const [stranger] = await createMembers(t, 'stranger', 1);
      await ping(stranger!);
      await ping(t.cast.member);
      const membersGroup = Number((await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:members' }).first('id'))!.id);
      const before = (await t.ctx.db('realms').where({ id: t.realmId }).first('can_access_all_users_group'))!.can_access_all_users_group;
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: membersGroup });
      try {
        const guest = await ping(t.cast.guest, { slim_presence: true });
        expect(Object.keys(guest.body.presences).sort()).toEqual([String(t.cast.member.id), String(t.cast.guest.id)].sort());
        const member = await ping(t.cast.member, { slim_presence: true });
        expect(member.body.presences).toHaveProperty(String(stranger!.id));
        const one = await t.api.get(`/users/${stranger!.id}/presence`, t.cast.guest);
        expect(one.body).toEqual(refusal('No such user'));
      } finally {
        await t.ctx.db('realms').where({ id: t.realmId }).update({ can_access_all_users_group: before });
      }
    });
  });

  describe('presence events', () => {
    it('go to the others on a first report and on coming back online, not on every ping', async () => {
      const legacy = await register(t, t.cast.owner, { event_types: ['presence'] });
      const slim = await register(t, t.cast.admin, { event_types: ['presence'], slim_presence: true });
      const modern = await register(t, t.cast.moderator, {
        event_types: ['presence'],
        client_capabilities: { simplified_presence_events: true },
      });
      await ping(t.cast.member);
      const at = now();
      const website = { client: 'website', status: 'active', timestamp: at, pushable: false };
      expect(await pending(t, legacy)).toEqual([
        {
          id: 0,
          type: 'presence',
          user_id: t.cast.member.id,
          email: 'member@example.com',
          server_timestamp: clock.now() / 1000,
          presence: { website },
        },
      ]);
      expect(await pending(t, slim)).toEqual([
        { id: 0, type: 'presence', user_id: t.cast.member.id, server_timestamp: clock.now() / 1000, presence: { website } },
      ]);
      expect(await pending(t, modern)).toEqual([
        { id: 0, type: 'presence', presences: { [String(t.cast.member.id)]: { active_timestamp: at, idle_timestamp: at } } },
      ]);
      // Regular pings, active or idle: no event.
      clock.advance(60_000);
      await ping(t.cast.member);
      clock.advance(60_000);
      await ping(t.cast.member, { status: 'idle' });
      clock.advance(60_000);
      await ping(t.cast.member, { status: 'idle' });
      expect(await pending(t, legacy)).toEqual([]);
      // Active again after more than 70 s without activity: back online.
      await ping(t.cast.member);
      expect(await pending(t, legacy)).toMatchObject([
        { type: 'presence', user_id: t.cast.member.id, presence: { website: { status: 'active', timestamp: now() } } },
      ]);
    });

    it('none in an organization with presence disabled', async () => {
      const owner = await register(t, t.cast.owner, { event_types: ['presence', 'heartbeat'] });
      await t.ctx.db('realms').where({ id: t.realmId }).update({ presence_disabled: true });
      await ping(t.cast.member);
      await t.ctx.db('realms').where({ id: t.realmId }).update({ presence_disabled: false });
      await ping(t.cast.admin);
      expect((await pending(t, owner)).map((e) => e.user_id)).toEqual([t.cast.admin.id]);
    });

    it('turning presence_enabled off shows the user offline to everyone at once; on, active', async () => {
      await ping(t.cast.member);
      const owner = await register(t, t.cast.owner, { event_types: ['presence'] });
      clock.advance(10_000);
      await doPresenceEnabledChanged(t.ctx, t.cast.member, false);
      const offlineAt = now() - 260;
      expect(await rowOf(t.cast.member)).toMatchObject({ active: null, connected: offlineAt });
      const [event] = await pending(t, owner);
      expect(event!.presence.website).toEqual({ client: 'website', status: 'idle', timestamp: offlineAt, pushable: false });
      const seen = await t.api.get(`/users/${t.cast.member.id}/presence`, t.cast.owner);
      expect(seen.body.presence.aggregated).toEqual({ status: 'offline', timestamp: offlineAt });
      await doPresenceEnabledChanged(t.ctx, t.cast.member, true);
      expect(await rowOf(t.cast.member)).toMatchObject({ active: now(), connected: now() });
      expect((await pending(t, owner))[0]!.presence.website.status).toBe('active');
    });
  });

  describe('GET /users/{user_id_or_email}/presence', () => {
    it('by ID or email, modern and legacy keys together (feature level 497): active, then offline after 140 seconds', async () => {
      await ping(t.cast.member);
      const at = now();
      for (const key of [String(t.cast.member.id), 'member@example.com', 'MEMBER@example.com']) {
        const res = await t.api.get(`/users/${encodeURIComponent(key)}/presence`, t.cast.bot);
        expect(res.body).toEqual({
          result: 'success',
          msg: '',
          presence: {
            active_timestamp: at,
            idle_timestamp: at,
            aggregated: { status: 'active', timestamp: at },
            website: { status: 'active', timestamp: at },
          },
          server_timestamp: clock.now() / 1000,
        });
      }
      clock.advance(141_500);
      const later = await t.api.get(`/users/${t.cast.member.id}/presence`, t.cast.owner);
      expect(later.body).toMatchObject({ server_timestamp: clock.now() / 1000 });
      expect(later.body.presence).toEqual({
        active_timestamp: at,
        idle_timestamp: at,
        aggregated: { status: 'offline', timestamp: at },
        website: { status: 'active', timestamp: at },
      });
    });

    it('gives the modern times as stored, the date joined for one never reported, and the legacy status from them', async () => {
      // Only idle reports: never active, so active_timestamp is the date the user joined.
      await ping(t.cast.moderator, { status: 'idle' });
      const connected = now();
      const idle = await t.api.get(`/users/${t.cast.moderator.id}/presence`, t.cast.member);
      expect(idle.body.presence).toEqual({
        active_timestamp: t.cast.moderator.date_joined,
        idle_timestamp: connected,
        aggregated: { status: 'idle', timestamp: connected },
        website: { status: 'idle', timestamp: connected },
      });
      // Active, then only connected for a while: the two times part, the legacy status follows the connection.
      await ping(t.cast.member);
      const active = now();
      clock.advance(100_000);
      await ping(t.cast.member, { status: 'idle' });
      const res = await t.api.get(`/users/${t.cast.member.id}/presence`, t.cast.owner);
      expect(res.body.presence).toEqual({
        active_timestamp: active,
        idle_timestamp: now(),
        aggregated: { status: 'idle', timestamp: now() },
        website: { status: 'idle', timestamp: now() },
      });
    });

    it.each([
      ['an unknown ID', () => '999999', 'No such user'],
      ['an unknown email', () => 'nobody@example.com', 'No such user'],
      ['a deactivated user', () => String(t.cast.deactivated.id), 'No such user'],
      ['a bot', () => String(t.cast.bot.id), 'Presence is not supported for bot users.'],
      ['a user who never reported', () => 'admin@example.com', 'No presence data for admin@example.com'],
    ])('refuses %s', async (_what, key, msg) => {
      expect((await t.api.get(`/users/${key()}/presence`, t.cast.member)).body).toEqual(refusal(msg));
    });
  });

  describe('GET /realm/presence', () => {
    it('is the legacy format of everyone connected in 14 days, and reports nothing for the caller', async () => {
      await ping(t.cast.member);
      const res = await t.api.get('/realm/presence', t.cast.owner);
      expect(res.body).toEqual({
        result: 'success',
        msg: '',
        server_timestamp: clock.now() / 1000,
        presences: {
          'member@example.com': {
            aggregated: { client: 'website', status: 'active', timestamp: now() },
            website: { client: 'website', status: 'active', timestamp: now(), pushable: false },
          },
        },
      });
      expect(await rowOf(t.cast.owner)).toBeUndefined();
    });
  });

  describe('POST /register', () => {
    it('carries presences, presence_last_update_id and server_timestamp under `presence`', async () => {
      await ping(t.cast.member);
      const slim = await register(t, t.cast.owner, { fetch_event_types: ['presence'], slim_presence: true });
      expect(slim.state.presences).toEqual({ [String(t.cast.member.id)]: { active_timestamp: now(), idle_timestamp: now() } });
      expect(slim.state.presence_last_update_id).toBe((await rowOf(t.cast.member))!.updateId);
      expect(slim.state.server_timestamp).toBe(clock.now() / 1000);
      expect(slim.state).not.toHaveProperty('realm_users');
      const legacy = await register(t, t.cast.owner, { fetch_event_types: ['presence'] });
      expect(Object.keys(legacy.state.presences)).toEqual(['member@example.com']);
      const limited = await register(t, t.cast.owner, { fetch_event_types: ['presence'], presence_history_limit_days: 0 });
      expect(limited.state.presences).toEqual({});
      const other = await register(t, t.cast.owner, { fetch_event_types: ['message'] });
      expect(other.state).not.toHaveProperty('presences');
    });
  });

  describe('cost', () => {
    it('a ping within the window is one read (authentication from the caller cache)', async () => {
      await ping(t.cast.member);
      const { queries } = await countQueries(t, () => ping(t.cast.member, { ping_only: true }));
      expect(queries).toBe(1);
    });
  });

  async function setPresenceEnabled(user: UserRow, enabled: boolean) {
    const row = await t.ctx.db('users').where({ id: user.id }).first('settings');
    await t.ctx
      .db('users')
      .where({ id: user.id })
      .update({ settings: JSON.stringify({ ...JSON.parse(row!.settings), presence_enabled: enabled }) });
  }
  async function reload(user: UserRow): Promise<UserRow> {
    return { ...user, settings: (await t.ctx.db('users').where({ id: user.id }).first('settings'))!.settings };
  }
});
