import { describe, expect, it } from 'vitest';
import { isPrivateAddress, refuseByForm } from '../../src/modules/webhooks/addresses.js';

describe('webhook addresses (SSRF guard)', () => {
  it.each([
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '169.254.0.1',
    '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd00:ec2::254', '::ffff:127.0.0.1',
    '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:a9fe:a9fe', 'ff02::1', '64:ff9b::7f00:1', 'not-an-ip',
    // IPv6 forms that carry a non-public IPv4 address: compatible, translated, 6to4, Teredo.
    '::127.0.0.1', '::a9fe:a9fe', '::ffff:0:127.0.0.1', '::ffff:0:a00:1', '2002:7f00:1::', '2002:a9fe:a9fe::1',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    // NAT64: the well-known prefix and the local-use one (RFC 8215), whatever IPv4 address they carry, at any of the
    // positions RFC 6052 puts it.
    '64:ff9b::8.8.8.8', '64:ff9b:1::1', '64:ff9b:1::8.8.8.8', '64:ff9b:1::808:808', '64:ff9b:1:808:8:800::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff',
    // Outside global unicast (2000::/3) nothing is routed on the internet; inside it, benchmarking, documentation, SRv6.
    '64:ff9b:2::1', '1::1', '4000::1', 'e000::1', '2001:2::1', '3fff::1', '5f00::1',
  ])('treats %s as private', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2002:808:808::1', '::ffff:0:8.8.8.8', '2a00:1450:4001:82a::200e'])('treats %s as public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it.each([
    ['http://hooks.example.com/tolov', 'must be an https:// URL'],
    ['ftp://hooks.example.com/tolov', 'must be an https:// URL'],
    ['https://localhost/tolov', 'must point to a public host name'],
    ['https://api.localhost/tolov', 'must point to a public host name'],
    ['https://metadata.google.internal/computeMetadata', 'must point to a public host name'],
    ['https://intranet/tolov', 'must point to a public host name'],
    ['https://127.0.0.1/tolov', 'must point to a public address'],
    ['https://2130706433/tolov', 'must point to a public address'],
    ['https://0x7f.0.0.1/tolov', 'must point to a public address'],
    ['https://10.1.2.3/tolov', 'must point to a public address'],
    ['https://169.254.169.254/latest/meta-data', 'must point to a public address'],
    ['https://[::1]/tolov', 'must point to a public address'],
    ['https://[::ffff:127.0.0.1]/tolov', 'must point to a public address'],
    ['https://[fd00::1]/tolov', 'must point to a public address'],
    ['https://[::127.0.0.1]/tolov', 'must point to a public address'],
    ['https://[::a9fe:a9fe]/latest/meta-data', 'must point to a public address'],
    ['https://[::ffff:0:127.0.0.1]/tolov', 'must point to a public address'],
    ['https://[2002:7f00:1::]/tolov', 'must point to a public address'],
    ['https://[64:ff9b:1::8.8.8.8]/tolov', 'must point to a public address'],
    ['https://[64:ff9b:1::a9fe:a9fe]/latest/meta-data', 'must point to a public address'],
    ['https://localhost./tolov', 'must point to a public host name'],
    ['https://metadata.google.internal./computeMetadata', 'must point to a public host name'],
    ['https://127.0.0.1./tolov', 'must point to a public address'],
    ['https://user:pass@hooks.example.com/tolov', 'must not carry credentials'],
    ['not a url', 'must be an absolute URL'],
  ])('refuses %s: %s', (url, reason) => {
    expect(refuseByForm(url, false)).toBe(reason);
  });

  it.each(['https://hooks.example.com/tolov', 'https://8.8.8.8/hook', 'https://hooks.example.com:8443/a?b=c', 'https://does-not-resolve.example/x'])(
    'accepts %s',
    (url) => {
      expect(refuseByForm(url, false)).toBeNull();
    },
  );

  it('allows http and private addresses only when TOLOV_WEBHOOK_ALLOW_PRIVATE is true', () => {
    expect(refuseByForm('http://127.0.0.1:3000/hook', true)).toBeNull();
    expect(refuseByForm('http://localhost:3000/hook', true)).toBeNull();
    expect(refuseByForm('ftp://localhost/hook', true)).toBe('must be an https:// URL');
  });
});
