/**
 * Which addresses a webhook may reach by default: public unicast only. The
 * URL policy (policy.ts) judges every resolved address with isPublicAddress;
 * allowed_networks (networks.ts) reads IPv6 forms the same way.
 */
import { BlockList, isIP } from "node:net";

const blocked4 = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const)
  blocked4.addSubnet(net, bits, "ipv4");

/**
 * Inside global unicast (2000::/3, the only IPv6 range a public webhook can
 * live in), the parts that are not public: IETF protocol assignments
 * (2001::/23, Teredo 2001::/32 among them, whose embedded IPv4 is obfuscated),
 * documentation (2001:db8::/32, 3fff::/20). Everything outside 2000::/3 --
 * ::/96 (unspecified, loopback, IPv4-compatible), ::ffff:0:0:0/96
 * (IPv4-translated), 64:ff9b:1::/48 (local-use NAT64), 100::/64, fc00::/7,
 * fe80::/10, fec0::/10, ff00::/8 -- is refused, except the two forms judged by
 * their IPv4 address (below).
 */
const blocked6 = new BlockList();
for (const [net, bits] of [
  ["2001::", 23],
  ["2001:db8::", 32],
  ["3fff::", 20],
] as const)
  blocked6.addSubnet(net, bits, "ipv6");
const global6 = new BlockList();
global6.addSubnet("2000::", 3, "ipv6");

/** An IPv6 address as its eight 16-bit groups (a dotted IPv4 tail allowed), or undefined. */
export function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let a = address.toLowerCase().replace(/%.*$/, "");
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (tail) {
    const [b0, b1, b2, b3] = tail.slice(1).map(Number) as [number, number, number, number];
    a = a.slice(0, tail.index) + `${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, rest] = a.split("::") as [string, string | undefined];
  const h = head ? head.split(":") : [];
  const r = rest === undefined ? [] : rest ? rest.split(":") : [];
  const fill = rest === undefined ? [] : Array<string>(8 - h.length - r.length).fill("0");
  const groups = [...h, ...fill, ...r].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 address stands for, where connecting to the IPv6
 * address reaches that IPv4 host: IPv4-mapped (::ffff:a.b.c.d), NAT64 with the
 * well-known prefix (64:ff9b::/96) and 6to4 (2002:AABB:CCDD::/48).
 */
export function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (!g) return undefined;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return v4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  return undefined;
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked4.check(address, "ipv4");
  if (family !== 6) return false;
  const inner = embeddedIpv4(address);
  if (inner !== undefined) return !blocked4.check(inner, "ipv4");
  const g = ipv6Groups(address);
  if (!g) return false;
  const canonical = g.map((x) => x.toString(16)).join(":");
  return global6.check(canonical, "ipv6") && !blocked6.check(canonical, "ipv6");
}
