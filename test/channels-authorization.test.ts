import { eachDatabase } from './support/databases';
import { ApiResponse, CastName, createChannel, startTestServer, TestServer } from './support/server';

/**
 * Who may do what with channels, subscriptions and invitation links, with
 * the organization's default settings. A role that can do more than Zulip
 * allows fails here; a refusal must also leave the database unchanged.
 */
const ROLES: CastName[] = ['owner', 'admin', 'moderator', 'member', 'guest', 'bot', 'deactivated'];

type Refusal = { status: number; msg: string; code: string };
type Outcome = 'ok' | Refusal;
const refusal = (msg: string, code = 'BAD_REQUEST', status = 400): Refusal => ({ status, msg, code });
const deactivated = refusal('Account is deactivated', 'UNAUTHORIZED', 401);
const noGuests = refusal('Not allowed for guest users');
const notAdmin = refusal('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
const insufficient = refusal('Insufficient permission');
const noAccess = refusal('Unable to access channel (secret).');
const TABLE: Record<string, Record<CastName, Outcome>> = {
  'create a public channel': { owner: 'ok', admin: 'ok', moderator: 'ok', member: 'ok', guest: noGuests, bot: 'ok', deactivated },
  'create a private channel': { owner: 'ok', admin: 'ok', moderator: 'ok', member: 'ok', guest: noGuests, bot: 'ok', deactivated },
  'create a default channel': {
    owner: 'ok',
    admin: 'ok',
    moderator: notAdmin,
    member: notAdmin,
    guest: noGuests,
    bot: notAdmin,
    deactivated,
  },
  'subscribe someone else to a public channel': {
    owner: 'ok',
    admin: 'ok',
    moderator: 'ok',
    member: 'ok',
    guest: insufficient,
    bot: 'ok',
    deactivated,
  },
  'join a private channel uninvited': {
    owner: insufficient,
    admin: insufficient,
    moderator: noAccess,
    member: noAccess,
    guest: noAccess,
    bot: noAccess,
    deactivated,
  },
  'unsubscribe someone else': {
    owner: 'ok',
    admin: 'ok',
    moderator: insufficient,
    member: insufficient,
    guest: insufficient,
    bot: insufficient,
    deactivated,
  },
  'create an invitation link': {
    owner: 'ok',
    admin: 'ok',
    moderator: insufficient,
    member: insufficient,
    guest: insufficient,
    bot: insufficient,
    deactivated,
  },
  'invite an administrator': {
    owner: 'ok',
    admin: 'ok',
    moderator: insufficient,
    member: insufficient,
    guest: insufficient,
    bot: insufficient,
    deactivated,
  },
  'pin a channel one is subscribed to': { owner: 'ok', admin: 'ok', moderator: 'ok', member: 'ok', guest: 'ok', bot: 'ok', deactivated },
};

eachDatabase('channel authorization table', (dialect) => {
  let t: TestServer;
  let n = 0;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    await createChannel(
      t,
      'lounge',
      ROLES.map((r) => t.cast[r]),
    );
    await createChannel(t, 'secret', [], { inviteOnly: true });
  });
  afterAll(() => t.close());

  const snapshot = async () => ({
    channels: await t.ctx.db('channels').orderBy('id').select('id', 'name'),
    subscriptions: await t.ctx.db('subscriptions').orderBy('id').select('user_id', 'recipient_id', 'active', 'pin_to_top'),
    invites: await t.ctx.db('multiuse_invites').count({ n: '*' }).first(),
  });

  const lounge = () => t.ctx.db('channels').where({ name: 'lounge' }).first('id', 'recipient_id');
  /** A user's subscription to a channel, as the database holds it (undefined: none). */
  const subscription = async (userId: number, recipientId: number) => {
    const row = await t.ctx.db('subscriptions').where({ user_id: userId, recipient_id: recipientId }).first('active', 'pin_to_top');
    return row && { active: Boolean(row.active), pin_to_top: Boolean(row.pin_to_top) };
  };
  /** Sets a user's lounge subscription (test setup; SQLite has no UPDATE … JOIN). */
  const setLounge = async (userId: number, values: { active?: boolean; pin_to_top?: boolean }) => {
    await t.ctx
      .db('subscriptions')
      .where({ user_id: userId, recipient_id: (await lounge())!.recipient_id })
      .update(values);
  };
  /** The channel an allowed create made: its privacy, default flag and creator's subscription. */
  const createdChannel = async (name: string, creatorId: number) => {
    const row = await t.ctx.db('channels').where({ name }).first('recipient_id', 'invite_only', 'is_default');
    expect(row).toBeDefined();
    return {
      invite_only: Boolean(row!.invite_only),
      is_default: Boolean(row!.is_default),
      creator: await subscription(creatorId, row!.recipient_id!),
    };
  };
  /** The invitation link the response names, as stored. */
  const storedInvite = async (res: ApiResponse, referrerId: number) => {
    const key = /\/join\/([a-z0-9]+)\/$/.exec(res.body.invite_link)?.[1];
    const row = await t.ctx
      .db('multiuse_invites')
      .where({ link_key: key ?? '' })
      .first('referred_by_id', 'invited_as', 'revoked');
    expect(row).toBeDefined();
    expect(row!.referred_by_id).toBe(referrerId);
    return { invited_as: row!.invited_as, revoked: Boolean(row!.revoked) };
  };

  /** Makes the request as `role`; `effect` then checks what an allowed request did. */
  const act = async (what: string, role: CastName): Promise<{ res: ApiResponse; effect: () => Promise<void> }> => {
    const u = t.cast[role];
    const name = `room-${role}-${n++}`;
    const other = role === 'member' ? t.cast.moderator : t.cast.member;
    switch (what) {
      case 'create a public channel': {
        const res = await t.api.post('/channels/create', u, { name, subscribers: [u.id] });
        return {
          res,
          effect: async () =>
            expect(await createdChannel(name, u.id)).toEqual({
              invite_only: false,
              is_default: false,
              creator: { active: true, pin_to_top: false },
            }),
        };
      }
      case 'create a private channel': {
        const res = await t.api.post('/channels/create', u, { name, subscribers: [u.id], invite_only: true });
        return {
          res,
          effect: async () =>
            expect(await createdChannel(name, u.id)).toEqual({
              invite_only: true,
              is_default: false,
              creator: { active: true, pin_to_top: false },
            }),
        };
      }
      case 'create a default channel': {
        const res = await t.api.post('/channels/create', u, { name, subscribers: [u.id], is_default_stream: true });
        return {
          res,
          effect: async () =>
            expect(await createdChannel(name, u.id)).toEqual({
              invite_only: false,
              is_default: true,
              creator: { active: true, pin_to_top: false },
            }),
        };
      }
      case 'subscribe someone else to a public channel': {
        await setLounge(other.id, { active: false });
        const res = await t.api.post('/users/me/subscriptions', u, { subscriptions: [{ name: 'lounge' }], principals: [other.id] });
        return {
          res,
          effect: async () => {
            expect(res.body.subscribed).toEqual({ [String(other.id)]: ['lounge'] });
            expect((await subscription(other.id, (await lounge())!.recipient_id!))?.active).toBe(true);
          },
        };
      }
      case 'join a private channel uninvited': {
        const res = await t.api.post('/users/me/subscriptions', u, { subscriptions: [{ name: 'secret' }] });
        return { res, effect: async () => undefined }; // nobody may: no 'ok' cell
      }
      case 'unsubscribe someone else': {
        await setLounge(other.id, { active: true });
        const res = await t.api.delete('/users/me/subscriptions', u, { subscriptions: ['lounge'], principals: [other.id] });
        return {
          res,
          effect: async () => {
            expect(res.body).toMatchObject({ removed: ['lounge'], not_removed: [] });
            expect((await subscription(other.id, (await lounge())!.recipient_id!))?.active).toBe(false);
            expect((await subscription(u.id, (await lounge())!.recipient_id!))?.active).toBe(true);
          },
        };
      }
      case 'create an invitation link': {
        const res = await t.api.post('/invites/multiuse', u, {});
        return { res, effect: async () => expect(await storedInvite(res, u.id)).toEqual({ invited_as: 400, revoked: false }) };
      }
      case 'invite an administrator': {
        const res = await t.api.post('/invites/multiuse', u, { invite_as: 200 });
        return { res, effect: async () => expect(await storedInvite(res, u.id)).toEqual({ invited_as: 200, revoked: false }) };
      }
      case 'pin a channel one is subscribed to': {
        await setLounge(u.id, { active: true, pin_to_top: false });
        const res = await t.api.patch(`/users/me/subscriptions/${(await lounge())!.id}`, u, { property: 'pin_to_top', value: true });
        return {
          res,
          effect: async () => expect(await subscription(u.id, (await lounge())!.recipient_id!)).toEqual({ active: true, pin_to_top: true }),
        };
      }
    }
    throw new Error(what);
  };

  for (const [what, byRole] of Object.entries(TABLE)) {
    describe(what, () => {
      it.each(ROLES)('as %s', async (role) => {
        const expected = byRole[role];
        if (expected === 'ok') {
          const { res, effect } = await act(what, role);
          expect([res.status, res.body.result, res.body.msg]).toEqual([200, 'success', '']);
          await effect();
        } else {
          const { res } = await act(what, role);
          const before = await snapshot();
          expect([res.status, res.body]).toEqual([expected.status, { result: 'error', msg: expected.msg, code: expected.code }]);
          // Repeat after the snapshot: a refused request changes nothing.
          await act(what, role);
          expect(await snapshot()).toEqual(before);
        }
      });
    });
  }
});
