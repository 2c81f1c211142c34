import {
  doSoftActivateUsers,
  doSoftDeactivateInactive,
  doSoftDeactivateUsers,
  doFlushVisits,
  doDueSecondPasses,
} from '../src/actions/soft-deactivation';
import { sendMessageInTx } from '../src/actions/messages';
import { inTransaction } from '../src/db/transaction';
import { loadCaller } from '../src/access/viewer';
import { getChannelForSending } from '../src/queries/channels';
import { getRealmById } from '../src/queries/realms';
import type { UserRow } from '../src/queries/rows';
import { eachDatabase } from './support/databases';
import { sendDirect, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import { createChannel, type TestServer } from './support/server';
import { captureEvents, freshUser } from './users-fixtures';

/**
 * Soft deactivation (ADR 0058). The invariant: an idle user, once they make
 * any request, has exactly the rows (and flags) of a twin who never went
 * idle. A and B below are such twins: same subscriptions, settings and
 * history; only B goes idle.
 */
eachDatabase('soft deactivation', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
  });
  afterAll(async () => {
    await stopEventsServer(t);
  });

  const rowsOf = async (userId: number) =>
    (await t.ctx.db('user_messages').where({ user_id: userId }).orderBy('message_id').select('message_id', 'flags')).map((r) => ({
      id: Number(r.message_id),
      flags: Number(r.flags),
    }));
  const idleBit = async (userId: number) =>
    Boolean((await t.ctx.db('users').where({ id: userId }).first('long_term_idle'))!.long_term_idle);
  const subscribeAs = async (actor: UserRow, name: string, users: UserRow[]) => {
    const res = await t.api.post('/users/me/subscriptions', actor, {
      subscriptions: JSON.stringify([{ name }]),
      principals: JSON.stringify(users.map((u) => u.id)),
    });
    expect(res.status).toBe(200);
  };
  const unsubscribeAs = async (actor: UserRow, name: string, users: UserRow[]) => {
    const res = await t.api.delete('/users/me/subscriptions', actor, {
      subscriptions: JSON.stringify([name]),
      principals: JSON.stringify(users.map((u) => u.id)),
    });
    expect(res.status).toBe(200);
  };
  /** What a user's client sees: message ids and flags of a narrow, and the unread counts. */
  const view = async (user: UserRow, channelName: string) => {
    const page = async (narrow: unknown[]) => {
      const res = await t.api.get('/messages', user, { anchor: 'newest', num_before: 1000, num_after: 0, narrow: JSON.stringify(narrow) });
      expect(res.status).toBe(200);
      return (res.body.messages as Array<{ id: number; flags: string[] }>).map((m) => ({ id: m.id, flags: [...m.flags].sort() }));
    };
    const reg = await t.api.post('/register', user, { fetch_event_types: JSON.stringify(['message', 'update_message_flags']) });
    expect(reg.status).toBe(200);
    const unread = reg.body.unread_msgs as Record<string, any>;
    return {
      all: await page([]),
      channel: await page([{ operator: 'channel', operand: channelName }]),
      unread: await page([{ operator: 'is', operand: 'unread' }]),
      mentioned: await page([{ operator: 'is', operand: 'mentioned' }]),
      unreadCounts: {
        count: unread.count,
        streams: unread.streams,
        huddles: unread.huddles,
        mentions: [...(unread.mentions as number[])].sort((a, b) => a - b),
      },
    };
  };

  it('a returning idle user sees exactly what a never-idle twin sees, with fewer rows while idle', async () => {
    const { owner, admin, member } = t.cast;
    const a = await freshUser(t, { name: 'Twin Ay' });
    const b = await freshUser(t, { name: 'Twin Bee' });
    const twins = [a, b];
    const main = await createChannel(t, 'twins-main', [owner, admin, member, ...twins]);
    await createChannel(t, 'twins-private', [owner, ...twins], { inviteOnly: true });
    await createChannel(t, 'twins-leave', [owner, ...twins]);
    const pushed = await createChannel(t, 'twins-push', [owner, ...twins]);
    const protectedChannel = await createChannel(t, 'twins-protected', [owner, ...twins], {
      inviteOnly: true,
      historyPublicToSubscribers: false,
    });
    // Same settings for both, before B goes idle: an alert word, a muted sender, channel push on
    // one channel, a followed topic, and a message of each in a topic (topic participants).
    for (const u of twins) {
      expect((await t.api.post('/users/me/alert_words', u, { alert_words: JSON.stringify(['zebra']) })).status).toBe(200);
      expect((await t.api.post(`/users/me/muted_users/${member.id}`, u)).status).toBe(200);
      expect(
        (
          await t.api.post('/users/me/subscriptions/properties', u, {
            subscription_data: JSON.stringify([{ stream_id: pushed.id, property: 'push_notifications', value: true }]),
          })
        ).status,
      ).toBe(200);
      expect((await t.api.post('/user_topics', u, { stream_id: main.id, topic: 'followed', visibility_policy: 3 })).status).toBe(200);
      await sendToChannel(t, u, 'twins-main', 'talk', `hello from ${u.full_name}`);
    }
    expect(await doSoftDeactivateUsers(t.ctx, [b.id])).toBe(1);
    expect(await idleBit(b.id)).toBe(true);

    const plain: number[] = [];
    plain.push(await sendToChannel(t, owner, 'twins-main', 'news', 'plain one'));
    plain.push(await sendToChannel(t, owner, 'twins-main', 'news', 'plain two'));
    const mentionBoth = await sendToChannel(t, owner, 'twins-main', 'news', `@**${a.full_name}** @**${b.full_name}** look`);
    const everyone = await sendToChannel(t, owner, 'twins-main', 'news', '@**all** meeting');
    const topicWildcard = await sendToChannel(t, owner, 'twins-main', 'talk', '@**topic** wrap up');
    const alert = await sendToChannel(t, owner, 'twins-main', 'news', 'a zebra escaped');
    const muted = await sendToChannel(t, member, 'twins-main', 'news', 'from the muted one');
    const followed = await sendToChannel(t, owner, 'twins-main', 'followed', 'in a followed topic');
    const push = await sendToChannel(t, owner, 'twins-push', 'p', 'push channel');
    const secret = await sendToChannel(t, owner, 'twins-private', 'p', 'private channel');
    const dm = await sendDirect(t, owner, twins, 'a direct message');
    // Subscription changes made by an administrator while B is idle.
    const beforeLeave = await sendToChannel(t, owner, 'twins-leave', 'l', 'before leaving');
    await unsubscribeAs(admin, 'twins-leave', twins);
    const whileAway = await sendToChannel(t, owner, 'twins-leave', 'l', 'while they are out');
    await subscribeAs(admin, 'twins-leave', twins);
    const back = await sendToChannel(t, owner, 'twins-leave', 'l', 'after coming back');
    await unsubscribeAs(admin, 'twins-leave', twins);
    await subscribeAs(admin, 'twins-leave', twins);
    const again = await sendToChannel(t, owner, 'twins-leave', 'l', 'after the second return');
    // Edited to mention them, and moved to a channel without shared history, while B is idle (in a
    // topic they do not follow: being mentioned in "news" made them follow that one). Both give B a row.
    const editedLater = await sendToChannel(t, owner, 'twins-main', 'quiet', 'plain at first');
    const edit = await t.api.patch(`/messages/${editedLater}`, owner, { content: `now @**${a.full_name}** and @**${b.full_name}**` });
    expect(edit.status).toBe(200);
    const movedLater = await sendToChannel(t, owner, 'twins-main', 'quiet', 'moving on');
    const move = await t.api.patch(`/messages/${movedLater}`, owner, {
      stream_id: protectedChannel.id,
      topic: 'moved',
      propagate_mode: 'change_one',
    });
    expect(move.status).toBe(200);
    // A message deleted while B is idle.
    const doomed = await sendToChannel(t, owner, 'twins-main', 'news', 'soon gone');
    expect((await t.api.delete(`/messages/${doomed}`, owner)).status).toBe(200);

    // While idle, B has rows only where the flags or notifications need one.
    const bIds = new Set((await rowsOf(b.id)).map((r) => r.id));
    for (const id of [mentionBoth, everyone, topicWildcard, alert, muted, followed, push, dm, editedLater, movedLater])
      expect(bIds.has(id)).toBe(true);
    for (const id of [...plain, secret, beforeLeave]) expect(bIds.has(id)).toBe(false);
    // A channel joined while idle keeps its rows (its settings are not looked at then).
    for (const id of [back, again]) expect(bIds.has(id)).toBe(true);
    expect(bIds.has(whileAway)).toBe(false);
    const aIds = new Set((await rowsOf(a.id)).map((r) => r.id));
    for (const id of [...plain, secret, beforeLeave, back, again]) expect(aIds.has(id)).toBe(true);

    // B's first request catches up; then both see the same.
    expect((await t.api.get('/users/me', b)).status).toBe(200);
    expect(await idleBit(b.id)).toBe(false);
    // Each twin also got direct messages of their own (Notification Bot's "you were subscribed"):
    // the same in number and flags, but not the same messages. The rest must be equal.
    const IS_PRIVATE = 2048;
    const ownDms = new Set(
      [...(await rowsOf(a.id)), ...(await rowsOf(b.id))].filter((r) => (r.flags & IS_PRIVATE) !== 0 && r.id !== dm).map((r) => r.id),
    );
    const shared = <T extends { id: number }>(rows: T[]) => rows.filter((r) => !ownDms.has(r.id));
    expect(shared(await rowsOf(b.id))).toEqual(shared(await rowsOf(a.id)));
    expect((await rowsOf(b.id)).length).toBe((await rowsOf(a.id)).length);
    const [seenByA, seenByB] = [await view(a, 'twins-main'), await view(b, 'twins-main')];
    for (const key of ['all', 'channel', 'unread', 'mentioned'] as const) expect(shared(seenByB[key])).toEqual(shared(seenByA[key]));
    expect(seenByB.unreadCounts).toEqual(seenByA.unreadCounts);
    expect(seenByA.unread.map((m) => m.id)).toEqual(expect.arrayContaining([...plain, secret, beforeLeave, back, again]));
    // Audit: one soft deactivation and one soft activation of B.
    const audit = await t.ctx
      .db('audit_log')
      .where({ modified_user_id: b.id })
      .whereIn('event_type', [120, 121])
      .orderBy('id')
      .pluck('event_type');
    expect(audit.map(Number)).toEqual([121, 120]);
  });

  it('a send to a channel of idle users writes rows only for the active and the kept, and the bus names only them', async () => {
    const { owner } = t.cast;
    const people = [];
    for (let i = 0; i < 12; i++) people.push(await freshUser(t));
    const idle = people.slice(0, 8);
    const active = people.slice(8);
    await createChannel(t, 'announce-idle', [owner, ...people]);
    expect(
      await doSoftDeactivateUsers(
        t.ctx,
        idle.map((u) => u.id),
      ),
    ).toBe(8);
    const { result: id, deliveries } = await captureEvents(t, () =>
      sendToChannel(t, owner, 'announce-idle', 'x', `hi @**${idle[0]!.full_name}**`),
    );
    const holders = (await t.ctx.db('user_messages').where({ message_id: id }).pluck('user_id')).map(Number).sort((x, y) => x - y);
    expect(holders).toEqual([owner.id, idle[0]!.id, ...active.map((u) => u.id)].sort((x, y) => x - y));
    const named = deliveries
      .find((d) => (d.event as { type: string }).type === 'message')!
      .userIds.map(Number)
      .sort((x, y) => x - y);
    expect(named).toEqual(holders);
    // The channel's subscriber count is everyone's, idle or not.
    const stream = await t.api.get(`/streams/${(await t.ctx.db('channels').where({ name: 'announce-idle' }).first('id'))!.id}`, owner);
    expect(stream.body.stream.subscriber_count).toBe(13);
  });

  it('the daily job takes active humans after more than 28 whole days without a request, and no one else', async () => {
    const now = Math.floor(Date.now() / 1000);
    const day = 86_400;
    const at28 = await freshUser(t);
    const at29 = await freshUser(t);
    const bot = await freshUser(t, { isBot: true, botOwnerId: t.cast.owner.id });
    const gone = await freshUser(t, { deactivated: true });
    const neverSeen = await freshUser(t);
    for (const u of [at28, gone])
      await t.ctx
        .db('users')
        .where({ id: u.id })
        .update({ last_visit_time: now - 28 * day - 3600 });
    for (const u of [at29, bot])
      await t.ctx
        .db('users')
        .where({ id: u.id })
        .update({ last_visit_time: now - 29 * day });
    // Everyone else of the test organization visited recently.
    await t.ctx.db('users').whereNotIn('id', [at28.id, at29.id, bot.id, gone.id, neverSeen.id]).update({ last_visit_time: now });
    await doSoftDeactivateInactive(t.ctx, now);
    expect(await idleBit(at29.id)).toBe(true);
    for (const u of [at28, bot, gone, neverSeen]) expect(await idleBit(u.id)).toBe(false);
    // A request records the visit (written by the flush; the test harness turns visits off).
    t.ctx.config.softDeactivationDays = 28;
    try {
      expect((await t.api.get('/users/me', at28)).status).toBe(200);
      await doFlushVisits(t.ctx.db);
    } finally {
      t.ctx.config.softDeactivationDays = 0;
    }
    expect(Number((await t.ctx.db('users').where({ id: at28.id }).first('last_visit_time'))!.last_visit_time)).toBeGreaterThanOrEqual(now);
  });

  it('catching up is idempotent and shared by concurrent requests; a late send that read the user as idle gets its row from the second pass', async () => {
    const { owner } = t.cast;
    const c = await freshUser(t);
    await createChannel(t, 'late-send', [owner, c]);
    await doSoftDeactivateUsers(t.ctx, [c.id]);
    const missed = await sendToChannel(t, owner, 'late-send', 'x', 'missed while idle');
    expect((await rowsOf(c.id)).some((r) => r.id === missed)).toBe(false);
    const answers = await Promise.all([
      t.api.get('/users/me', c),
      t.api.get('/messages', c, { anchor: 'newest', num_before: 5, num_after: 0 }),
    ]);
    for (const res of answers) expect(res.status).toBe(200);
    expect((await rowsOf(c.id)).filter((r) => r.id === missed)).toEqual([{ id: missed, flags: 0 }]);
    expect(await doSoftActivateUsers(t.ctx, [c.id])).toBe(0);
    // Not idle again while the second pass is due.
    expect(await doSoftDeactivateUsers(t.ctx, [c.id])).toBe(0);
    // A send whose subscriber list was read while the user was idle, committing after the catch-up.
    const late = await inTransaction(t.ctx.db, async (tx) => {
      const { channel } = (await getChannelForSending(tx.trx, t.realmId, 'late-send'))!;
      const viewer = await loadCaller(tx.trx, owner, (await getRealmById(tx.trx, t.realmId))!);
      const id = await sendMessageInTx(
        tx,
        null,
        viewer,
        { kind: 'channel', channel, topic: 'x', subscriberIds: [owner.id, c.id], idleSubscriberIds: new Set([c.id]) },
        'committed late',
        { client: 'test', readBySender: true },
      );
      return tx.idOf(id);
    });
    expect((await rowsOf(c.id)).some((r) => r.id === late)).toBe(false);
    expect(await doDueSecondPasses(t.ctx, Math.floor(Date.now() / 1000))).toBe(0);
    expect(await doDueSecondPasses(t.ctx, Math.floor(Date.now() / 1000) + 601)).toBeGreaterThanOrEqual(1);
    expect((await rowsOf(c.id)).filter((r) => r.id === late)).toEqual([{ id: late, flags: 0 }]);
    expect(await t.ctx.db('soft_reactivations').where({ user_id: c.id }).first()).toBeUndefined();
  });
});
