import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, TestServer } from './support/server';
import type { UserRow } from '../src/queries/rows';

/** 1700000000 is 2023-11-14T22:13:20Z: reported messages are backdated to it so the quoted time is known. */
const SENT = 1700000000;
const WHEN = '<time:2023-11-14T22:13:20+00:00>';

eachDatabase('POST /messages/{id}/report', (dialect) => {
  let t: TestServer;
  let moderation: { id: number; recipient_id: number };
  let inGeneral: number;

  beforeAll(async () => {
    t = await startTestServer(dialect);
    const { owner, admin, moderator, member, guest } = t.cast;
    await createChannel(t, 'general', [owner, admin, moderator, member, guest]);
    moderation = await createChannel(t, 'moderation', [owner, admin, moderator], { inviteOnly: true });
    await createChannel(t, 'private', [owner, admin], { inviteOnly: true });
    inGeneral = await sendAs(owner, { type: 'channel', to: 'general', topic: 'lunch', content: 'I squeeze toothpaste from the middle' });
  });
  afterAll(() => t.close());
  beforeEach(() => setModerationChannel(moderation.id));

  async function sendAs(user: UserRow, fields: Record<string, unknown>): Promise<number> {
    const res = await t.api.post('/messages', user, fields);
    expect(res.status).toBe(200);
    await t.ctx.db('messages').where({ id: res.body.id }).update({ date_sent: SENT });
    return res.body.id;
  }
  const setModerationChannel = (id: number | null) =>
    t.ctx.db('realms').where({ id: t.realmId }).update({ moderation_request_channel_id: id });
  const report = (user: UserRow, id: number, fields: Record<string, unknown>) => t.api.post(`/messages/${id}/report`, user, fields);
  const messageCount = async () => Number((await t.ctx.db('messages').count({ n: '*' }).first())!.n);
  const lastReport = () =>
    t.ctx
      .db('messages as m')
      .join('users as u', 'u.id', 'm.sender_id')
      .where('m.recipient_id', moderation.recipient_id)
      .orderBy('m.id', 'desc')
      .first('m.id', 'm.topic', 'm.content', 'm.rendered_content', 'u.full_name as sender_name', 'u.is_bot');
  const mention = (u: UserRow) => `@_**${u.full_name}|${u.id}**`;

  /** Asserts the request is refused with exactly this body and sends nothing. */
  async function refused(user: UserRow, id: number, fields: Record<string, unknown>, body: Record<string, unknown>) {
    const before = await messageCount();
    const res = await report(user, id, fields);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ result: 'error', code: 'BAD_REQUEST', ...body });
    expect(await messageCount()).toBe(before);
  }

  it.each([
    ['spam', 'Spam'],
    ['harassment', 'Harassment'],
    ['inappropriate', 'Inappropriate content'],
    ['norms', 'Violates community norms'],
    ['other', 'Other reason'],
  ])("reports for '%s' with a Notification Bot message in the moderation channel", async (type, name) => {
    const { member, owner } = t.cast;
    const res = await report(member, inGeneral, { report_type: type, description: 'crime against food' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: 'success', msg: '' });
    const sent = await lastReport();
    expect(sent).toMatchObject({ topic: 'Test Owner moderation', sender_name: 'Notification Bot' });
    expect(Boolean(sent.is_bot)).toBe(true);
    expect(sent.content).toBe(
      `${mention(member)} reported a message sent by ${mention(owner)} at ${WHEN}.\n` +
        '```quote\n' +
        `**${name}**. crime against food\n` +
        '```\n' +
        '\n' +
        `\`\`\` spoiler Original message at #**general>lunch@${inGeneral}**\n` +
        'I squeeze toothpaste from the middle\n' +
        '```',
    );
    // Delivered to the moderators' channel: its subscribers (and the bot's own copy); the reporter receives nothing.
    const receivers = await t.ctx.db('user_messages').where({ message_id: sent.id }).pluck('user_id');
    const bot = await t.ctx.db('users').where({ realm_id: t.realmId, full_name: 'Notification Bot' }).first('id');
    expect(receivers.map(Number).sort((a, b) => a - b)).toEqual(
      [t.cast.owner.id, t.cast.admin.id, t.cast.moderator.id, Number(bot!.id)].sort((a, b) => a - b),
    );
    expect((await t.api.get(`/messages/${sent.id}`, t.cast.moderator)).status).toBe(200);
  });

  it('accepts a report without a description for a type other than other', async () => {
    expect((await report(t.cast.member, inGeneral, { report_type: 'spam' })).status).toBe(200);
    expect((await lastReport()).content).toContain('```quote\n**Spam**. \n```');
  });

  it("requires an explanation for 'other'", async () => {
    await refused(t.cast.member, inGeneral, { report_type: 'other' }, { msg: 'An explanation is required.' });
    await refused(t.cast.member, inGeneral, { report_type: 'other', description: '' }, { msg: 'An explanation is required.' });
  });

  it('counts the description in code points: 1000 pass, 1001 are refused', async () => {
    const emoji = '🐙'; // one code point, two UTF-16 units
    expect((await report(t.cast.member, inGeneral, { report_type: 'norms', description: emoji.repeat(1000) })).status).toBe(200);
    expect((await lastReport()).content).toContain(`**Violates community norms**. ${emoji.repeat(1000)}\n`);
    await refused(
      t.cast.member,
      inGeneral,
      { report_type: 'norms', description: 'x'.repeat(1001) },
      { msg: 'description is too long (limit: 1000 characters)' },
    );
  });

  it('refuses a report type that is not one of server_report_message_types', async () => {
    await refused(
      t.cast.member,
      inGeneral,
      { report_type: 'boring', description: 'meh' },
      { msg: 'Invalid report_type: Value error, Not in the list of possible values' },
    );
  });

  it('refuses a report without report_type', async () => {
    const before = await messageCount();
    const res = await report(t.cast.member, inGeneral, { description: 'meh' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      result: 'error',
      msg: "Missing 'report_type' argument",
      code: 'REQUEST_VARIABLE_MISSING',
      var_name: 'report_type',
    });
    expect(await messageCount()).toBe(before);
  });

  it('refuses every report when no moderation request channel is configured, or it is archived', async () => {
    const off = { msg: 'Message reporting is not enabled in this organization.' };
    await setModerationChannel(null);
    await refused(t.cast.member, inGeneral, { report_type: 'spam' }, off);
    // Checked before the message, as Zulip does.
    await refused(t.cast.member, 99999999, { report_type: 'spam' }, off);
    await setModerationChannel(moderation.id);
    await t.ctx.db('channels').where({ id: moderation.id }).update({ deactivated: true });
    try {
      await refused(t.cast.member, inGeneral, { report_type: 'spam' }, off);
    } finally {
      await t.ctx.db('channels').where({ id: moderation.id }).update({ deactivated: false });
    }
  });

  it('refuses messages the reporter cannot read, with nothing sent', async () => {
    const invalid = { msg: 'Invalid message(s)' };
    const inPrivate = await sendAs(t.cast.owner, { type: 'channel', to: 'private', topic: 'p', content: 'private words' });
    const dm = await sendAs(t.cast.owner, { type: 'direct', to: [t.cast.admin.id], content: 'between us' });
    await refused(t.cast.member, 99999999, { report_type: 'spam' }, invalid);
    await refused(t.cast.member, inPrivate, { report_type: 'spam' }, invalid);
    await refused(t.cast.member, dm, { report_type: 'spam' }, invalid);
    // A subscriber may report the same private message.
    expect((await report(t.cast.admin, inPrivate, { report_type: 'spam' })).status).toBe(200);
    expect((await lastReport()).content).toContain(`#**private>p@${inPrivate}**`);
  });

  describe('direct messages', () => {
    const url = 'http://127.0.0.1:9991';
    beforeAll(() => {
      expect(t.ctx.config.externalUrl).toBe(url);
    });

    it('names the sender of a one-to-one message reported by its recipient, and links it', async () => {
      const { owner, member } = t.cast;
      const dm = await sendAs(owner, { type: 'direct', to: [member.id], content: 'I dip fries in ice cream' });
      expect((await report(member, dm, { report_type: 'harassment', description: 'gross' })).status).toBe(200);
      const ids = [owner.id, member.id].sort((a, b) => a - b).join(',');
      expect((await lastReport()).content).toBe(
        `${mention(member)} reported a direct message sent by ${mention(owner)} at ${WHEN}.\n` +
          '```quote\n**Harassment**. gross\n```\n\n' +
          `\`\`\` spoiler [Original message](${url}/#narrow/dm/${ids}-dm/near/${dm})\n` +
          'I dip fries in ice cream\n```',
      );
    });

    it('names the recipient when one reports one’s own message', async () => {
      const { owner, member } = t.cast;
      const dm = await sendAs(member, { type: 'direct', to: [owner.id], content: 'sorry' });
      expect((await report(member, dm, { report_type: 'norms' })).status).toBe(200);
      expect((await lastReport()).content.split('\n')[0]).toBe(
        `${mention(member)} reported a direct message sent by ${mention(member)} to ${mention(owner)} at ${WHEN}.`,
      );
    });

    it('lists the other participants of a group message, in a fence longer than the message’s own', async () => {
      const { owner, admin, moderator, member } = t.cast;
      const content = 'look:\n````\ncode\n````';
      const dm = await sendAs(owner, { type: 'direct', to: [admin.id, moderator.id, member.id], content });
      expect((await report(member, dm, { report_type: 'spam', description: 'ads' })).status).toBe(200);
      const others = [admin, moderator, member].map(mention).sort();
      const ids = [owner.id, admin.id, moderator.id, member.id].sort((a, b) => a - b).join(',');
      expect((await lastReport()).content).toBe(
        `${mention(member)} reported a direct message sent by ${mention(owner)} to ${others[0]}, ${others[1]}, and ${others[2]} at ${WHEN}.\n` +
          '```quote\n**Spam**. ads\n```\n\n' +
          `\`\`\`\`\` spoiler [Original message](${url}/#narrow/dm/${ids}-group/near/${dm})\n` +
          `${content}\n` +
          '`````',
      );
    });
  });

  it('links with plain Markdown when the channel or topic name would break the #** syntax', async () => {
    const { owner, member } = t.cast;
    const odd = await createChannel(t, 'Sw*den', [owner, member]);
    const id = await sendAs(owner, { type: 'channel', to: 'Sw*den', topic: 'a > b', content: 'hej' });
    expect((await report(member, id, { report_type: 'spam' })).status).toBe(200);
    expect((await lastReport()).content).toContain(
      `\`\`\` spoiler Original message at [#Sw&#42;den > a &gt; b @ 💬](#narrow/channel/${odd.id}-Sw*den/topic/a.20.3E.20b/near/${id})\n`,
    );
  });

  it("uses the empty topic in a moderation channel that allows only it, and cuts a long sender's topic", async () => {
    const { member } = t.cast;
    await t.ctx
      .db('users')
      .where({ id: t.cast.owner.id })
      .update({ full_name: 'O'.repeat(60) });
    try {
      expect((await report(member, inGeneral, { report_type: 'spam' })).status).toBe(200);
      expect((await lastReport()).topic).toBe('O'.repeat(57) + '...');
    } finally {
      await t.ctx.db('users').where({ id: t.cast.owner.id }).update({ full_name: t.cast.owner.full_name });
    }
    await t.ctx.db('channels').where({ id: moderation.id }).update({ topics_policy: 'empty_topic_only' });
    try {
      expect((await report(member, inGeneral, { report_type: 'spam' })).status).toBe(200);
      expect((await lastReport()).topic).toBe('');
    } finally {
      await t.ctx.db('channels').where({ id: moderation.id }).update({ topics_policy: 'inherit' });
    }
  });
});
