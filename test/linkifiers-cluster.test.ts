import { until } from './support/clock';
import { eachDatabase } from './support/databases';
import { redisAvailable } from './support/redis';
import { twoNodesOnRedis } from './support/two-nodes';

const haveRedis = redisAvailable();

/**
 * Two nodes on the Redis bus, each with its own caches and database handle:
 * a linkifier change on one drops the other's compiled linkifiers (the
 * `linkifiers` invalidation crosses the bus), and leaves the other's callers
 * and users cached.
 */
eachDatabase('linkifier invalidations across nodes', (dialect) => {
  if (!haveRedis) {
    it.skip('needs redis-server', () => undefined);
    return;
  }
  const nodes = twoNodesOnRedis(dialect, `test:linkifiers:${dialect}`);

  it("a change on node a drops node b's compiled linkifiers, and not its callers or users", async () => {
    const { t, cachesB } = nodes;
    const { member, admin } = t.cast;
    expect(await cachesB.linkifiers.get(t.realmId)).toEqual([]);
    expect(await cachesB.callers.get(member.api_key)).toBeDefined();
    await cachesB.users.getMany([member.id]);
    const held = () => ({
      linkifiers: cachesB.linkifiers.cache.peek(t.realmId) !== undefined,
      caller: cachesB.callers.cache.peek(member.api_key) !== undefined,
      user: cachesB.users.cache.peek(member.id) !== undefined,
    });
    expect(held()).toEqual({ linkifiers: true, caller: true, user: true });

    const res = await t.api.post('/realm/filters', admin, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://x.example/{id}' });
    expect(res.status).toBe(200);
    await until(() => !held().linkifiers, "node b drops the organization's linkifiers");
    expect(held()).toEqual({ linkifiers: false, caller: true, user: true });
    expect((await cachesB.linkifiers.get(t.realmId)).map((l) => l.id)).toEqual([res.body.id]);
  });
});
