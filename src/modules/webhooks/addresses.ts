// Where webhooks may go: public addresses only, unless TOLOV_WEBHOOK_ALLOW_PRIVATE (development and tests).
import { BlockList, isIP } from 'node:net';

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
// Inside global unicast, the blocks not reachable from the internet (IANA's special-purpose registry).
for (const [network, prefix] of [
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
  ['5f00::', 16], // SRv6 segment ids
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/**
 * The only IPv6 addresses the internet routes (IANA's global unicast). Listing the private blocks outside it missed
 * NAT64's local-use 64:ff9b:1::/48 (RFC 8215); everything outside it is refused instead: loopback, unique local
 * (fd00:ec2::254, cloud metadata), link-local, multicast, discard, both NAT64 prefixes (the IPv4 they carry reaches a
 * translator of someone's own network, not the internet) and whatever IANA has yet to assign.
 */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

const PRIVATE_NAMES = /(^|\.)(localhost|localdomain|internal|local)$|^metadata(\.google\.internal)?$/i;

/** The eight 16-bit groups of an IPv6 address (with a dotted IPv4 tail or `::`), or null if it is not one. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail, extra] = text.split('::');
  if (extra !== undefined) return null;
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array<number>(tail === undefined ? 0 : missing).fill(0), ...right];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/**
 * The IPv4 address an IPv6 address carries, in every form that routes to it: IPv4-compatible (::a.b.c.d),
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), 6to4 (2002:AABB:CCDD::) and Teredo (2001:0::,
 * the client's address inverted). Null when it carries none.
 */
function embeddedIpv4(groups: number[]): string | null {
  const zeros = (count: number) => groups.slice(0, count).every((group) => group === 0);
  if (zeros(6)) return ipv4Of(groups[6]!, groups[7]!);
  if (zeros(5) && groups[5] === 0xffff) return ipv4Of(groups[6]!, groups[7]!);
  if (zeros(4) && groups[4] === 0xffff && groups[5] === 0) return ipv4Of(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return ipv4Of(groups[1]!, groups[2]!);
  if (groups[0] === 0x2001 && groups[1] === 0) return ipv4Of(~groups[6]! & 0xffff, ~groups[7]! & 0xffff);
  return null;
}

/**
 * True for an address a webhook must never reach: private, loopback, link-local, ULA, metadata, outside IPv6 global
 * unicast, or carrying a private IPv4 address (:: and ::1 carry 0.0.0.0 and 0.0.0.1).
 */
export function isPrivateAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return PRIVATE.check(address, 'ipv4');
  if (version !== 6) return true;
  if (PRIVATE.check(address, 'ipv6')) return true;
  const groups = ipv6Groups(address);
  if (groups === null) return true;
  const carried = embeddedIpv4(groups);
  if (carried !== null) return PRIVATE.check(carried, 'ipv4');
  return !GLOBAL_UNICAST.check(address, 'ipv6');
}

const NOT_ABSOLUTE = 'must be an absolute URL';
const CREDENTIALS = 'must not carry credentials';
const NOT_HTTPS = 'must be an https:// URL';
const NOT_PUBLIC_ADDRESS = 'must point to a public address';
const NOT_PUBLIC_NAME = 'must point to a public host name';
/** Every reason a URL's form is refused, as the API says it (the dashboard says each in the page's language). */
export type UrlRefusal = typeof NOT_ABSOLUTE | typeof CREDENTIALS | typeof NOT_HTTPS | typeof NOT_PUBLIC_ADDRESS | typeof NOT_PUBLIC_NAME;
/** The refusals that TOLOV_WEBHOOK_ALLOW_PRIVATE lifts: what a developer aiming at their own machine meets. */
export const LOCAL_ONLY_REFUSALS: ReadonlySet<UrlRefusal> = new Set([NOT_HTTPS, NOT_PUBLIC_ADDRESS, NOT_PUBLIC_NAME]);

/** Why a URL may not receive webhooks, judged by its form alone; null when it may. */
export function refuseByForm(url: string, allowPrivate: boolean): UrlRefusal | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return NOT_ABSOLUTE;
  }
  if (parsed.username || parsed.password) return CREDENTIALS;
  if (allowPrivate) return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? null : NOT_HTTPS;
  if (parsed.protocol !== 'https:') return NOT_HTTPS;
  // A trailing dot names the same host (localhost. is localhost).
  const host = parsed.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  if (isIP(host) !== 0) return isPrivateAddress(host) ? NOT_PUBLIC_ADDRESS : null;
  if (PRIVATE_NAMES.test(host) || !host.includes('.')) return NOT_PUBLIC_NAME;
  return null;
}
