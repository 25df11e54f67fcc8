/**
 * Whether a webhook URL may be called (SPEC §6's URL options), decided before
 * any connection is made, and the address to connect to.
 *
 * Everything is judged on the URL as the WHATWG parser reads it, never on the
 * raw text: the parser drops TAB/LF, reads `\` as `/` and `//host` as a new
 * authority, so `/\127.0.0.1:9911/x` "looks relative" yet names another host.
 *
 * Order: length; parse (absolute, or relative to this server's own URL);
 * a relative URL must resolve to this server's own origin (and is refused
 * under disable_loopback); scheme and require_https; no credentials in the
 * URL; port (443 for https and 80 for http unless allowed_ports);
 * allowed_domains with `*.` wildcards; then SSRF: the host's addresses, from
 * the URL literal or from DNS, must all be public. The parser has already
 * turned decimal, octal and hex IPv4 spellings (http://2130706433/) into
 * dotted form; IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4)
 * are judged by that address, and the other transition ranges (IPv4-compatible,
 * IPv4-translated, local-use NAT64, Teredo) are refused outright. The caller
 * connects to the vetted address, so DNS cannot be re-pointed between the
 * check and the request (rebinding).
 */
import { TracepipeError } from "../errors.js";
import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import type { UrlPolicy } from "./config.js";

export class WebhookUrlError extends TracepipeError {
  override name = "WebhookUrlError";
  constructor(
    message: string,
    readonly type: string,
  ) {
    super(message);
  }
}

export interface VettedUrl {
  url: URL;
  /** The address to connect to. */
  address: string;
  family: 4 | 6;
}

export interface PolicyOptions {
  /** This server's own base URL, for relative (loopback) webhook URLs. */
  baseUrl?: string;
  /** Allow private, loopback and link-local targets (local development and tests only). */
  allowPrivateNetworks?: boolean;
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>;
}

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
] as const) blocked4.addSubnet(net, bits, "ipv4");

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
] as const) blocked6.addSubnet(net, bits, "ipv6");
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

function domainAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return allowed.some((d) => {
    const a = d.toLowerCase();
    return a.startsWith("*.") ? h.endsWith(a.slice(1)) && h.length > a.length - 1 : h === a;
  });
}

/** The URL as the parser reads it, and whether it was relative (resolved against this server). */
function parse(raw: string, baseUrl: string | undefined): { url: URL; relative: boolean } {
  try {
    return { url: new URL(raw), relative: false };
  } catch {
    // not absolute: maybe relative, judged below by where it actually points
  }
  if (!baseUrl) throw new WebhookUrlError(`${JSON.stringify(raw.slice(0, 200))} is not an absolute URL, and a relative one needs the server's own address, which is not known here`, "relative_url");
  try {
    return { url: new URL(raw, baseUrl), relative: true };
  } catch {
    throw new WebhookUrlError(`not a URL: ${JSON.stringify(raw.slice(0, 200))}`, "url_parsing");
  }
}

export async function vetWebhookUrl(raw: string, policy: UrlPolicy, o: PolicyOptions = {}): Promise<VettedUrl> {
  if (policy.max_url_length !== undefined && raw.length > policy.max_url_length) {
    throw new WebhookUrlError(`the URL is ${raw.length} characters, over max_url_length ${policy.max_url_length}`, "url_too_long");
  }
  const { url, relative } = parse(raw, o.baseUrl);
  if (url.username || url.password) throw new WebhookUrlError("credentials in the URL are not allowed; use webhooks.headers", "url_credentials");
  if (relative) {
    // A relative URL is a call back into this server, and nothing else: `/\host/`, `//host/` and
    // their TAB/LF variants resolve to another origin and are refused, not "relative".
    const self = new URL(o.baseUrl!);
    if (url.origin !== self.origin) throw new WebhookUrlError(`${JSON.stringify(raw.slice(0, 200))} is not an absolute URL and resolves to ${url.origin}, not to this server (${self.origin})`, "relative_url");
    if (policy.disable_loopback) throw new WebhookUrlError("relative webhook URLs (calls back into this server) are disabled by disable_loopback", "loopback_disabled");
    const address = url.hostname.replace(/^\[|\]$/g, "");
    return { url, address, family: isIP(address) === 6 ? 6 : 4 };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new WebhookUrlError(`scheme ${url.protocol} is not allowed; use https (or http)`, "url_scheme");
  if (policy.require_https && url.protocol !== "https:") throw new WebhookUrlError("http:// URLs are rejected: require_https is set", "require_https");
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const ports = policy.allowed_ports ?? [url.protocol === "https:" ? 443 : 80];
  if (!ports.includes(port)) throw new WebhookUrlError(`port ${port} is not allowed (allowed: ${ports.join(", ")})`, "port_not_allowed");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (policy.allowed_domains && !domainAllowed(host, policy.allowed_domains)) throw new WebhookUrlError(`host ${host} is not in allowed_domains`, "domain_not_allowed");

  let candidates: { address: string; family: number }[];
  if (isIP(host)) candidates = [{ address: host, family: isIP(host) }];
  else {
    try {
      candidates = await (o.lookup ?? ((h: string) => dnsLookup(h, { all: true, verbatim: true })))(host);
    } catch (err) {
      throw new WebhookUrlError(`cannot resolve ${host}: ${(err as Error).message}`, "dns_failed");
    }
    if (!candidates.length) throw new WebhookUrlError(`${host} has no addresses`, "dns_failed");
  }
  if (!o.allowPrivateNetworks) {
    // Every address must be public: a name with one private address among public ones is refused too.
    const bad = candidates.find((c) => !isPublicAddress(c.address));
    if (bad) throw new WebhookUrlError(`${host} resolves to ${bad.address}, a private, loopback, link-local or reserved address`, "ssrf_blocked");
  }
  const pick = candidates[0]!;
  return { url, address: pick.address, family: pick.family === 6 ? 6 : 4 };
}
