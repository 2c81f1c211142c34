import { loadConfig } from '../src/config';
import { messageIdOf, retryDelayMs } from '../src/domain/outgoing-emails';
import { html, renderEmail, type EmailTemplate } from '../src/emails/template';
import { mailFailure } from '../src/mail/errors';

/** The mail settings (src/config/email.ts), a template's language, and what a refusal means. */
describe('mail settings', () => {
  const cfg = (env: Record<string, string>) => loadConfig({ EXTERNAL_URL: 'https://chat.example.com:8443', ...env });

  it('without EMAIL_HOST: no SMTP; From is noreply@ the host of EXTERNAL_URL (its port left out)', () => {
    const c = cfg({});
    expect(c.emailHost).toBeNull();
    expect(c.noreplyEmailAddress).toBe('noreply@chat.example.com');
    expect(c.emailHostUser).toBeNull();
    expect(c.emailPort).toBe(25);
  });

  it('an IPv6 EXTERNAL_URL gives an address literal', () => {
    expect(loadConfig({ HOST: '::1' }).noreplyEmailAddress).toBe('noreply@[IPv6:::1]');
  });

  it('picks the port of the encryption asked for, unless EMAIL_PORT says', () => {
    expect(cfg({ EMAIL_HOST: 'smtp.example.com' }).emailPort).toBe(25);
    expect(cfg({ EMAIL_HOST: 'smtp.example.com', EMAIL_USE_TLS: 'true' }).emailPort).toBe(587);
    expect(cfg({ EMAIL_HOST: 'smtp.example.com', EMAIL_USE_SSL: 'true' }).emailPort).toBe(465);
    expect(cfg({ EMAIL_HOST: 'smtp.example.com', EMAIL_USE_TLS: 'true', EMAIL_PORT: '2525' }).emailPort).toBe(2525);
  });

  it('refuses EMAIL_USE_TLS with EMAIL_USE_SSL, a user without a password (or the reverse), a bad From', () => {
    expect(() => cfg({ EMAIL_USE_TLS: 'true', EMAIL_USE_SSL: 'true' })).toThrow(
      'Invalid configuration: EMAIL_USE_TLS and EMAIL_USE_SSL cannot both be true (STARTTLS on a plain connection, or TLS from the start: set one), got "true, true"',
    );
    expect(() => cfg({ EMAIL_HOST_USER: 'me' })).toThrow(
      'Invalid configuration: EMAIL_HOST_USER is set but EMAIL_HOST_PASSWORD is not (authentication needs both; neither for none), got "me"',
    );
    expect(() => cfg({ EMAIL_HOST_PASSWORD: 'pw' })).toThrow('EMAIL_HOST_PASSWORD is set but EMAIL_HOST_USER is not');
    expect(() => cfg({ EMAIL_USE_TLS: 'yes' })).toThrow('EMAIL_USE_TLS must be true, false, 1 or 0');
    expect(() => cfg({ NOREPLY_EMAIL_ADDRESS: 'Parley <noreply@x.org>' })).toThrow('NOREPLY_EMAIL_ADDRESS must be an email address');
    expect(cfg({ EMAIL_HOST_USER: 'me', EMAIL_HOST_PASSWORD: 'pw' })).toMatchObject({ emailHostUser: 'me', emailHostPassword: 'pw' });
  });

  it('retries back off: doubled per attempt, capped, a tenth of jitter at most', () => {
    expect([1, 2, 3, 4, 5].map((a) => retryDelayMs(a, 30_000, 100_000, 0))).toEqual([30_000, 60_000, 100_000, 100_000, 100_000]);
    expect(retryDelayMs(2, 1000, 10_000, 1)).toBe(2200);
    expect(messageIdOf('abc.123', 'noreply@chat.example.com')).toBe('<abc.123@chat.example.com>');
  });

  it('a 5xx answer to the mail is permanent; 4xx, 503, connection errors and refused credentials are not', () => {
    const smtpError = (code: string, responseCode?: number, command?: string) =>
      Object.assign(new Error(`failed${responseCode ? `: ${responseCode} x` : ''}`), { code, responseCode, command });
    expect(mailFailure(smtpError('EENVELOPE', 550, 'RCPT TO')).permanent).toBe(true);
    expect(mailFailure(smtpError('EMESSAGE', 554, 'DATA')).permanent).toBe(true);
    expect(mailFailure(smtpError('EENVELOPE', 451, 'RCPT TO')).permanent).toBe(false);
    expect(mailFailure(smtpError('EENVELOPE', 503, 'RCPT TO')).permanent).toBe(false);
    expect(mailFailure(smtpError('EAUTH', 535, 'AUTH PLAIN')).permanent).toBe(false);
    expect(mailFailure(smtpError('ESOCKET')).permanent).toBe(false);
    expect(mailFailure(smtpError('ESOCKET')).message).toBe('failed (ESOCKET)');
  });
});

describe('mail templates', () => {
  const greeting: EmailTemplate<{ name: string }> = {
    name: 'greeting',
    languages: {
      en: (d) => ({ subject: `Hello ${d.name}`, text: `Hello ${d.name}`, html: html`<p>Hello ${d.name}</p>` }),
      de: (d) => ({ subject: `Hallo ${d.name}`, text: `Hallo ${d.name}`, html: html`<p>Hallo ${d.name}</p>` }),
      'pt-BR': (d) => ({ subject: `Olá ${d.name}`, text: `Olá ${d.name}`, html: html`<p>Olá ${d.name}</p>` }),
    },
  };

  it("renders in the recipient's language, its base language for a regional one, English for one it lacks", () => {
    expect(renderEmail(greeting, 'de', { name: 'Ute' }).subject).toBe('Hallo Ute');
    expect(renderEmail(greeting, 'de-CH', { name: 'Ute' }).subject).toBe('Hallo Ute');
    expect(renderEmail(greeting, 'pt-BR', { name: 'Ana' }).subject).toBe('Olá Ana');
    expect(renderEmail(greeting, 'en', { name: 'Ann' }).subject).toBe('Hello Ann');
    expect(renderEmail(greeting, 'fr', { name: 'Luc' }).subject).toBe('Hello Luc');
  });

  it('escapes the data in the HTML part, not in the text part', () => {
    const r = renderEmail(greeting, 'de', { name: '<b>Ute</b> & "Co"' });
    expect(r.html.value).toBe('<p>Hallo &lt;b&gt;Ute&lt;/b&gt; &amp; &quot;Co&quot;</p>');
    expect(r.text).toBe('Hallo <b>Ute</b> & "Co"');
  });
});
