import { hasSubdomains, hostLabel, realmHost, realmUrl, urlOnSite } from '../src/domain/realm-address';

describe("an organization's URL, and the organization a Host addresses", () => {
  const cases: Array<[externalUrl: string, stringId: string, url: string]> = [
    ['http://127.0.0.1:9991', '', 'http://127.0.0.1:9991'],
    ['http://127.0.0.1:9991', 'acme', 'http://acme.localhost:9991'],
    ['http://[::1]:9991', 'acme', 'http://acme.localhost:9991'],
    ['http://0.0.0.0:9991', 'acme', 'http://acme.localhost:9991'],
    ['http://localhost:9991', 'acme', 'http://acme.localhost:9991'],
    ['https://chat.example.com', '', 'https://chat.example.com'],
    ['https://chat.example.com', 'acme', 'https://acme.chat.example.com'],
    ['https://chat.example.com:8443', 'acme', 'https://acme.chat.example.com:8443'],
    ['https://example.com/chat', 'acme', 'https://acme.example.com/chat'],
  ];

  it.each(cases)('%s, organization %j: %s', (externalUrl, stringId, url) => {
    expect(realmUrl(externalUrl, stringId)).toBe(url);
  });

  it.each(cases)('and back: the host of %s for %j addresses it', (externalUrl, stringId) => {
    expect(hostLabel(new URL(realmUrl(externalUrl, stringId)).host, externalUrl)).toBe(stringId);
  });

  it("EXTERNAL_URL's own host is the root organization's, whatever its first label", () => {
    expect(hostLabel('chat.example.com', 'https://chat.example.com')).toBe('');
    expect(hostLabel('CHAT.example.com', 'https://chat.example.com')).toBe('');
    expect(hostLabel('chat.example.com:8443', 'https://chat.example.com:8443')).toBe('');
    // Any other host: its first label, without a port.
    expect(hostLabel('chat.example.com', 'http://127.0.0.1:9991')).toBe('chat');
    expect(hostLabel('Acme.localhost:9991', 'http://127.0.0.1:9991')).toBe('acme');
    expect(hostLabel('localhost:9991', 'http://127.0.0.1:9991')).toBe('localhost');
    expect(hostLabel(undefined, 'http://127.0.0.1:9991')).toBe('');
  });

  it('names the host of bot and placeholder addresses without the port', () => {
    expect(realmHost('http://127.0.0.1:9991', '')).toBe('127.0.0.1');
    expect(realmHost('http://127.0.0.1:9991', 'acme')).toBe('acme.localhost');
    expect(realmHost('https://chat.example.com:8443', 'acme')).toBe('acme.chat.example.com');
  });

  it('knows an address other than the loopback has no subdomains, and still names a URL without throwing', () => {
    expect(hasSubdomains('http://127.0.0.1:9991')).toBe(true);
    expect(hasSubdomains('https://chat.example.com')).toBe(true);
    expect(hasSubdomains('http://10.0.0.5:9991')).toBe(false);
    expect(realmUrl('http://10.0.0.5:9991', 'acme')).toBe('http://acme.10.0.0.5:9991');
    expect(urlOnSite('http://acme.10.0.0.5:9991', '/avatar/1')).toBe('http://acme.10.0.0.5:9991/avatar/1');
    expect(urlOnSite('https://example.com/chat', '/avatar/1')).toBe('https://example.com/avatar/1');
  });
});
