/** Pieces of GET /messages checked once, not per database (the query-string case on SQLite). */
describe('search highlighting and anchors (units)', () => {
  it('never highlights inside character references or tags', async () => {
    const { highlightHtml } = await import('../src/serializers/highlight');
    expect(highlightHtml('<p>say &quot;quote&quot; &amp; amp</p>', ['quot', 'amp'])).toBe(
      '<p>say &quot;<span class="highlight">quote</span>&quot; &amp; <span class="highlight">amp</span></p>',
    );
    expect(highlightHtml('<a href="x">p</a>', ['href'])).toBe('<a href="x">p</a>');
  });

  it('refuses impossible dates and accepts zones', async () => {
    const { parseAnchorDate } = await import('../src/access/fetch-messages');
    expect(() => parseAnchorDate('2024-02-30')).toThrow('Invalid anchor_date');
    expect(() => parseAnchorDate('2024-01-01T25:00')).toThrow('Invalid anchor_date');
    expect(parseAnchorDate('2024-01-01')).toBe(1704067200);
    expect(parseAnchorDate('2024-01-01T01:00:00+01:00')).toBe(1704067200);
  });
});

describe('form-encoded query strings', () => {
  it('reads a narrow whose spaces were encoded as +', async () => {
    const { startTestServer: start } = await import('./support/server');
    const request = (await import('supertest')).default;
    const t = await start('sqlite');
    try {
      const { createChannel: create } = await import('./support/server');
      await create(t, 'plus', [t.cast.member]);
      const sent = await t.api.post('/messages', t.cast.member, { type: 'channel', to: 'plus', topic: "a b! (it's) *", content: 'spaced' });
      const qs = new URLSearchParams({
        anchor: 'newest',
        num_before: '5',
        num_after: '0',
        narrow: JSON.stringify([{ operator: 'topic', operand: "a b! (it's) *" }]),
      }).toString();
      expect(qs).toContain('a+b');
      const res = await request(t.app).get(`/api/v1/messages?${qs}`).auth(t.cast.member.email, t.cast.member.api_key);
      expect(res.status).toBe(200);
      expect(res.body.messages.map((m: any) => m.id)).toEqual([sent.body.id]);
    } finally {
      await t.close();
    }
  });
});
