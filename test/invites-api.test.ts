import { doCreateRealm } from '../src/actions/realms';
import { eachDatabase } from './support/databases';
import { pending, register } from './support/events';
import { linkIn, queuedEmails } from './support/mail';
import { createChannel, startTestServer, TestServer } from './support/server';

/** POST/GET /invites, revoking and resending email invitations, revoking links: Zulip's rules, errors and events. */
eachDatabase('email invitations API', (dialect) => {
  let t: TestServer;
  let groups: Record<string, number>;
  let projects: { id: number };
  let general: { id: number };
  beforeAll(async () => {
    t = await startTestServer(dialect);
    projects = await createChannel(t, 'projects', [t.cast.owner, t.cast.admin, t.cast.member]);
    general = await createChannel(t, 'general', [t.cast.owner, t.cast.member]);
    await t.ctx.db('channels').where({ id: general.id }).update({ is_default: true });
    const rows = await t.ctx.db('user_groups').where({ realm_id: t.realmId, is_system_group: true }).select('id', 'name');
    groups = Object.fromEntries(rows.map((r: any) => [r.name, r.id]));
  });
  afterAll(() => {
    t.ctx.queues.close();
    return t.close();
  });

  const invitesTo = (email: string) => t.ctx.db('email_invites').where({ email }).orderBy('id');
  const failed = (msg: string, errors: unknown[], sent: boolean, daily = false) => ({
    result: 'error',
    msg,
    code: 'INVITATION_FAILED',
    errors,
    sent_invitations: sent,
    license_limit_reached: false,
    daily_limit_reached: daily,
  });

  it('invites each address once (commas, newlines, "Name <address>"), queues one mail each and tells admins and the sender', async () => {
    const admin = await register(t, t.cast.admin, { event_types: ['invites_changed'] });
    const member = await register(t, t.cast.member, { event_types: ['invites_changed'] });
    const owner = await register(t, t.cast.owner, { event_types: ['invites_changed'] });
    const res = await t.api.post('/invites', t.cast.member, {
      invitee_emails: 'ann@example.com, Bob Smith <bob@example.com>\nann@example.com',
      stream_ids: [projects.id],
      include_realm_default_subscriptions: true,
      notify_referrer_on_join: false,
      invite_expires_in_minutes: 60,
    });
    expect([res.status, res.body]).toEqual([200, { result: 'success', msg: '' }]);
    const [ann] = await invitesTo('ann@example.com');
    const [bob] = await invitesTo('bob@example.com');
    expect(ann).toMatchObject({ referred_by_id: t.cast.member.id, invited_as: 400, status: 0 });
    expect(Boolean(ann.notify_referrer_on_join)).toBe(false);
    expect(Boolean(ann.include_realm_default_subscriptions)).toBe(true);
    expect(ann.expires_at! - ann.invited_at).toBe(3600);
    expect(bob).toBeDefined();
    expect(await t.ctx.db('email_invite_channels').where({ invite_id: ann.id }).pluck('channel_id')).toEqual([projects.id]);
    const [mail] = await queuedEmails(t.ctx.db, 'ann@example.com');
    expect(mail!.template).toBe('invitation');
    expect(mail!.from_name).toBe('Test Organization');
    expect(mail!.subject).toBe('Test Member invited you to join Test Organization');
    expect(mail!.text_body).toContain('Test Member (member@example.com) has invited you to join Test Organization');
    expect(linkIn(mail!.text_body, 'http://127.0.0.1:9991/accounts/')).toBe(
      `http://127.0.0.1:9991/accounts/do_confirm/${ann.confirmation_key}`,
    );
    expect(mail!.text_body).toMatch(/The link expires on \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);
    expect(mail!.html_body).toContain(`href="http://127.0.0.1:9991/accounts/do_confirm/${ann.confirmation_key}"`);
    expect(await queuedEmails(t.ctx.db, 'bob@example.com')).toHaveLength(1);
    expect((await pending(t, admin)).map((e) => e.type)).toEqual(['invites_changed']);
    expect((await pending(t, owner)).map((e) => e.type)).toEqual(['invites_changed']);
    expect((await pending(t, member)).map((e) => e.type)).toEqual(['invites_changed']);
  });

  it('GET /invites: administrators see every usable invitation and link, others their own', async () => {
    await t.api.post('/invites', t.cast.admin, { invitee_emails: 'carol@example.com', stream_ids: [], invite_as: 300 });
    const link = await t.api.post('/invites/multiuse', t.cast.admin, { invite_expires_in_minutes: null });
    const [carol] = await invitesTo('carol@example.com');
    const all = await t.api.get('/invites', t.cast.admin);
    expect(all.status).toBe(200);
    const emails = all.body.invites.filter((i: any) => !i.is_multiuse).map((i: any) => i.email);
    expect(emails).toEqual(expect.arrayContaining(['ann@example.com', 'bob@example.com', 'carol@example.com']));
    expect(all.body.invites).toContainEqual({
      id: carol.id,
      email: 'carol@example.com',
      invited_by_user_id: t.cast.admin.id,
      invited: carol.invited_at,
      expiry_date: carol.invited_at + 14400 * 60,
      invited_as: 300,
      is_multiuse: false,
      notify_referrer_on_join: true,
    });
    expect(all.body.invites).toContainEqual(
      expect.objectContaining({
        is_multiuse: true,
        link_url: link.body.invite_link,
        expiry_date: null,
        invited_by_user_id: t.cast.admin.id,
      }),
    );
    const own = await t.api.get('/invites', t.cast.member);
    expect(own.body.invites.map((i: any) => i.email).sort()).toEqual(['ann@example.com', 'bob@example.com']);
    for (const who of ['guest', 'bot'] as const) {
      const refused = await t.api.get('/invites', t.cast[who]);
      expect(refused.body.msg).toBe(who === 'guest' ? 'Not allowed for guest users' : 'This endpoint does not accept bot requests.');
    }
  });

  it.each([
    ['a guest', 'guest', {}, 'Not allowed for guest users', 'BAD_REQUEST'],
    ['a bot', 'bot', {}, 'This endpoint does not accept bot requests.', 'BAD_REQUEST'],
    ['a member inviting moderators', 'member', { invite_as: 300 }, 'Must be an organization administrator', 'BAD_REQUEST'],
    ['an administrator inviting owners', 'admin', { invite_as: 100 }, 'Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL'],
    ['no address', 'admin', { invitee_emails: '' }, 'You must specify at least one email address.', 'BAD_REQUEST'],
    ['an unknown channel', 'admin', { stream_ids: [999999] }, 'Invalid channel ID 999999. No invites were sent.', 'BAD_REQUEST'],
    ['an unknown group', 'admin', { group_ids: [999999] }, 'Invalid user group', 'BAD_REQUEST'],
    [
      'a welcome text from a member',
      'member',
      { welcome_message_custom_text: 'Hi' },
      'Must be an organization administrator',
      'UNAUTHORIZED_PRINCIPAL',
    ],
  ] as const)('refuses %s and invites nobody', async (_what, who, fields, msg, code) => {
    const res = await t.api.post('/invites', t.cast[who], { invitee_emails: 'nobody@example.com', stream_ids: [], ...fields });
    expect([res.status, res.body]).toEqual([400, { result: 'error', msg, code }]);
    expect(await invitesTo('nobody@example.com')).toEqual([]);
  });

  it("refuses members outside the organization's can_invite_users_group", async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ can_invite_users_group: groups['role:administrators'] });
    try {
      const res = await t.api.post('/invites', t.cast.member, { invitee_emails: 'nobody@example.com', stream_ids: [] });
      expect(res.body).toEqual({ result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ can_invite_users_group: groups['role:members'] });
    }
  });

  it('skips addresses with accounts, inviting the others (sent_invitations true); with none left, invites nobody', async () => {
    const res = await t.api.post('/invites', t.cast.admin, {
      invitee_emails: 'Member@example.com, deactivated@example.com, dave@example.com',
      stream_ids: [],
    });
    expect([res.status, res.body]).toEqual([
      400,
      failed(
        "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
        [
          ['Member@example.com', 'Already has an account.', false],
          ['deactivated@example.com', 'Account has been deactivated.', true],
        ],
        true,
      ),
    ]);
    expect(await invitesTo('dave@example.com')).toHaveLength(1);
    expect((await queuedEmails(t.ctx.db, 'dave@example.com')).map((m) => m.template).sort()).toEqual(['invitation', 'invitation_reminder']);
    const none = await t.api.post('/invites', t.cast.admin, { invitee_emails: 'member@example.com', stream_ids: [] });
    expect(none.body).toEqual(
      failed("We weren't able to invite anyone.", [['member@example.com', 'Already has an account.', false]], false),
    );
  });

  it("invites nobody when any address is invalid or outside the organization's domains", async () => {
    const bad = await t.api.post('/invites', t.cast.admin, { invitee_emails: 'erin@example.com, not-an-address', stream_ids: [] });
    expect(bad.body).toEqual(
      failed("Some emails did not validate, so we didn't send any invitations.", [['not-an-address', 'Invalid address.', false]], false),
    );
    expect(await invitesTo('erin@example.com')).toEqual([]);
    // A disposable-mail domain, while the organization refuses them (disallow_disposable_email_addresses, the default).
    const throwaway = await t.api.post('/invites', t.cast.admin, { invitee_emails: 'erin@mailinator.com', stream_ids: [] });
    expect(throwaway.body).toEqual(
      failed(
        "Some emails did not validate, so we didn't send any invitations.",
        [['erin@mailinator.com', 'Please use your real email address.', false]],
        false,
      ),
    );
    await t.ctx.db('realms').where({ id: t.realmId }).update({ disallow_disposable_email_addresses: false });
    try {
      expect((await t.api.post('/invites', t.cast.admin, { invitee_emails: 'erin@mailinator.com', stream_ids: [] })).status).toBe(200);
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ disallow_disposable_email_addresses: true });
    }
    await t.ctx.db('realms').where({ id: t.realmId }).update({ emails_restricted_to_domains: true });
    await t.ctx.db('realm_domains').insert({ realm_id: t.realmId, domain: 'example.com', allow_subdomains: false });
    try {
      const res = await t.api.post('/invites', t.cast.admin, {
        invitee_emails: 'erin@example.org, erin+tag@example.com, erin@example.com',
        stream_ids: [],
      });
      expect(res.body).toEqual(
        failed(
          "Some emails did not validate, so we didn't send any invitations.",
          [
            ['erin@example.org', 'Outside your domain.', false],
            ['erin+tag@example.com', 'Email addresses containing + are not allowed.', false],
          ],
          false,
        ),
      );
      expect(await invitesTo('erin@example.com')).toEqual([]);
    } finally {
      await t.ctx.db('realm_domains').where({ realm_id: t.realmId }).del();
      await t.ctx.db('realms').where({ id: t.realmId }).update({ emails_restricted_to_domains: false });
    }
  });

  it("refuses a new account's invitations when anyone may join", async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ invite_required: false });
    try {
      const res = await t.api.post('/invites', t.cast.member, { invitee_emails: 'fay@example.com', stream_ids: [] });
      expect(res.body).toEqual(
        failed(
          'Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.',
          [],
          false,
        ),
      );
      const admin = await t.api.post('/invites', t.cast.admin, { invitee_emails: 'fay@example.com', stream_ids: [] });
      expect(admin.status).toBe(200);
    } finally {
      await t.ctx.db('realms').where({ id: t.realmId }).update({ invite_required: true });
    }
  });

  it('queues a reminder for two days before the link expires, replaced by a resend, withdrawn by revoking or joining', async () => {
    /** The reminders waiting for `email`: when each is due (milliseconds). */
    const reminders = async (email: string) =>
      (await t.ctx.db('outgoing_emails').where({ to_address: email, template: 'invitation_reminder', state: 0 })).map((r) =>
        Number(r.next_attempt_at),
      );
    await t.api.post('/invites', t.cast.admin, { invitee_emails: 'rem@example.com', stream_ids: [] });
    const [invite] = await invitesTo('rem@example.com');
    expect(await reminders('rem@example.com')).toEqual([(Number(invite.expires_at) - 2 * 86400) * 1000]);
    const [reminder] = await queuedEmails(t.ctx.db, 'rem@example.com').then((ms) => ms.filter((m) => m.template === 'invitation_reminder'));
    expect(reminder!.subject).toBe('Reminder: Test Admin invited you to join Test Organization');
    expect(reminder!.text_body).toContain('/accounts/do_confirm/');
    // A resend mails the invitation again and keeps one reminder.
    expect((await t.api.post(`/invites/${invite.id}/resend`, t.cast.admin)).status).toBe(200);
    expect(await reminders('rem@example.com')).toHaveLength(1);
    expect((await t.api.delete(`/invites/${invite.id}`, t.cast.admin)).status).toBe(200);
    expect(await reminders('rem@example.com')).toEqual([]);
    // A link valid for less than four days gets none.
    await t.api.post('/invites', t.cast.admin, {
      invitee_emails: 'brief@example.com',
      stream_ids: [],
      invite_expires_in_minutes: 3 * 24 * 60,
    });
    expect(await invitesTo('brief@example.com')).toHaveLength(1);
    expect(await reminders('brief@example.com')).toEqual([]);
  });

  it('revokes: the sender or an administrator; then it is gone and cannot be revoked or resent again', async () => {
    await t.api.post('/invites', t.cast.admin, { invitee_emails: 'gil@example.com', stream_ids: [] });
    const [gil] = await invitesTo('gil@example.com');
    const notHis = await t.api.delete(`/invites/${gil.id}`, t.cast.member);
    expect(notHis.body).toEqual({ result: 'error', msg: 'Must be an organization administrator', code: 'BAD_REQUEST' });
    const member = await register(t, t.cast.member, { event_types: ['invites_changed'] });
    const [ann] = await invitesTo('ann@example.com');
    const own = await t.api.delete(`/invites/${ann.id}`, t.cast.member);
    expect(own.body).toEqual({ result: 'success', msg: '' });
    expect((await pending(t, member)).map((e) => e.type)).toEqual(['invites_changed']);
    expect((await invitesTo('ann@example.com'))[0].status).toBe(2);
    expect((await t.api.get('/invites', t.cast.member)).body.invites.map((i: any) => i.email)).toEqual(['bob@example.com']);
    for (const again of [t.api.delete(`/invites/${ann.id}`, t.cast.member), t.api.post(`/invites/${ann.id}/resend`, t.cast.member, {})]) {
      expect((await again).body).toEqual({ result: 'error', msg: 'No such invitation', code: 'BAD_REQUEST' });
    }
    expect((await t.api.delete('/invites/999999', t.cast.admin)).body.msg).toBe('No such invitation');
    expect((await t.api.delete(`/invites/${gil.id}`, t.cast.admin)).status).toBe(200);
  });

  it('resends the same link to the same address', async () => {
    const [bob] = await invitesTo('bob@example.com');
    expect((await t.api.post(`/invites/${bob.id}/resend`, t.cast.moderator, {})).body.msg).toBe('Must be an organization administrator');
    const res = await t.api.post(`/invites/${bob.id}/resend`, t.cast.admin, {});
    expect([res.status, res.body]).toEqual([200, { result: 'success', msg: '' }]);
    const mails = await queuedEmails(t.ctx.db, 'bob@example.com');
    expect(mails).toHaveLength(2);
    expect(linkIn(mails[1]!.text_body, 'http://127.0.0.1:9991/accounts/')).toBe(
      linkIn(mails[0]!.text_body, 'http://127.0.0.1:9991/accounts/'),
    );
  });

  it('DELETE /invites/multiuse/{id}: the maker or an administrator revokes a link, once', async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ create_multiuse_invite_group: groups['role:members'] });
    const made = await t.api.post('/invites/multiuse', t.cast.member, {});
    await t.ctx.db('realms').where({ id: t.realmId }).update({ create_multiuse_invite_group: groups['role:administrators'] });
    const adminsLink = await t.api.post('/invites/multiuse', t.cast.admin, {});
    const idOf = async (link: string) =>
      (await t.ctx
        .db('multiuse_invites')
        .where({ link_key: /\/join\/([a-z0-9]+)\//.exec(link)![1] })
        .first())!.id;
    const mine = await idOf(made.body.invite_link);
    const theirs = await idOf(adminsLink.body.invite_link);
    expect((await t.api.delete(`/invites/multiuse/${theirs}`, t.cast.member)).body.msg).toBe('Must be an organization administrator');
    expect((await t.api.delete(`/invites/multiuse/${mine}`, t.cast.member)).body).toEqual({ result: 'success', msg: '' });
    expect((await t.api.delete(`/invites/multiuse/${mine}`, t.cast.admin)).body.msg).toBe('Invitation has already been revoked');
    expect((await t.api.delete('/invites/multiuse/999999', t.cast.admin)).body.msg).toBe('No such invitation');
    const key = /\/join\/([a-z0-9]+)\//.exec(made.body.invite_link)![1];
    const join = await t.api.post(`/invites/multiuse/${key}/accept`, null, {
      email: 'late@example.com',
      password: 'a-good-password',
      full_name: 'La Te',
    });
    expect(join.body.code).toBe('INVALID_INVITATION');
    expect((await t.api.get('/invites', t.cast.admin)).body.invites.some((i: any) => i.id === mine && i.is_multiuse)).toBe(false);
  });

  it('deactivating a user revokes their usable invitations and links, and tells the administrators', async () => {
    const sender = (
      await t.api.post('/users', t.cast.owner, { email: 'sender@example.com', password: 'a-good-password', full_name: 'Sen Der' })
    ).body.user_id as number;
    await t.ctx.db('users').where({ id: sender }).update({ date_joined: 0 });
    const senderRow = (await t.ctx.db('users').where({ id: sender }).first())!;
    const asSender = { ...senderRow, is_bot: false, is_active: true } as never;
    expect((await t.api.post('/invites', asSender, { invitee_emails: 'hal@example.com', stream_ids: [] })).status).toBe(200);
    expect(await t.ctx.db('outgoing_emails').where({ to_address: 'hal@example.com', template: 'invitation_reminder' })).toHaveLength(1);
    await t.ctx.db('realms').where({ id: t.realmId }).update({ create_multiuse_invite_group: groups['role:members'] });
    const link = await t.api.post('/invites/multiuse', asSender, {});
    await t.ctx.db('realms').where({ id: t.realmId }).update({ create_multiuse_invite_group: groups['role:administrators'] });
    const admin = await register(t, t.cast.admin, { event_types: ['invites_changed'] });
    expect((await t.api.delete(`/users/${sender}`, t.cast.owner)).status).toBe(200);
    expect((await invitesTo('hal@example.com'))[0].status).toBe(2);
    // Its reminder, queued with it, is withdrawn: it would carry a dead link.
    expect(await t.ctx.db('outgoing_emails').where({ to_address: 'hal@example.com', template: 'invitation_reminder' })).toEqual([]);
    const key = /\/join\/([a-z0-9]+)\//.exec(link.body.invite_link)![1];
    expect(Boolean((await t.ctx.db('multiuse_invites').where({ link_key: key }).first())!.revoked)).toBe(true);
    expect((await pending(t, admin)).map((e) => e.type)).toContain('invites_changed');
  });
});

eachDatabase('email invitation limits', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(dialect);
  });
  afterAll(() => t.close());

  const DAILY =
    'To protect users, Zulip limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.';
  const limited = {
    result: 'error',
    msg: DAILY,
    code: 'INVITATION_FAILED',
    errors: [],
    sent_invitations: false,
    license_limit_reached: false,
    daily_limit_reached: true,
  };

  it("stops at the organization's daily limit, resends included", async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ max_invites: 3 });
    expect((await t.api.post('/invites', t.cast.admin, { invitee_emails: 'a@example.com, b@example.com', stream_ids: [] })).status).toBe(
      200,
    );
    const over = await t.api.post('/invites', t.cast.admin, { invitee_emails: 'c@example.com, d@example.com', stream_ids: [] });
    expect([over.status, over.body]).toEqual([400, limited]);
    const a = (await t.ctx.db('email_invites').where({ email: 'a@example.com' }).first())!;
    expect((await t.api.post(`/invites/${a.id}/resend`, t.cast.admin, {})).status).toBe(200);
    expect((await t.api.post(`/invites/${a.id}/resend`, t.cast.admin, {})).body).toEqual(limited);
    // A day later the count starts again.
    await t.ctx.db('invitations_sent').update({ sent_at: Math.floor(Date.now() / 1000) - 86401 });
    expect((await t.api.post('/invites', t.cast.admin, { invitee_emails: 'c@example.com', stream_ids: [] })).status).toBe(200);
  });

  it('new organizations share one daily limit; an older one, or a raised limit, is outside it', async () => {
    await t.ctx.db('realms').where({ id: t.realmId }).update({ max_invites: null });
    await t.ctx.db('invitations_sent').del();
    const other = await doCreateRealm(t.ctx.db, { stringId: 'other', name: 'Other' });
    await t.ctx.db('invitations_sent').insert({ realm_id: other, sent_at: Math.floor(Date.now() / 1000), count: 100 });
    const res = await t.api.post('/invites', t.cast.admin, { invitee_emails: 'e@example.com', stream_ids: [] });
    expect(res.body).toEqual(limited);
    await t.ctx.db('realms').where({ id: t.realmId }).update({ max_invites: 500 });
    expect((await t.api.post('/invites', t.cast.admin, { invitee_emails: 'e@example.com', stream_ids: [] })).status).toBe(200);
    await t.ctx
      .db('realms')
      .where({ id: t.realmId })
      .update({ max_invites: null, date_created: Math.floor(Date.now() / 1000) - 8 * 86400 });
    expect((await t.api.post('/invites', t.cast.admin, { invitee_emails: 'f@example.com', stream_ids: [] })).status).toBe(200);
  });
});
