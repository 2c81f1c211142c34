import nodemailer, { type SendMailOptions } from 'nodemailer';
import pino from 'pino';
import { startEmailGateway, type EmailGateway } from '../src/gateway/listener';
import { EMAIL_GATEWAY_BOT_EMAIL } from '../src/actions/channel-email';
import { checkGatewayRecipient, newMissedMessageReplyTo } from '../src/actions/incoming-email';
import { inTransaction } from '../src/db/transaction';
import { EMAIL_GATEWAY_REALM_RULE } from '../src/domain/rate-limits';
import { newMissedMessageToken } from '../src/domain/email-gateway';
import { getMessageRow } from '../src/queries/messages';
import { getMissedMessageAddressByToken, insertMissedMessageAddress } from '../src/queries/missed-message-addresses';
import type { UserRow } from '../src/queries/rows';
import { getUserByEmailKey, updateUser } from '../src/queries/users';
import { eachDatabase } from './support/databases';
import { createChannel, startTestServer, type TestServer } from './support/server';
import { tempDataDir } from './support/uploads';
import { freshUser } from './users-fixtures';

const PATTERN = '%s@gateway.test';
const MAX_BYTES = 256 * 1024;

eachDatabase('email gateway', (dialect) => {
  let t: TestServer;
  let gateway: EmailGateway;
  let general: { id: number; recipient_id: number };
  let secret: { id: number; recipient_id: number };
  const data = tempDataDir();

  beforeAll(async () => {
    t = await startTestServer(dialect, undefined, {
      dataDir: data.dir,
      config: { emailGatewayPattern: PATTERN, emailGatewayPort: 0, emailGatewayMaxMessageBytes: MAX_BYTES },
    });
    const { owner, admin, moderator, member, bot } = t.cast;
    general = await createChannel(t, 'general', [owner, admin, moderator, member, bot]);
    secret = await createChannel(t, 'secret stuff', [owner, member], { inviteOnly: true });
    gateway = await startEmailGateway(t.ctx, pino({ level: 'silent' }));
  });
  afterAll(async () => {
    await gateway.close();
    t.ctx.queues.close();
    await t.close();
    data.remove();
  });

  const addressOf = async (user: UserRow, channelId: number, query: Record<string, unknown> = {}) => {
    const res = await t.api.get(`/streams/${channelId}/email_address`, user, query);
    expect(res.status).toBe(200);
    return res.body.email as string;
  };

  /** Sends one mail to the gateway over SMTP; resolves with the server's answer or rejects with its refusal. */
  function mail(message: SendMailOptions) {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: gateway.port, secure: false, ignoreTLS: true });
    return transport.sendMail({ from: 'Someone <someone@elsewhere.test>', ...message }).finally(() => transport.close());
  }

  const latestMessage = async () => {
    const row = await t.ctx.db('messages').orderBy('id', 'desc').first('id');
    return (await getMessageRow(t.ctx.db, row!.id))!;
  };

  /** `owner` sends this message (POST /messages); `user` gets a missed-message address for it. */
  async function notifiedOf(user: UserRow, message: Record<string, unknown>) {
    await t.api.post('/messages', t.cast.owner, message);
    const original = await latestMessage();
    const token = newMissedMessageToken();
    await insertMissedMessageAddress(t.ctx.db, { user_id: user.id, message_id: original.id, email_token: token, created_at: 1 });
    return { original, token, to: `${token}@gateway.test` };
  }

  describe('GET /streams/{stream_id}/email_address', () => {
    it("answers the caller's address of the channel, posting as the Email Gateway bot, the same each time", async () => {
      const { member, owner } = t.cast;
      const email = await addressOf(member, general.id);
      expect(email).toMatch(/^general\.[0-9a-f]{32}\.show-sender@gateway\.test$/);
      expect(await addressOf(member, general.id)).toBe(email);
      // Each creator has their own address.
      expect(await addressOf(owner, general.id)).not.toBe(email);
      const token = email.split('.')[1];
      const row = await t.ctx.db('channel_email_addresses').where({ email_token: token }).first();
      const bot = await getUserByEmailKey(t.ctx.db, t.realmId, EMAIL_GATEWAY_BOT_EMAIL);
      expect(row).toMatchObject({ channel_id: general.id, creator_id: member.id, sender_id: bot!.id, realm_id: t.realmId });
      expect(bot).toMatchObject({ is_bot: true, full_name: 'Email Gateway' });
    });

    it('names the channel in ASCII, or "channel" when its name cannot be', async () => {
      const { owner } = t.cast;
      expect(await addressOf(owner, secret.id)).toMatch(/^secret-stuff\.[0-9a-f]{32}\.show-sender@gateway\.test$/);
      const greek = await createChannel(t, 'Ελληνικά', [owner]);
      expect(await addressOf(owner, greek.id)).toMatch(/^channel\.[0-9a-f]{32}\.show-sender@gateway\.test$/);
    });

    it('takes sender_id: the caller, the Email Gateway bot, or a bot the caller owns', async () => {
      const { member, owner } = t.cast;
      const own = await addressOf(member, general.id, { sender_id: member.id });
      const token = own.split('.')[1];
      expect(await t.ctx.db('channel_email_addresses').where({ email_token: token }).first()).toMatchObject({ sender_id: member.id });
      const bot = await freshUser(t, { isBot: true, botOwnerId: member.id });
      const viaBot = await addressOf(member, general.id, { sender_id: bot.id });
      expect(viaBot).not.toBe(own);
      const gatewayBot = await getUserByEmailKey(t.ctx.db, t.realmId, EMAIL_GATEWAY_BOT_EMAIL);
      expect(await addressOf(member, general.id, { sender_id: gatewayBot!.id })).toBe(await addressOf(member, general.id));

      const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
      const othersBot = await freshUser(t, { isBot: true, botOwnerId: owner.id });
      let res = await t.api.get(`/streams/${general.id}/email_address`, member, { sender_id: othersBot.id });
      expect(res.body).toEqual(refusal('Insufficient permission'));
      res = await t.api.get(`/streams/${general.id}/email_address`, member, { sender_id: owner.id });
      expect(res.body).toEqual(refusal('No such bot'));
      // An administrator may name any bot.
      expect(await addressOf(owner, general.id, { sender_id: bot.id })).toMatch(/@gateway\.test$/);
    });

    it('refuses a channel the caller may not read or post in', async () => {
      const { moderator, guest, member } = t.cast;
      const refusal = (msg: string) => ({ result: 'error', msg, code: 'BAD_REQUEST' });
      let res = await t.api.get(`/streams/${secret.id}/email_address`, moderator);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('Invalid channel ID'));
      res = await t.api.get(`/streams/${general.id}/email_address`, guest);
      expect(res.body).toEqual(refusal('Invalid channel ID'));
      res = await t.api.get('/streams/999999/email_address', member);
      expect(res.body).toEqual(refusal('Invalid channel ID'));
      // Readable, but posting is for administrators only (feature level 448).
      const announce = await createChannel(t, 'announce', [member, t.cast.admin]);
      const admins = await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:administrators' }).first('id');
      await t.ctx.db('channels').where({ id: announce.id }).update({ can_send_message_group: admins!.id });
      res = await t.api.get(`/streams/${announce.id}/email_address`, member);
      expect(res.body).toEqual(refusal('You do not have permission to post in this channel.'));
      expect(await addressOf(t.cast.admin, announce.id)).toMatch(/@gateway\.test$/);
    });

    it('answers an empty address when the server has no email gateway, and gives no reply address', async () => {
      const bare = await startTestServer(dialect);
      try {
        await createChannel(bare, 'general', [bare.cast.member]);
        const { id } = (await bare.ctx.db('channels').where({ name: 'general' }).first('id'))!;
        const res = await bare.api.get(`/streams/${id}/email_address`, bare.cast.member);
        expect(res.body).toEqual({ result: 'success', msg: '', email: '' });
        // Nor do missed-message emails get a reply address.
        expect(await inTransaction(bare.ctx.db, (tx) => newMissedMessageReplyTo(bare.ctx, tx, bare.cast.member.id, 1, 0))).toBeNull();
      } finally {
        bare.ctx.queues.close();
        await bare.close();
      }
    });
  });

  describe('the SMTP listener', () => {
    it('posts mail to a channel address in the channel, as the Email Gateway bot, topic from the Subject', async () => {
      const to = await addressOf(t.cast.member, general.id);
      const info = await mail({ to, subject: 'Re: Build failed', text: 'The build on main failed.\n\nSee the log.\n' });
      expect(info.accepted).toEqual([to]);
      const m = await latestMessage();
      const bot = await getUserByEmailKey(t.ctx.db, t.realmId, EMAIL_GATEWAY_BOT_EMAIL);
      expect(m).toMatchObject({ channel_id: general.id, topic: 'Build failed', sender_id: bot!.id, sending_client: 'ZulipEmailGateway' });
      expect(m.content).toBe('From: Someone <someone@elsewhere.test>\nThe build on main failed.\n\nSee the log.');
      // The ordinary send path: subscribers have it.
      const copies = await t.ctx.db('user_messages').where({ message_id: m.id }).pluck('user_id');
      expect(copies.map(Number)).toEqual(expect.arrayContaining([t.cast.member.id, t.cast.owner.id]));
    });

    it('drops a quoted reply and a signature, names an empty Subject, and converts an HTML-only mail', async () => {
      const to = await addressOf(t.cast.member, general.id);
      await mail({
        to,
        subject: '',
        text: 'Sounds good.\n\n-- \nAlice, Example Corp\n',
      });
      let m = await latestMessage();
      expect(m.topic).toBe('Email with no subject');
      expect(m.content).toBe('From: Someone <someone@elsewhere.test>\nSounds good.');

      await mail({ to, subject: 'quoted', text: 'Yes.\n\nOn Mon, Jan 1, 2024 Bob wrote:\n> Shall we?\n> Really?\n' });
      m = await latestMessage();
      expect(m.content).toBe('From: Someone <someone@elsewhere.test>\nYes.');

      // A mail with only an HTML part: its Markdown, emphasis, links and lists kept, its style dropped.
      await mail({
        to,
        subject: 'html',
        html: '<style>p{color:red}</style><p>Hello <b>there</b>, see <a href="https://example.com/x">this</a></p><ul><li>one</li></ul>',
      });
      m = await latestMessage();
      expect(m.topic).toBe('html');
      expect(m.content).toContain('Hello **there**, see [this](https://example.com/x)');
      expect(m.content).toMatch(/\n-\s+one/);
      expect(m.content).not.toContain('<p>');
      expect(m.content).not.toContain('color:red');
    });

    it('stores an attachment as an upload of the sender and links it in the message', async () => {
      const to = await addressOf(t.cast.member, general.id, { sender_id: t.cast.member.id });
      await mail({
        to,
        subject: 'report',
        text: 'Attached.',
        attachments: [{ filename: 'report [final].txt', content: 'numbers\n', contentType: 'text/plain' }],
      });
      const m = await latestMessage();
      expect(m.sender_id).toBe(t.cast.member.id);
      // The name as uploads sanitise it, brackets dropped from the link's text.
      const link = /^From: .*\nAttached\.\n\n\[report-final\.txt\]\((\/user_uploads\/[^)]+)\)$/.exec(m.content);
      expect(link).not.toBeNull();
      const upload = await t.ctx
        .db('attachments')
        .where({ path_id: link![1]!.slice('/user_uploads/'.length) })
        .first();
      expect(upload).toMatchObject({ owner_id: t.cast.member.id, size: 8 });
      const linked = await t.ctx.db('attachment_messages').where({ attachment_id: upload!.id }).pluck('message_id');
      expect(linked.map(Number)).toEqual([m.id]);
    });

    it('refuses an address that is not one of the gateway, or an unknown token, at RCPT with 550', async () => {
      const before = await latestMessage();
      await expect(mail({ to: 'general.0123456789abcdef0123456789abcdef@gateway.test', subject: 'x', text: 'x' })).rejects.toMatchObject({
        responseCode: 550,
        command: 'RCPT TO',
        response: expect.stringContaining('5.1.1 Bad destination mailbox address'),
      });
      await expect(mail({ to: 'someone@elsewhere.test', subject: 'x', text: 'x' })).rejects.toMatchObject({ responseCode: 550 });
      await expect(mail({ to: `${'mm'.padEnd(34, '0')}@gateway.test`, subject: 'x', text: 'x' })).rejects.toMatchObject({
        responseCode: 550,
        command: 'RCPT TO',
      });
      expect((await latestMessage()).id).toBe(before.id);
    });

    it('refuses at RCPT an address whose user may no longer post in the channel', async () => {
      const user = await freshUser(t);
      const channel = await createChannel(t, `leaving-${Date.now()}`, [user, t.cast.owner], { inviteOnly: true });
      const to = await addressOf(user, channel.id);
      await t.ctx.db('subscriptions').where({ user_id: user.id, recipient_id: channel.recipient_id }).update({ active: false });
      await expect(mail({ to, subject: 'x', text: 'x' })).rejects.toMatchObject({
        responseCode: 550,
        response: expect.stringContaining("Not authorized to send to channel 'leaving-"),
      });
    });

    it('refuses a mail over the size limit', async () => {
      const to = await addressOf(t.cast.member, general.id);
      const before = await latestMessage();
      await expect(mail({ to, subject: 'big', text: 'x'.repeat(MAX_BYTES + 1024) })).rejects.toMatchObject({ responseCode: 552 });
      expect((await latestMessage()).id).toBe(before.id);
      // The listener is still there.
      await mail({ to, subject: 'small', text: 'still here' });
      expect((await latestMessage()).topic).toBe('small');
    });

    it('posts a reply to a missed-message address where the message was, as its user', async () => {
      const { member } = t.cast;
      const { token, to } = await notifiedOf(member, { type: 'stream', to: general.id, topic: 'plans', content: 'Who comes?' });
      await mail({
        from: `Member <${member.delivery_email}>`,
        to,
        subject: 'Re: plans',
        text: 'I do.\n\n> Who comes?\n',
      });
      const reply = await latestMessage();
      expect(reply).toMatchObject({ sender_id: member.id, channel_id: general.id, topic: 'plans', content: 'I do.' });
      expect((await getMissedMessageAddressByToken(t.ctx.db, token))!.times_used).toBe(1);
    });

    it('posts a reply to a direct message in that conversation', async () => {
      const { member } = t.cast;
      const { original, to } = await notifiedOf(member, { type: 'direct', to: JSON.stringify([member.id]), content: 'Lunch?' });
      await mail({ from: member.delivery_email, to, subject: 'Re: Lunch', text: 'Sure.' });
      const reply = await latestMessage();
      expect(reply).toMatchObject({ sender_id: member.id, recipient_id: original.recipient_id, content: 'Sure.' });
    });

    it('takes a reply at the Reply-To a missed-message email is given (newMissedMessageReplyTo)', async () => {
      const { member, owner } = t.cast;
      await t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([member.id]), content: 'Are you there?' });
      const original = await latestMessage();
      const replyTo = await inTransaction(t.ctx.db, (tx) =>
        newMissedMessageReplyTo(t.ctx, tx, member.id, original.id, Math.floor(Date.now() / 1000)),
      );
      expect(replyTo).toMatch(/^mm[0-9a-f]{32}@gateway\.test$/);
      await mail({ from: member.delivery_email, to: replyTo!, subject: 'Re: missed', text: 'Now I am.' });
      expect(await latestMessage()).toMatchObject({ sender_id: member.id, recipient_id: original.recipient_id, content: 'Now I am.' });
    });

    it('refuses a reply to a missed-message address from anyone but its user', async () => {
      const { original, token, to } = await notifiedOf(t.cast.member, {
        type: 'stream',
        to: general.id,
        topic: 'plans',
        content: 'Anyone?',
      });
      await expect(mail({ from: 'Mallory <mallory@elsewhere.test>', to, subject: 'Re: plans', text: 'Forged.' })).rejects.toMatchObject({
        responseCode: 550,
        response: expect.stringContaining('5.7.1 Permission denied'),
      });
      expect((await latestMessage()).id).toBe(original.id);
      expect((await getMissedMessageAddressByToken(t.ctx.db, token))!.times_used).toBe(0);
    });

    it('refuses at RCPT a missed-message address whose user was deactivated', async () => {
      const user = await freshUser(t);
      const token = newMissedMessageToken();
      const original = await latestMessage();
      await insertMissedMessageAddress(t.ctx.db, { user_id: user.id, message_id: original.id, email_token: token, created_at: 1 });
      await updateUser(t.ctx.db, user.id, { is_active: false });
      await expect(mail({ from: user.delivery_email, to: `${token}@gateway.test`, subject: 'x', text: 'x' })).rejects.toMatchObject({
        responseCode: 550,
        command: 'RCPT TO',
      });
    });
  });
  describe('the rate limit of channel addresses', () => {
    it("refuses, for a while, mail to an organization's channel addresses beyond 50 a minute (450, to be retried)", async () => {
      const limited = await startTestServer(dialect, undefined, {
        dataDir: data.dir,
        config: { emailGatewayPattern: PATTERN, emailGatewayPort: 0, rateLimits: true, rateLimitStore: 'memory' },
      });
      const listener = await startEmailGateway(limited.ctx, pino({ level: 'silent' }));
      try {
        const channel = await createChannel(limited, 'general', [limited.cast.member]);
        const res = await limited.api.get(`/streams/${channel.id}/email_address`, limited.cast.member);
        const to = res.body.email as string;
        for (let i = 0; i < EMAIL_GATEWAY_REALM_RULE.points; i++) await checkGatewayRecipient(limited.ctx, to, { rateLimit: true });
        const transport = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true });
        await expect(
          transport.sendMail({ from: 'a@b.test', to, subject: 'x', text: 'x' }).finally(() => transport.close()),
        ).rejects.toMatchObject({
          responseCode: 450,
          command: 'RCPT TO',
          response: expect.stringContaining('4.7.0 Rate-limited'),
        });
      } finally {
        await listener.close();
        limited.ctx.queues.close();
        await limited.close();
      }
    });
  });
});
