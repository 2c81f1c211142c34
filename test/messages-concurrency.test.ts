import pino from 'pino';
import request from 'supertest';
import { buildApp } from '../src/app';
import { eachDatabase } from './support/databases';
import { createChannel, createMembers, startTestServer, TestServer } from './support/server';

/** Many clients sending at once (several of them the same user) all succeed: no deadlock surfaces as a 500. */
eachDatabase('concurrent sends', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const crowd = await createMembers(t, 'busy', 30);
    await createChannel(t, 'busy', [t.cast.owner, t.cast.member, ...crowd]);
  });
  afterAll(() => t.close());

  it('32 simultaneous messages to one channel all land', async () => {
    const app = buildApp({ ctx: t.ctx, spec: t.spec, log: pino({ level: 'error' }) });
    const senders = [t.cast.owner, t.cast.member];
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, i) => {
        const u = senders[i % 2]!;
        return request(app)
          .post('/api/v1/messages')
          .auth(u.email, u.api_key)
          .type('form')
          .send({ type: 'channel', to: 'busy', topic: `t${i % 3}`, content: `message ${i}` });
      }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(32).fill(200));
    const count = await t.ctx.db('messages').count({ n: '*' }).first();
    expect(Number(count!.n)).toBe(32);
  });
});

eachDatabase('concurrent first contacts', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  it('8 simultaneous first DMs between two users make one conversation', async () => {
    const app = buildApp({ ctx: t.ctx, spec: t.spec, log: pino({ level: 'silent' }) });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => {
        const [from, to] = i % 2 ? [t.cast.member, t.cast.moderator] : [t.cast.moderator, t.cast.member];
        return request(app)
          .post('/api/v1/messages')
          .auth(from.email, from.api_key)
          .type('form')
          .send({ type: 'direct', to: JSON.stringify([to.id]), content: `hello ${i}` });
      }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(Number((await t.ctx.db('dm_groups').count({ n: '*' }).first())!.n)).toBe(1);
  });

  it('4 simultaneous subscribes that create the same channel make one channel', async () => {
    const app = buildApp({ ctx: t.ctx, spec: t.spec, log: pino({ level: 'silent' }) });
    const users = [t.cast.owner, t.cast.admin, t.cast.moderator, t.cast.member];
    const results = await Promise.all(
      users.map((u) =>
        request(app)
          .post('/api/v1/users/me/subscriptions')
          .auth(u.email, u.api_key)
          .type('form')
          .send({ subscriptions: JSON.stringify([{ name: 'racy' }]) }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await t.ctx.db('channels').where({ name: 'racy' }).count({ n: '*' }).first()).toEqual({ n: 1 });
    const rec = await t.ctx.db('channels').where({ name: 'racy' }).first('recipient_id');
    expect(
      Number((await t.ctx.db('subscriptions').where({ recipient_id: rec!.recipient_id, active: true }).count({ n: '*' }).first())!.n),
    ).toBe(4);
  });
});
