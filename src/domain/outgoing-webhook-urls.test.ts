import { OutgoingUrlPolicy, urlHost } from './outgoing-webhook-urls';

describe('OutgoingUrlPolicy', () => {
  const none = new OutgoingUrlPolicy([]);

  it('refuses private, loopback, link-local, unspecified, multicast and reserved addresses by default', () => {
    for (const a of [
      '127.0.0.1',
      '127.8.9.10',
      '10.0.0.1',
      '172.16.5.5',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      'fe80::1',
      'fd00::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
    ]) {
      expect([a, none.allowsAddress(a)]).toEqual([a, false]);
    }
  });

  it('allows public addresses', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111']) expect([a, none.allowsAddress(a)]).toEqual([a, true]);
  });

  it('allows what the operator lists: addresses, CIDR ranges, and host names whatever they resolve to', () => {
    const p = new OutgoingUrlPolicy(['127.0.0.1', '10.20.0.0/16', 'fd12::/16', 'Bots.Internal.']);
    expect(p.allowsAddress('127.0.0.1')).toBe(true);
    expect(p.allowsAddress('127.0.0.2')).toBe(false);
    expect(p.allowsAddress('10.20.3.4')).toBe(true);
    expect(p.allowsAddress('10.21.0.1')).toBe(false);
    expect(p.allowsAddress('fd12:1::5')).toBe(true);
    expect(p.allowsAddress('fd13::5')).toBe(false);
    expect(p.allowsName('bots.internal')).toBe(true);
    expect(p.allowsName('other.internal')).toBe(false);
    expect(none.allowsName('bots.internal')).toBe(false);
  });

  it('reads a URL’s host without brackets, case or final dot', () => {
    expect(urlHost(new URL('http://[::1]:8080/x'))).toBe('::1');
    expect(urlHost(new URL('https://Example.COM./hook'))).toBe('example.com');
    expect(urlHost(new URL('http://[::ffff:127.0.0.1]/'))).toBe('::ffff:7f00:1');
  });
});
