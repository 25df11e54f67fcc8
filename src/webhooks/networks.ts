/**
 * `webhooks.url.allowed_networks`: the explicit opt-in for receivers inside
 * the deployment's own network, which the URL policy refuses by default
 * (policy.ts). Each entry is a CIDR range, IPv4 (`10.0.0.0/8`) or IPv6
 * (`fd00::/8`). An address the policy would refuse is allowed when a named
 * range holds it; IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4)
 * are judged by that address, as the policy judges them.
 *
 * Loopback, link-local (cloud metadata lives there) and "this network"
 * addresses are opened only by a range that lies inside them: `127.0.0.0/8`,
 * `::1/128` or `169.254.0.0/16` open what they name, while a wide range such as
 * `0.0.0.0/0` or `::/0` opens the private ranges it covers but never these.
 */
import { BlockList, isIP } from "node:net";
import type { Issue } from "../errors.js";
import { embeddedIpv4 } from "./addresses.js";

export interface Network {
  address: string;
  bits: number;
  family: "ipv4" | "ipv6";
}

/** A CIDR range, or a reason it is not one. */
export function parseNetwork(text: string): Network | string {
  const m = /^([^/\s]+)\/(\d{1,3})$/.exec(text);
  if (!m) return "is not a CIDR range (address/prefix, e.g. 10.0.0.0/8 or fd00::/8)";
  const address = m[1]!;
  const family = isIP(address);
  if (family === 0) return `${JSON.stringify(address)} is not an IPv4 or IPv6 address`;
  const bits = Number(m[2]);
  const max = family === 4 ? 32 : 128;
  if (bits > max) return `the prefix /${bits} is longer than an IPv${family} address (/${max} at most)`;
  return { address, bits, family: family === 4 ? "ipv4" : "ipv6" };
}

/** The problems in a raw `allowed_networks` list, each located at its entry. */
export function networkIssues(list: unknown[]): Issue[] {
  const issues: Issue[] = [];
  for (const [i, v] of list.entries()) {
    if (typeof v !== "string") continue; // the shape check reports it
    const n = parseNetwork(v);
    if (typeof n === "string")
      issues.push({ loc: ["webhooks", "url", "allowed_networks", i], msg: `${JSON.stringify(v)} ${n}`, type: "value_error" });
  }
  return issues;
}

const contains = (outer: Network, inner: Network): boolean => {
  if (outer.family !== inner.family || inner.bits < outer.bits) return false;
  const b = new BlockList();
  b.addSubnet(outer.address, outer.bits, outer.family);
  return b.check(inner.address, inner.family);
};

/** Addresses no wide range opens: only a range inside one of these does (see above). */
const GUARDED: Network[] = [
  { address: "0.0.0.0", bits: 8, family: "ipv4" }, // "this network": 0.0.0.0 reaches the local host
  { address: "127.0.0.0", bits: 8, family: "ipv4" },
  { address: "169.254.0.0", bits: 16, family: "ipv4" },
  { address: "::", bits: 96, family: "ipv6" }, // unspecified, loopback, IPv4-compatible
  { address: "fe80::", bits: 10, family: "ipv6" },
];

/** Whether a named range holds `address` (a resolved address the policy refuses otherwise). */
export function inAllowedNetworks(address: string, ranges: readonly string[]): boolean {
  const effective = embeddedIpv4(address) ?? address.replace(/%.*$/, "");
  const family = isIP(effective);
  if (family === 0) return false;
  const host: Network = { address: effective, bits: family === 4 ? 32 : 128, family: family === 4 ? "ipv4" : "ipv6" };
  const guard = GUARDED.find((g) => contains(g, host));
  return ranges.some((text) => {
    const n = parseNetwork(text);
    return typeof n !== "string" && contains(n, host) && (!guard || contains(guard, n));
  });
}
