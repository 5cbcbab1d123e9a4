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
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64 of IPv4
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local, including fd00:ec2::254 (cloud metadata)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

const PRIVATE_NAMES = /(^|\.)(localhost|localdomain|internal|local)$|^metadata(\.google\.internal)?$/i;

/** True for an address a webhook must never reach: private, loopback, link-local, ULA, metadata, or mapped to one. */
export function isPrivateAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return PRIVATE.check(address, 'ipv4');
  if (version !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isPrivateAddress(mapped[1]!);
  // IPv4-mapped written in hex (::ffff:7f00:1).
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (mappedHex) {
    const high = parseInt(mappedHex[1]!, 16);
    const low = parseInt(mappedHex[2]!, 16);
    return isPrivateAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  return PRIVATE.check(address, 'ipv6');
}

/** Why a URL may not receive webhooks, judged by its form alone; null when it may. */
export function refuseByForm(url: string, allowPrivate: boolean): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (allowPrivate) return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? null : 'must be an https:// URL';
  if (parsed.protocol !== 'https:') return 'must be an https:// URL';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return isPrivateAddress(host) ? 'must point to a public address' : null;
  if (PRIVATE_NAMES.test(host) || !host.includes('.')) return 'must point to a public host name';
  return null;
}
