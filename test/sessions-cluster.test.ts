import request from 'supertest';
import { hashSessionKey } from '../src/domain/sessions';
import { authenticateSession } from '../src/http/auth';
import { until } from './support/clock';
import { eachDatabase } from './support/databases';
import { redisAvailable } from './support/redis';
import { CAST_PASSWORD } from './support/server';
import { twoNodesOnRedis } from './support/two-nodes';

const haveRedis = redisAvailable();

/**
 * Two nodes on the Redis bus, each with its own caches and database handle:
 * a browser session ended on node a (revoked, logged out) is dropped from
 * node b's session cache by the `user` invalidation its deletion declares,
 * so node b refuses it from then on (ADR 0053).
 */
eachDatabase('browser sessions across nodes', (dialect) => {
  if (!haveRedis) {
    it.skip('needs redis-server', () => undefined);
    return;
  }
  const nodes = twoNodesOnRedis(dialect, `test:sessions:${dialect}`);

  async function logIn(): Promise<{ cookie: string; csrf: string; hash: string }> {
    const res = await request(nodes.t.app)
      .post('/login/')
      .type('form')
      .send({ username: nodes.t.cast.member.delivery_email, password: CAST_PASSWORD });
    const cookies = res.headers['set-cookie'] as unknown as string[];
    const value = (name: string) =>
      cookies
        .find((c) => c.startsWith(`${name}=`))!
        .slice(name.length + 1)
        .split(';')[0]!;
    return {
      cookie: `sessionid=${value('sessionid')}; csrftoken=${value('csrftoken')}`,
      csrf: value('csrftoken'),
      hash: hashSessionKey(value('sessionid')),
    };
  }
  const onNodeB = (cookie: string) => authenticateSession(nodes.dbB, nodes.cachesB, cookie, undefined, nodes.t.ctx.config.externalUrl);

  it("a session revoked on node a is dropped from node b's cache and refused there", async () => {
    const doomed = await logIn();
    const other = await logIn();
    expect((await onNodeB(doomed.cookie)).caller.user.id).toBe(nodes.t.cast.member.id);
    expect(nodes.cachesB.sessions.cache.peek(doomed.hash)).toBeDefined();
    const list = await request(nodes.t.app).get('/json/users/me/sessions').set('Cookie', doomed.cookie);
    const id = (list.body.sessions as Array<{ id: number; current: boolean }>).find((s) => s.current)!.id;
    const revoked = await request(nodes.t.app)
      .delete(`/json/users/me/sessions/${id}`)
      .set('Cookie', other.cookie)
      .set('X-CSRFToken', other.csrf);
    expect(revoked.status).toBe(200);
    await until(() => nodes.cachesB.sessions.cache.peek(doomed.hash) === undefined, 'node b drops the revoked session');
    await expect(onNodeB(doomed.cookie)).rejects.toMatchObject({ status: 401 });
    expect((await onNodeB(other.cookie)).caller.user.id).toBe(nodes.t.cast.member.id);
  });
});
