import { eachDatabase } from './support/databases';
import { pending, register, sendToChannel, startEventsServer, stopEventsServer } from './support/events';
import type { TestServer } from './support/server';

eachDatabase('linkifiers on the wire', (dialect) => {
  let t: TestServer;
  beforeAll(async () => {
    ({ t } = await startEventsServer(dialect));
  });
  afterAll(async () => {
    await stopEventsServer(t);
  });

  const addLinkifier = async (pattern: string, url_template: string) => {
    const res = await t.api.post('/realm/filters', t.cast.admin, { pattern, url_template });
    expect(res.status).toBe(200);
    return res.body.id as number;
  };
  const fetch = async (id: number) => (await t.api.get(`/messages/${id}`, t.cast.member, {})).body.message as Record<string, any>;

  it('links new messages and topics; sent HTML stays, topic links follow the linkifiers, on every read', async () => {
    const c = await register(t, t.cast.member, { event_types: ['message'], apply_markdown: true });
    const id = await addLinkifier('#(?P<id>[0-9]+)', 'https://tracker.example/{id}');
    const msg = await sendToChannel(t, t.cast.member, 'general', 'bug #42', 'see #42');
    const link = '<a href="https://tracker.example/42">#42</a>';
    const [event] = await pending(t, c);
    expect(event!.message.content).toBe(`<p>see ${link}</p>`);
    expect(event!.message.topic_links).toEqual([{ text: '#42', url: 'https://tracker.example/42' }]);
    expect(await fetch(msg)).toMatchObject({
      content: `<p>see ${link}</p>`,
      topic_links: [{ text: '#42', url: 'https://tracker.example/42' }],
    });

    // A changed linkifier: the stored HTML is kept (Zulip does not render old messages again),
    // the topic's links are computed again, also for a message the cache holds.
    await t.api.patch(`/realm/filters/${id}`, t.cast.admin, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://new.example/{id}' });
    expect(await fetch(msg)).toMatchObject({
      content: `<p>see ${link}</p>`,
      topic_links: [{ text: '#42', url: 'https://new.example/42' }],
    });
    const rendered = await t.api.post('/messages/render', t.cast.member, { content: 'see #42' });
    expect(rendered.body.rendered).toBe('<p>see <a href="https://new.example/42">#42</a></p>');
    await t.api.delete(`/realm/filters/${id}`, t.cast.admin);
    expect((await fetch(msg)).topic_links).toEqual([]);
  });

  it('links the content of an edit and the topic of a move with the current linkifiers', async () => {
    const id = await addLinkifier('PR (?P<id>[0-9]+)', 'https://pr.example/{id}');
    const msg = await sendToChannel(t, t.cast.member, 'general', 'plain', 'nothing');
    const c = await register(t, t.cast.member, { event_types: ['update_message'] });
    const res = await t.api.patch(`/messages/${msg}`, t.cast.member, { content: 'fixed by PR 7', topic: 'PR 7' });
    expect(res.status).toBe(200);
    const [event] = await pending(t, c);
    expect(event!.rendered_content).toBe('<p>fixed by <a href="https://pr.example/7">PR 7</a></p>');
    expect(event!.topic_links).toEqual([{ text: 'PR 7', url: 'https://pr.example/7' }]);
    await t.api.delete(`/realm/filters/${id}`, t.cast.admin);
  });
});
