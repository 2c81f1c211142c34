import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { decryptWithPushKey, registerDevice, registration, TestRelay } from './support/push-relay';
import { startTestServer, type TestServer } from './support/server';

/**
 * Notifications a phone shows are removed when their messages are read,
 * deleted, or read because their sender was muted (Zulip's removal payload,
 * feature level 413); messages no phone heard of send nothing.
 */
eachDatabase('push notification removals', (dialect) => {
  let t: TestServer;
  let relay: TestRelay;
  let pushKey: string;

  beforeAll(async () => {
    relay = await new TestRelay().start();
    t = await startTestServer(dialect, undefined, { config: { pushRelayUrl: relay.url, pushRelayBackoffMs: 20, pushRelayMaxAttempts: 3 } });
    const fields = registration(await registerDevice(t.api, t.cast.member), { keySeed: 41 });
    pushKey = fields.push_key;
    expect((await t.api.post('/mobile_push/register', t.cast.member, fields)).status).toBe(200);
    await t.ctx.push!.whenIdle();
  });
  afterAll(async () => {
    await t.close();
    await relay.close();
  });

  /** What the member's phone received since `before` (relay requests), opened. */
  function received(before: number): Array<Record<string, any>> {
    return relay
      .delivered()
      .slice(before)
      .flatMap((r) => (r.body.push_requests as Array<{ encrypted_data: string }>).map((p) => decryptWithPushKey(p.encrypted_data, pushKey)))
      .filter((p): p is Record<string, any> => p !== null);
  }

  async function dm(from: UserRow, content = 'hello'): Promise<number> {
    const res = await t.api.post('/messages', from, { type: 'direct', to: JSON.stringify([t.cast.member.id]), content });
    expect(res.status).toBe(200);
    await t.ctx.push!.whenIdle();
    return res.body.id as number;
  }

  async function after(action: () => Promise<unknown>): Promise<Array<Record<string, any>>> {
    const before = relay.delivered().length;
    await action();
    await t.ctx.push!.whenIdle();
    return received(before);
  }

  const markRead = (ids: number[]) =>
    t.api
      .post('/messages/flags', t.cast.member, { messages: JSON.stringify(ids), op: 'add', flag: 'read' })
      .then((r) => expect(r.status).toBe(200));

  it('reading a notified message removes its notification, once', async () => {
    const id = await dm(t.cast.owner);
    expect(received(0).some((p) => p.type === 'message' && p.message_id === id)).toBe(true);
    const removals = await after(() => markRead([id]));
    expect(removals).toEqual([
      {
        type: 'remove',
        message_ids: [id],
        realm_name: 'Test Organization',
        realm_url: t.ctx.config.externalUrl,
        user_id: t.cast.member.id,
      },
    ]);
    // Marked read again (or unread and read): nothing is shown, nothing is removed.
    expect(await after(() => markRead([id]))).toEqual([]);
  });

  it('reading a message no phone heard of sends nothing', async () => {
    // The member's own message: never notified.
    const res = await t.api.post('/messages', t.cast.member, { type: 'direct', to: JSON.stringify([t.cast.owner.id]), content: 'mine' });
    expect(await after(() => markRead([res.body.id]))).toEqual([]);
  });

  it('marking everything read removes every shown notification in one removal', async () => {
    const a = await dm(t.cast.owner, 'one');
    const b = await dm(t.cast.admin, 'two');
    const removals = await after(() => t.api.post('/mark_all_as_read', t.cast.member).then((r) => expect(r.status).toBe(200)));
    expect(removals.map((p) => [p.type, p.message_ids])).toEqual([['remove', [a, b]]]);
  });

  it('deleting a notified message removes its notification', async () => {
    const id = await dm(t.cast.owner, 'regret');
    const removals = await after(() => t.api.delete(`/messages/${id}`, t.cast.owner).then((r) => expect(r.status).toBe(200)));
    expect(removals.map((p) => [p.type, p.message_ids])).toEqual([['remove', [id]]]);
    expect(await t.ctx.db('active_push_notifications').where({ message_id: id })).toEqual([]);
  });

  it('muting the sender reads their messages and removes what the phone showed of them', async () => {
    const id = await dm(t.cast.moderator, 'noise');
    const removals = await after(() =>
      t.api.post(`/users/me/muted_users/${t.cast.moderator.id}`, t.cast.member).then((r) => expect(r.status).toBe(200)),
    );
    expect(removals.map((p) => [p.type, p.message_ids])).toEqual([['remove', [id]]]);
    await t.api.delete(`/users/me/muted_users/${t.cast.moderator.id}`, t.cast.member);
  });
});
