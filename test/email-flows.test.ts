import nodemailer, { type SendMailOptions } from 'nodemailer';
import pino from 'pino';
import request from 'supertest';
import { mailDueBatches } from '../src/actions/missed-message-emails';
import { startEmailGateway, type EmailGateway } from '../src/gateway/listener';
import { ManualClock } from './support/clock';
import { eachDatabase } from './support/databases';
import { linkIn } from './support/mail';
import { createChannel, CAST_PASSWORD, startTestServer, type TestServer } from './support/server';
import { deliverMailTo, startSmtpServer, type TestSmtpServer } from './support/smtp-server';

/**
 * Mail end to end, each flow through every piece: the action queues the
 * mail, the delivery worker sends it over SMTP to a real server in this
 * process, the test reads it there as a person would, follows its link or
 * answers it, and the answer comes back through the pages or the incoming
 * gateway (a real SMTP listener). The pieces' own tests cover their rules;
 * these cover that they fit.
 */
eachDatabase('mail end to end', (dialect) => {
  let t: TestServer;
  let smtp: TestSmtpServer;
  let stopMail: () => Promise<void>;
  let gateway: EmailGateway;
  const clock = new ManualClock();

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestServer(dialect, undefined, {
      clock,
      config: { emailGatewayPattern: '%s@gateway.example.com', emailGatewayPort: 0, ...smtp.config() },
    });
    gateway = await startEmailGateway(t.ctx, pino({ level: 'silent' }));
    stopMail = deliverMailTo(t.ctx, smtp);
  });
  afterAll(async () => {
    await stopMail();
    await gateway.close();
    t.ctx.queues.close();
    await t.close();
    await smtp.stop();
  });

  /** Sends a mail to the gateway, as the organization's mail server would hand it on. */
  async function mailToGateway(message: SendMailOptions) {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: gateway.port, secure: false, ignoreTLS: true });
    try {
      return await transport.sendMail(message);
    } finally {
      transport.close();
    }
  }

  it('an invitation: the mail arrives over SMTP, its link opens the sign-up form, and the new member logs in', async () => {
    const { admin } = t.cast;
    const { id: channelId } = await createChannel(t, 'welcome', [admin]);
    const invited = await t.api.post('/invites', admin, {
      invitee_emails: 'newcomer@example.com',
      stream_ids: JSON.stringify([channelId]),
    });
    expect(invited.status).toBe(200);
    const mail = await smtp.waitForMail((m) => m.to.includes('newcomer@example.com'));
    expect(mail.fromName).toBe('Test Organization');
    const link = new URL(linkIn(mail.text, `${t.ctx.config.externalUrl}/accounts/do_confirm/`));
    expect((await request(t.app).get(link.pathname)).status).toBe(200);
    const done = await request(t.app).post(link.pathname).type('form').send({ full_name: 'New Comer', password: 'a-good-password' });
    // The new member is logged in (a browser session) and sent to the web client.
    expect(done.status).toBe(302);
    expect(done.headers.location).toBe('/');
    expect(done.headers['set-cookie']).toEqual(expect.arrayContaining([expect.stringMatching(/^sessionid=/)]));
    const key = await t.api.post('/fetch_api_key', null, { username: 'newcomer@example.com', password: 'a-good-password' });
    expect(key.status).toBe(200);
    const subscriptions = await request(t.app)
      .get('/api/v1/users/me/subscriptions')
      .auth('newcomer@example.com', key.body.api_key as string);
    expect(subscriptions.body.subscriptions.map((s: { stream_id: number }) => s.stream_id)).toContain(channelId);
  });

  it('password reset: the mail arrives over SMTP, its link sets a new password, the old one no longer logs in', async () => {
    const user = t.cast.member;
    expect((await request(t.app).post('/accounts/password/reset/').type('form').send({ email: user.delivery_email })).status).toBe(303);
    const mail = await smtp.waitForMail((m) => m.to.includes(user.delivery_email) && m.subject.startsWith('Password reset'));
    expect(mail.fromName).toBe('Test Organization');
    expect(mail.html).toContain('/accounts/password/reset/');
    const link = new URL(linkIn(mail.text, `${t.ctx.config.externalUrl}/accounts/password/reset/`));
    const newPassword = 'a fresh and long password';
    const set = await request(t.app).post(link.pathname).type('form').send({ new_password1: newPassword, new_password2: newPassword });
    expect(set.status).toBe(200);
    expect((await t.api.post('/fetch_api_key', null, { username: user.delivery_email, password: newPassword })).status).toBe(200);
    expect((await t.api.post('/fetch_api_key', null, { username: user.delivery_email, password: CAST_PASSWORD })).status).toBe(401);
  });

  it('a DM to an offline user: one mail over SMTP after the batching period, and a reply to it lands in the conversation', async () => {
    const { owner, admin } = t.cast;
    const sent = await t.api.post('/messages', owner, { type: 'direct', to: JSON.stringify([admin.id]), content: 'Lunch at noon?' });
    expect(sent.status).toBe(200);
    await t.ctx.missedMessages.whenIdle();
    await mailDueBatches(t.ctx, Math.floor(clock.now() / 1000) + 120);
    const mail = await smtp.waitForMail((m) => m.to.includes(admin.delivery_email) && m.subject === 'DMs with Test Owner');
    expect(mail.text).toContain('Lunch at noon?');
    expect(mail.replyTo).toMatch(/@gateway\.example\.com$/);
    // The reply, from the admin's own address, to the mail's Reply-To.
    await mailToGateway({ from: admin.delivery_email, to: mail.replyTo!, subject: `Re: ${mail.subject}`, text: 'Yes, see you there.' });
    const history = await t.api.get('/messages', owner, {
      anchor: 'newest',
      num_before: '1',
      num_after: '0',
      narrow: JSON.stringify([{ operator: 'dm', operand: [admin.id] }]),
      apply_markdown: 'false',
    });
    expect(history.body.messages.at(-1)).toMatchObject({ sender_id: admin.id, content: 'Yes, see you there.' });
  });

  it("a mail to a channel's address becomes a message in that channel, the Subject its topic", async () => {
    const { owner } = t.cast;
    const { id: channelId } = await createChannel(t, 'announcements', [owner]);
    const address = await t.api.get(`/streams/${channelId}/email_address`, owner);
    expect(address.status).toBe(200);
    await mailToGateway({ from: 'someone@elsewhere.test', to: address.body.email, subject: 'Release 2.0', text: 'It is out.' });
    const history = await t.api.get('/messages', owner, {
      anchor: 'newest',
      num_before: '1',
      num_after: '0',
      narrow: JSON.stringify([{ operator: 'channel', operand: channelId }]),
      apply_markdown: 'false',
    });
    expect(history.body.messages.at(-1)).toMatchObject({ subject: 'Release 2.0', content: expect.stringContaining('It is out.') });
  });
});
