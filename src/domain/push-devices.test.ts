import { classifyRegistration, decodeStandardBase64, pushContent } from './push-devices';

describe('pushContent', () => {
  it('reads rendered HTML as text: mentions, emphasis, entities, one line per block', () => {
    expect(
      pushContent(
        '<p>Hi <span class="user-mention" data-user-id="4">@Test Member</span>, <strong>now</strong> &amp; then &lt;3 &#x1F600;</p>\n<p>second</p>',
      ),
    ).toBe('Hi @Test Member, now & then <3 😀\nsecond');
  });

  it("leaves a name that is no entity as written, even one of Object's own properties", () => {
    // A lookup in a plain object found `constructor` and printed a function's source.
    expect(pushContent('<p>&amp; &constructor; &toString; &__proto__; &hasOwnProperty;</p>')).toBe(
      '& &constructor; &toString; &__proto__; &hasOwnProperty;',
    );
  });

  it('truncates to 200 characters (code points) with an ellipsis', () => {
    const long = pushContent(`<p>${'é'.repeat(150)}${'😀'.repeat(100)}</p>`);
    expect([...long]).toHaveLength(200);
    expect(long.endsWith('😀…')).toBe(true);
    expect(pushContent(`<p>${'a'.repeat(200)}</p>`)).toBe('a'.repeat(200));
  });
});

describe('decodeStandardBase64', () => {
  it.each([
    ['', 0],
    ['QQ==', 1],
    ['QUI=', 2],
    ['QUJD', 3],
  ])('accepts %p', (text, length) => expect(decodeStandardBase64(text)?.length).toBe(length));

  it.each(['QQ', 'QQ=', 'Q===', 'QU I=', 'QUJD\n', '-_-_', 'QUJD====', 'QQ==QQ=='])('refuses %p', (text) => {
    expect(decodeStandardBase64(text)).toBeNull();
  });
});

describe('classifyRegistration', () => {
  const key = { push_key: 'k', push_key_id: 1 };
  const token = { token_kind: 'fcm' as const, token_id: 't', bouncer_public_key: 'b', encrypted_push_registration: 'e' };
  it('names the request by its complete groups', () => {
    expect(classifyRegistration({ ...key, ...token })).toBe('register');
    expect(classifyRegistration(key)).toBe('rotate-key');
    expect(classifyRegistration(token)).toBe('rotate-token');
  });
});
