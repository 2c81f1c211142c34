import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';

eachDatabase('read after commit through the API', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  it('finds a message the moment its send has answered', async () => {
    await t.api.post('/users/me/subscriptions', t.cast.member, { subscriptions: JSON.stringify([{ name: 'general' }]) });
    for (let i = 0; i < 10; i++) {
      const sent = await t.api.post('/messages', t.cast.member, { type: 'stream', to: 'general', topic: 'now', content: `n${i}` });
      expect(sent.status).toBe(200);
      const read = await t.api.get(`/messages/${sent.body.id}`, t.cast.member);
      expect(read.body.message?.id).toBe(sent.body.id);
    }
  });
});
