import { flagMask, flagsToApi } from '../src/domain/flags';
import { constantTimeEqual, generateApiKey, hashPassword, verifyPassword } from '../src/domain/secrets';

/** Domain pieces that need no database: API keys and passwords, message flag bits. */
describe('secrets', () => {
  it('makes 32-character alphanumeric API keys that differ', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey()));
    expect(keys.size).toBe(200);
    for (const k of keys) expect(k).toMatch(/^[A-Za-z0-9]{32}$/);
  });

  it('hashes passwords with a salt and verifies them', async () => {
    const a = await hashPassword('hunter22');
    const b = await hashPassword('hunter22');
    expect(a).not.toBe(b);
    expect(await verifyPassword('hunter22', a)).toBe(true);
    expect(await verifyPassword('hunter23', a)).toBe(false);
    expect(await verifyPassword('x', null)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });

  it('compares secrets of any length safely', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });
});

describe('flags', () => {
  it('puts flags at Zulip bit positions and lists them for the API', () => {
    expect(flagMask('read')).toBe(1);
    expect(flagMask('historical')).toBe(1024);
    expect(flagsToApi(flagMask('read') + flagMask('starred') + flagMask('is_private'))).toEqual(['read', 'starred']);
    expect(flagsToApi(flagMask('topic_wildcard_mentioned'))).toEqual(['topic_wildcard_mentioned', 'wildcard_mentioned']);
  });
});
