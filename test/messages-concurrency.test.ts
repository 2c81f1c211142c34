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
        return request(app).post('/api/v1/messages').auth(u.email, u.api_key).type('form')
          .send({ type: 'channel', to: 'busy', topic: `t${i % 3}`, content: `message ${i}` });
      }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(32).fill(200));
    const count = await t.ctx.db('messages').count({ n: '*' }).first();
    expect(Number(count!.n)).toBe(32);
  });
});
