import request from 'supertest';
import { doCreateRealm } from '../src/actions/realms';
import { createUserInTx } from '../src/actions/users';
import { inTransaction } from '../src/db/transaction';
import { AuditEventType } from '../src/domain/audit';
import { Role } from '../src/domain/roles';
import { register, pending, startEventsServer, stopEventsServer } from './support/events';
import { eachDatabase } from './support/databases';
import type { TestServer } from './support/server';

/** DELETE /users/me: anyone leaves by themselves, except the last user and the last owner. */
eachDatabase('deactivating oneself', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
  });
  afterAll(() => stopEventsServer(t));

  it('refuses the only owner, with Zulip error code and fields, and changes nothing', async () => {
    const res = await t.api.delete('/users/me', t.cast.owner);
    expect([res.status, res.body]).toEqual([
      400,
      {
        result: 'error',
        msg: 'Cannot deactivate the only organization owner.',
        code: 'CANNOT_DEACTIVATE_LAST_USER',
        is_last_owner: true,
        entity: 'organization owner',
      },
    ]);
    const me = await t.api.get('/users/me', t.cast.owner);
    expect(me.status).toBe(200);
  });

  it('deactivates a member and their bots: the key stops at once, everyone hears, the audit names the user as actor', async () => {
    const made = await t.api.post('/users', t.cast.owner, {
      email: 'leaver@example.com',
      password: 'a-good-password',
      full_name: 'Leaver',
    });
    const key = await t.api.post('/fetch_api_key', null, { username: 'leaver@example.com', password: 'a-good-password' });
    const leaver = { ...(await t.ctx.db('users').where({ id: made.body.user_id }).first()), api_key: key.body.api_key };
    const bot = await inTransaction(t.ctx.db, (tx) =>
      createUserInTx(tx, null, {
        realmId: t.realmId,
        email: 'leaver-bot@example.com',
        fullName: 'Leaver Bot',
        role: Role.MEMBER,
        isBot: true,
        botType: 1,
        botOwnerId: leaver.id,
      }),
    );
    const watcher = await register(t, t.cast.admin, { event_types: ['realm_user'] });
    const mark = Number((await t.ctx.db('audit_log').max({ id: 'id' }).first())?.id ?? 0);

    const res = await request(t.app).delete('/api/v1/users/me').auth('leaver@example.com', leaver.api_key);
    expect([res.status, res.body.result]).toEqual([200, 'success']);
    const again = await request(t.app).get('/api/v1/users/me').auth('leaver@example.com', leaver.api_key);
    expect(again.status).toBe(401);

    const rows = await t.ctx.db('audit_log').where('id', '>', mark).orderBy('id');
    expect(rows.map((r) => [r.event_type, Number(r.acting_user_id), Number(r.modified_user_id)])).toEqual([
      [AuditEventType.USER_DEACTIVATED, leaver.id, leaver.id],
      [AuditEventType.USER_DEACTIVATED, leaver.id, bot.id],
    ]);
    const events = await pending(t, watcher);
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'realm_user',
          op: 'update',
          person: expect.objectContaining({ user_id: leaver.id, is_active: false }),
        }),
      ]),
    );
    const botRow = await t.ctx.db('users').where({ id: bot.id }).first();
    expect(Boolean(botRow!.is_active)).toBe(false);
  });

  it('lets an owner go when another owner remains, and every other role too', async () => {
    for (const role of ['admin', 'moderator', 'member', 'guest', 'bot'] as const) {
      const res = await t.api.delete('/users/me', t.cast[role]);
      expect([role, res.status]).toEqual([role, 200]);
    }
  });

  it('refuses the only active account of an organization (bots count)', async () => {
    const realmId = await doCreateRealm(t.ctx.db, { stringId: 'alone', name: 'Alone' });
    const alone = await inTransaction(t.ctx.db, (tx) =>
      createUserInTx(tx, null, { realmId, email: 'alone@example.com', fullName: 'Alone', role: Role.MEMBER }),
    );
    const res = await request(t.app).delete('/api/v1/users/me').set('Host', 'alone.chat.example').auth('alone@example.com', alone.api_key);
    expect([res.status, res.body]).toEqual([
      400,
      {
        result: 'error',
        msg: 'Cannot deactivate the only user.',
        code: 'CANNOT_DEACTIVATE_LAST_USER',
        is_last_owner: false,
        entity: 'user',
      },
    ]);
  });
});
