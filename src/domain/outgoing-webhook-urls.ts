import { BlockList, isIP } from 'node:net';

/**
 * Which addresses an outgoing webhook may be sent to. Zulip's server sends
 * them through its Smokescreen proxy, which refuses private networks; Parley
 * has no proxy, so it applies the same rule itself: an address that is
 * private, loopback, link-local, unspecified, multicast or reserved is
 * refused, unless the operator allows it (OUTGOING_WEBHOOK_ALLOWED_HOSTS:
 * host names, addresses and CIDR ranges). A host name the operator lists
 * is trusted whatever it resolves to; any other name must resolve only to
 * allowed addresses — every address it resolves to is checked, not just the
 * first — and the connection goes to the address that was checked, so a
 * second, different DNS answer cannot send it elsewhere
 * (src/actions/outgoing-webhooks.ts).
 */

/** Ranges no webhook reaches by default (IANA's special-purpose registries, what is not globally reachable). */
const PRIVATE_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network", the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];
const PRIVATE_V6: Array<[string, number]> = [
  ['::', 128], // unspecified
  ['::1', 128],
  // An IPv4-mapped address (::ffff:a.b.c.d) is checked by Node's BlockList
  // against the IPv4 ranges above; the deprecated IPv4-compatible form is
  // refused whole.
  ['::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const privateRanges = new BlockList();
for (const [net, prefix] of PRIVATE_V4) privateRanges.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of PRIVATE_V6) privateRanges.addSubnet(net, prefix, 'ipv6');

const familyOf = (address: string): 'ipv4' | 'ipv6' | null => {
  const f = isIP(address);
  return f === 4 ? 'ipv4' : f === 6 ? 'ipv6' : null;
};

/** The host of a URL as an address or a name: IPv6 literals lose their brackets, names their case and final dot. */
export function urlHost(url: URL): string {
  const h = url.hostname.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h.replace(/\.$/, '');
}

export class OutgoingUrlPolicy {
  private readonly names = new Set<string>();
  private readonly allowed = new BlockList();

  /** `entries`: OUTGOING_WEBHOOK_ALLOWED_HOSTS as src/config/outgoing-webhooks.ts checked it. */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address, prefix] = entry.split('/');
      const family = familyOf(address!);
      if (family === null) this.names.add(entry.toLowerCase().replace(/\.$/, ''));
      else if (prefix === undefined) this.allowed.addAddress(address!, family);
      else this.allowed.addSubnet(address!, Number(prefix), family);
    }
  }

  /** The operator listed this host name: its addresses are not checked. */
  allowsName(host: string): boolean {
    return this.names.has(host);
  }

  /** Whether a webhook may connect to this address (a literal IPv4 or IPv6 address). */
  allowsAddress(address: string): boolean {
    const family = familyOf(address);
    if (family === null) return false;
    if (this.allowed.check(address, family)) return true;
    return !privateRanges.check(address, family);
  }
}
