import request from 'supertest';
import { eachDatabase } from './support/databases';
import { linkIn, queuedEmails } from './support/mail';
import { createChannel, startTestServer, TestServer } from './support/server';

/**
 * The sign-up pages invitations open: invite → queued mail → the mail's
 * link → the form → an account that logs in with its password, in the
 * invited channels and groups; a reusable link's /join/<key>/ page; refusals
 * shown on the form with what was entered; unusable links.
 */
eachDatabase('sign-up pages', (dialect) => {
  let t: TestServer;
  let projects: { id: number; recipient_id: number };
  let general: { id: number; recipient_id: number };
  let teamId: number;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    projects = await createChannel(t, 'projects', [t.cast.owner, t.cast.admin]);
    general = await createChannel(t, 'general', [t.cast.owner]);
    await t.ctx.db('channels').where({ id: general.id }).update({ is_default: true });
    const admins = (await t.ctx.db('user_groups').where({ realm_id: t.realmId, name: 'role:administrators' }).first())!.id;
    const team = await t.ctx
      .db('user_groups')
      .insert({ realm_id: t.realmId, name: 'team', can_add_members_group: admins, can_manage_group: admins });
    teamId = Array.isArray(team) ? Number(team[0]) : Number(team);
  });
  afterAll(() => t.close());

  const SITE = 'http://127.0.0.1:9991';
  const channelsOf = async (userId: number) =>
    (
      await t.ctx
        .db('subscriptions as s')
        .join('channels as c', 'c.recipient_id', 's.recipient_id')
        .where({ 's.user_id': userId, 's.active': true })
        .pluck('c.name')
    ).sort();

  async function invite(email: string, fields: Record<string, unknown> = {}): Promise<string> {
    const res = await t.api.post('/invites', t.cast.admin, { invitee_emails: email, stream_ids: [projects.id], ...fields });
    expect(res.status).toBe(200);
    const [mail] = await queuedEmails(t.ctx.db, email);
    return new URL(linkIn(mail!.text_body, `${SITE}/accounts/do_confirm/`)).pathname;
  }

  it('invite → mail → sign-up page → an account that logs in, with the invited role, channels and groups', async () => {
    const path = await invite('newcomer@example.com', {
      invite_as: 300,
      group_ids: [teamId],
      include_realm_default_subscriptions: true,
    });
    const form = await request(t.app).get(path);
    expect(form.status).toBe(200);
    expect(form.headers['content-security-policy']).toContain("default-src 'none'");
    expect(form.text).toContain('<h1>Join Test Organization</h1>');
    expect(form.text).toContain('<strong>newcomer@example.com</strong>');
    expect(form.text).toContain('<form method="post">');
    expect(form.text).not.toContain('<script');

    const done = await request(t.app).post(path).type('form').send({ full_name: 'New Comer', password: 'a-good-password' });
    // As Zulip's registration: the new account is logged in (a session and its cookies) and goes to the web app.
    expect(done.status).toBe(302);
    expect(done.headers.location).toBe('/');
    const cookies = done.headers['set-cookie'] as unknown as string[];
    expect(cookies.some((c) => c.startsWith('sessionid=') && c.includes('HttpOnly'))).toBe(true);
    expect(cookies.some((c) => c.startsWith('csrftoken='))).toBe(true);

    const key = await t.api.post('/fetch_api_key', null, { username: 'newcomer@example.com', password: 'a-good-password' });
    expect(key.status).toBe(200);
    const user = (await t.ctx.db('users').where({ id: key.body.user_id }).first())!;
    expect([user.full_name, user.role]).toEqual(['New Comer', 300]);
    expect(await channelsOf(user.id)).toEqual(['general', 'projects']);
    expect(await t.ctx.db('group_members').where({ group_id: teamId }).pluck('user_id')).toEqual([user.id]);
    const row = (await t.ctx.db('email_invites').where({ email: 'newcomer@example.com' }).first())!;
    expect([row.status, row.created_user_id]).toEqual([1, user.id]);
    // Joined: the reminder that was waiting is withdrawn.
    expect(await t.ctx.db('outgoing_emails').where({ to_address: 'newcomer@example.com', template: 'invitation_reminder' })).toEqual([]);

    // Notification Bot tells the sender (notify_referrer_on_join defaults to true).
    const bot = (await t.ctx.db('users').where({ realm_id: t.realmId, full_name: 'Notification Bot' }).first())!;
    const dm = await t.ctx.db('messages').where({ sender_id: bot.id }).orderBy('id', 'desc').first();
    expect(dm!.content).toBe(`@_**New Comer|${user.id}** accepted your invitation to join Zulip!`);
    expect(await t.ctx.db('user_messages').where({ message_id: dm!.id }).pluck('user_id')).toContain(t.cast.admin.id);

    // Used: the page says so and a second post makes nothing.
    const again = await request(t.app).get(path);
    expect(again.status).toBe(404);
    expect(again.text).toContain('This invitation was used already');
    const twice = await request(t.app).post(path).type('form').send({ full_name: 'Other One', password: 'a-good-password' });
    expect(twice.status).toBe(404);
    expect(await t.ctx.db('users').where({ full_name: 'Other One' })).toEqual([]);
  });

  it("shows Zulip's error on the form, keeping the name entered (never the password)", async () => {
    const path = await invite('picky@example.com', { notify_referrer_on_join: false });
    const weak = await request(t.app).post(path).type('form').send({ full_name: 'Pic Ky', password: 'abc' });
    expect(weak.status).toBe(400);
    expect(weak.text).toContain('<p class="error" role="alert">The password is too weak.</p>');
    expect(weak.text).toContain('value="Pic Ky"');
    expect(weak.text).not.toContain('value="abc"');
    const short = await request(t.app).post(path).type('form').send({ full_name: 'P', password: 'a-good-password' });
    expect(short.text).toContain('Name too short!');
    expect(await t.ctx.db('users').where({ delivery_email: 'picky@example.com' })).toEqual([]);
    const ok = await request(t.app).post(path).type('form').send({ full_name: 'Pic Ky', password: 'a-good-password' });
    expect(ok.status).toBe(302);
    const user = (await t.ctx.db('users').where({ delivery_email: 'picky@example.com' }).first())!;
    // notify_referrer_on_join false: no message names the new user.
    expect(await t.ctx.db('messages').where('content', 'like', `%|${user.id}** accepted%`)).toEqual([]);
  });

  it('two sign-ups with one invitation at once: one account, and the other gets the page saying the link is used or not valid', async () => {
    const path = await invite('at-once@example.com');
    const post = (name: string) => request(t.app).post(path).type('form').send({ full_name: name, password: 'a-good-password' });
    const statuses = (await Promise.all([post('First Try'), post('Second Try')])).map((r) => r.status).sort();
    expect(statuses[0]).toBe(302);
    expect(statuses[1]).toBeGreaterThanOrEqual(400);
    expect(statuses[1]).toBeLessThan(500);
    expect(await t.ctx.db('users').where({ delivery_email: 'at-once@example.com' })).toHaveLength(1);
  });

  it('revoked, expired and unknown invitations get a page saying the link is not valid', async () => {
    const revoked = await invite('revoked@example.com');
    const row = (await t.ctx.db('email_invites').where({ email: 'revoked@example.com' }).first())!;
    expect((await t.api.delete(`/invites/${row.id}`, t.cast.admin)).status).toBe(200);
    const expired = await invite('expired@example.com');
    await t.ctx.db('email_invites').where({ email: 'expired@example.com' }).update({ expires_at: 1000 });
    for (const path of [revoked, expired, '/accounts/do_confirm/nosuchkey']) {
      const page = await request(t.app).get(path);
      expect(page.status).toBe(404);
      expect(page.text).toContain('The invitation link has expired or is not valid.');
      const post = await request(t.app).post(path).type('form').send({ full_name: 'Too Late', password: 'a-good-password' });
      expect(post.status).toBe(404);
    }
    expect(await t.ctx.db('users').where({ full_name: 'Too Late' })).toEqual([]);
  });

  /** A reusable link's page, given `email`: the sign-up link mailed to it, as a path. */
  async function viaLink(linkPath: string, email: string): Promise<string> {
    const asked = await request(t.app).post(linkPath).type('form').send({ email });
    expect([asked.status, asked.text.includes('<h1>Check your email</h1>')]).toEqual([200, true]);
    const mails = (await queuedEmails(t.ctx.db, email)).filter((m) => m.template === 'confirm_registration');
    return new URL(linkIn(mails.at(-1)!.text_body, `${SITE}/accounts/do_confirm/`)).pathname;
  }

  it('joining by any way revokes the other invitations to that address', async () => {
    await invite('twice@example.com');
    const second = await t.api.post('/invites', t.cast.owner, { invitee_emails: 'twice@example.com', stream_ids: [] });
    expect(second.status).toBe(200);
    const link = await t.api.post('/invites/multiuse', t.cast.admin, {});
    const confirm = await viaLink(new URL(link.body.invite_link).pathname, 'twice@example.com');
    // Asking is not joining: the invitations stand until the address's owner signs up.
    expect(await t.ctx.db('email_invites').where({ email: 'twice@example.com' }).whereNull('multiuse_invite_id').pluck('status')).toEqual([
      0, 0,
    ]);
    const joined = await request(t.app).post(confirm).type('form').send({ full_name: 'Twi Ce', password: 'a-good-password' });
    expect(joined.status).toBe(302);
    expect(await t.ctx.db('email_invites').where({ email: 'twice@example.com' }).whereNull('multiuse_invite_id').pluck('status')).toEqual([
      2, 2,
    ]);
  });

  it("a reusable link asks for the address and mails the sign-up link there; the account gets the link's channels, and the use is counted", async () => {
    const made = await t.api.post('/invites/multiuse', t.cast.admin, { stream_ids: [projects.id] });
    const path = new URL(made.body.invite_link).pathname;
    const form = await request(t.app).get(path);
    expect(form.status).toBe(200);
    expect(form.text).toContain('<input type="email" id="email" name="email" value=""');
    expect(form.text).not.toContain('name="password"');
    const ask = (email: string) => request(t.app).post(path).type('form').send({ email });
    const bad = await ask('not an address');
    expect([bad.status, bad.text.includes('Enter a valid email address.'), bad.text.includes('value="not an address"')]).toEqual([
      400,
      true,
      true,
    ]);
    const odd = await ask('a"><b>x');
    expect(odd.text).toContain('value="a&#34;&#62;&#60;b&#62;x"');
    const taken = await ask('member@example.com');
    expect(taken.text).toContain('member@example.com already has an account.');
    const throwaway = await ask('lin@mailinator.com');
    expect([throwaway.status, throwaway.text.includes('Please use your real email address.')]).toEqual([400, true]);
    // Nothing mailed for a refused address; nothing in GET /invites for a confirmation.
    expect(
      await queuedEmails(t.ctx.db, 'member@example.com').then((ms) => ms.filter((m) => m.template === 'confirm_registration')),
    ).toEqual([]);
    const confirm = await viaLink(path, 'linked@example.com');
    const listed = await t.api.get('/invites', t.cast.admin);
    expect(listed.body.invites.some((i: { email?: string }) => i.email === 'linked@example.com')).toBe(false);
    const key = /\/join\/([a-z0-9]+)\//.exec(path)![1];
    expect(Number((await t.ctx.db('multiuse_invites').where({ link_key: key }).first())!.use_count)).toBe(0);
    const page = await request(t.app).get(confirm);
    expect(page.text).toContain('<strong>linked@example.com</strong>');
    const ok = await request(t.app).post(confirm).type('form').send({ full_name: 'Lin K', password: 'a-good-password' });
    expect(ok.status).toBe(302);
    const login = await t.api.post('/fetch_api_key', null, { username: 'linked@example.com', password: 'a-good-password' });
    expect(login.status).toBe(200);
    expect(await channelsOf(login.body.user_id)).toEqual(['projects']);
    expect(Number((await t.ctx.db('multiuse_invites').where({ link_key: key }).first())!.use_count)).toBe(1);
    // A revoked link: its page says so, and a confirmation mailed before no longer makes an account.
    const late = await viaLink(path, 'late@example.com');
    await t.ctx.db('multiuse_invites').where({ link_key: key }).update({ revoked: true });
    const revoked = await request(t.app).get(path);
    expect([revoked.status, revoked.text.includes('The invitation link has expired or is not valid.')]).toEqual([404, true]);
    const tooLate = await request(t.app).post(late).type('form').send({ full_name: 'Late Comer', password: 'a-good-password' });
    expect(tooLate.status).toBe(404);
    expect(await t.ctx.db('users').where({ delivery_email: 'late@example.com' })).toEqual([]);
  });
});
