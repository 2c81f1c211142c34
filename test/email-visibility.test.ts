import request from 'supertest';
import { eachDatabase } from './support/databases';
import { startTestServer, TestServer } from './support/server';

/** A hidden address stays hidden: the API email becomes a user<id>@host placeholder everywhere. */
eachDatabase('email address visibility', (dialect) => {
  let t: TestServer;
  let hiddenId: number;
  let placeholder: string;
  beforeAll(async () => {
    t = await startTestServer(dialect);
    const defaults = await t.api.patch('/realm/user_settings_defaults', t.cast.owner, { email_address_visibility: 3 });
    expect([defaults.status, defaults.body.result]).toEqual([200, 'success']);
    const res = await t.api.post('/users', t.cast.owner, {
      email: 'secret.person@corp.example',
      password: 'a-good-password',
      full_name: 'Secret Person',
    });
    expect([res.status, res.body.result]).toEqual([200, 'success']);
    hiddenId = res.body.user_id;
    placeholder = `user${hiddenId}@127.0.0.1`;
  });
  afterAll(() => t.close());

  it('shows members only the placeholder, never the real address', async () => {
    const res = await t.api.get(`/users/${hiddenId}`, t.cast.member);
    expect(res.body.user).toMatchObject({ user_id: hiddenId, full_name: 'Secret Person', email: placeholder, delivery_email: null });
    expect(JSON.stringify(res.body)).not.toContain('secret.person');
    const list = await t.api.get('/users', t.cast.member);
    expect(list.body.members.find((u: { user_id: number }) => u.user_id === hiddenId)).toMatchObject({
      email: placeholder,
      delivery_email: null,
    });
    expect(JSON.stringify(list.body)).not.toContain('secret.person');
  });

  it('shows administrators the real address as delivery_email', async () => {
    const res = await t.api.get(`/users/${hiddenId}`, t.cast.admin);
    expect(res.body.user).toMatchObject({ email: placeholder, delivery_email: 'secret.person@corp.example' });
  });

  it('keeps the address out of messages, and the user can log in and authenticate with either', async () => {
    const login = await t.api.post('/fetch_api_key', null, { username: 'secret.person@corp.example', password: 'a-good-password' });
    expect([login.status, login.body.email, login.body.user_id]).toEqual([200, placeholder, hiddenId]);
    const me = await request(t.app).get('/api/v1/users/me').auth(login.body.email, login.body.api_key);
    expect(me.status).toBe(200);
    expect(me.body.delivery_email).toBe('secret.person@corp.example');
    const sent = await request(t.app)
      .post('/api/v1/messages')
      .auth('secret.person@corp.example', login.body.api_key)
      .type('form')
      .send({ type: 'direct', to: JSON.stringify([t.cast.member.id]), content: 'hi' });
    expect([sent.status, sent.body.result]).toEqual([200, 'success']);
    const seen = await t.api.get(`/messages/${sent.body.id}`, t.cast.member);
    // The message as the member reads it names the sender, by the placeholder only.
    expect(seen.body.message).toMatchObject({ id: sent.body.id, sender_id: hiddenId, sender_email: placeholder, content: '<p>hi</p>' });
    expect(seen.body.message.display_recipient).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: hiddenId, email: placeholder })]),
    );
    expect(JSON.stringify(seen.body)).not.toContain('secret.person');
  });
});
