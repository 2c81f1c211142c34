import request from 'supertest';
import { INTEGRATIONS } from '../src/integrations';
import { startTestServer, type TestServer } from './support/server';

describe('the integrations page (/api/docs/integrations)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite');
  });
  afterAll(async () => t.close());

  it('gives every integration its URL on this server, its summary and its setup steps', async () => {
    const res = await request(t.app).get('/api/docs/integrations').set('Host', 'chat.example.org');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(INTEGRATIONS.length).toBeGreaterThan(1);
    for (const i of INTEGRATIONS) {
      expect(res.text).toContain(`<section id="${i.name}">`);
      expect(res.text).toContain(`http://chat.example.org/api/v1/external/${i.name}?api_key=BOT_API_KEY&#38;stream=CHANNEL`);
      expect(res.text).toContain(`<a href="#${i.name}">`);
      for (const o of i.docs.options ?? []) expect(res.text).toContain(`<code>${o.name}</code>`);
    }
    // Markdown of the steps rendered, no raw HTML let through.
    expect(res.text).toContain('<code>stream</code>');
    expect(res.text).not.toMatch(/<script/);
  });
});
