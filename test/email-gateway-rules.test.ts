import { loadConfig } from '../src/config';
import { ConfigError } from '../src/config/checks';
import {
  addressNameOf,
  channelEmailAddress,
  decodeChannelLocalPart,
  gatewayLocalPart,
  isForwardedSubject,
  isMissedMessageToken,
  newMissedMessageToken,
  topicFromSubject,
  withoutFooter,
  withoutQuotedReply,
} from '../src/domain/email-gateway';

describe('email gateway settings', () => {
  it('has no gateway by default, and a loopback listener of 32 MiB when asked for one', () => {
    expect(loadConfig({})).toMatchObject({
      emailGatewayPattern: '',
      emailGatewayPort: null,
      emailGatewayHost: '127.0.0.1',
      emailGatewayMaxMessageBytes: 32 * 1024 * 1024,
      emailGatewayTls: null,
    });
    expect(
      loadConfig({
        EMAIL_GATEWAY_PATTERN: '%s@chat.example.com',
        EMAIL_GATEWAY_PORT: '2525',
        EMAIL_GATEWAY_HOST: '0.0.0.0',
        EMAIL_GATEWAY_MAX_MESSAGE_MIB: '10',
      }),
    ).toMatchObject({
      emailGatewayPattern: '%s@chat.example.com',
      emailGatewayPort: 2525,
      emailGatewayHost: '0.0.0.0',
      emailGatewayMaxMessageBytes: 10 * 1024 * 1024,
    });
    expect(loadConfig({ EMAIL_GATEWAY_PATTERN: 'mail+%s@example.com' }).emailGatewayPattern).toBe('mail+%s@example.com');
  });

  it.each([
    [{ EMAIL_GATEWAY_PATTERN: 'chat.example.com' }, 'EMAIL_GATEWAY_PATTERN must be an email address with one %s in its local part'],
    [{ EMAIL_GATEWAY_PATTERN: '%s@%s.example.com' }, 'EMAIL_GATEWAY_PATTERN must be an email address with one %s in its local part'],
    [{ EMAIL_GATEWAY_PATTERN: 'mail@example.com' }, 'EMAIL_GATEWAY_PATTERN must be an email address with one %s in its local part'],
    [{ EMAIL_GATEWAY_PORT: '2525' }, 'EMAIL_GATEWAY_PORT needs EMAIL_GATEWAY_PATTERN set'],
    [{ EMAIL_GATEWAY_PATTERN: '%s@x.test', EMAIL_GATEWAY_PORT: '99999' }, 'EMAIL_GATEWAY_PORT must be an integer 0..65535'],
    [{ EMAIL_GATEWAY_MAX_MESSAGE_MIB: '0' }, 'EMAIL_GATEWAY_MAX_MESSAGE_MIB must be a positive integer'],
    [{ EMAIL_GATEWAY_TLS_CERT: __filename }, 'EMAIL_GATEWAY_TLS_CERT and EMAIL_GATEWAY_TLS_KEY must be set together'],
    [
      { EMAIL_GATEWAY_TLS_CERT: '/nonexistent.pem', EMAIL_GATEWAY_TLS_KEY: __filename },
      'EMAIL_GATEWAY_TLS_CERT must name a readable PEM file',
    ],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});

describe('email gateway addresses', () => {
  it("shows the channel's name in ASCII, or 'channel' when letters would be lost", () => {
    expect(addressNameOf('general')).toBe('general');
    expect(addressNameOf('dev. help')).toBe('dev-help');
    expect(addressNameOf('Café & Bar')).toBe('cafe-bar');
    expect(addressNameOf('Ελληνικά')).toBe('channel');
    expect(channelEmailAddress('%s@chat.example.com', 'Dev Help', 'abc')).toBe('dev-help.abc.show-sender@chat.example.com');
    expect(channelEmailAddress('%s@chat.example.com', 'Dev Help', 'abc', false)).toBe('dev-help.abc@chat.example.com');
  });

  it('reads the token and the options back, with . or + between the parts', () => {
    const pattern = '%s@chat.example.com';
    expect(gatewayLocalPart(pattern, 'dev-help.abc.show-sender@Chat.Example.com')).toBe('dev-help.abc.show-sender');
    expect(gatewayLocalPart(pattern, 'dev-help.abc@elsewhere.com')).toBeNull();
    expect(gatewayLocalPart('mail+%s@x.test', 'mail+abc@x.test')).toBe('abc');
    expect(gatewayLocalPart('mail+%s@x.test', 'other+abc@x.test')).toBeNull();
    expect(decodeChannelLocalPart('dev-help.ABC.show-sender')).toEqual({ token: 'abc', options: { showSender: true } });
    expect(decodeChannelLocalPart('dev-help+abc+include-footer+prefer-html')).toEqual({
      token: 'abc',
      options: { includeFooter: true, preferText: false },
    });
    expect(decodeChannelLocalPart('abc.include-quotes')).toEqual({ token: 'abc', options: { includeQuotes: true } });
    const mm = newMissedMessageToken();
    expect(mm).toMatch(/^mm[0-9a-f]{32}$/);
    expect(isMissedMessageToken(mm)).toBe(true);
    expect(isMissedMessageToken('mm123')).toBe(false);
  });

  it('makes a topic of the Subject', () => {
    expect(topicFromSubject('Re: Build failed')).toBe('Build failed');
    expect(topicFromSubject('RE: Fwd: [AW: plans]')).toBe('plans');
    expect(topicFromSubject('Re:')).toBe('Email with no subject');
    expect(topicFromSubject('tab\there')).toBe('tabhere');
    expect(topicFromSubject('Regarding the reply')).toBe('Regarding the reply');
    expect(isForwardedSubject('Fwd: the report')).toBe(true);
    expect(isForwardedSubject('Re: Fwd: the report')).toBe(false);
  });

  it('drops a signature and a quoted reply, and keeps a quotation inside the text', () => {
    expect(withoutFooter('Hello\n--\nAlice')).toBe('Hello');
    expect(withoutFooter('a\n--\nb\n--\nc')).toBe('a\n--\nb\n--\nc');
    expect(withoutQuotedReply('Yes.\n\nOn Monday Bob wrote:\n> Shall we?\n')).toBe('Yes.');
    expect(withoutQuotedReply('As you said:\n> the plan\nI agree.')).toBe('As you said:\n> the plan\nI agree.');
    expect(withoutQuotedReply('Fine.\n-----Original Message-----\nFrom: Bob\nShall we?')).toBe('Fine.');
    expect(withoutQuotedReply('No quote at all.\n')).toBe('No quote at all.\n');
  });
});
