/**
 * Whether a webhook URL may be called (SPEC §6's URL options), decided before
 * any connection is made, and the address to connect to.
 *
 * Order: length; relative URLs (calls back into this server) unless
 * disable_loopback; scheme and require_https; no credentials in the URL; port
 * (443 for https and 80 for http unless allowed_ports); allowed_domains with
 * `*.` wildcards; then SSRF: the host's addresses, from the URL literal or
 * from DNS, must all be public. The WHATWG parser has already turned decimal,
 * octal and hex IPv4 spellings (http://2130706433/) into dotted form, and
 * IPv4-mapped / NAT64 IPv6 addresses are judged by the IPv4 inside. The
 * caller connects to the vetted address, so DNS cannot be re-pointed between
 * the check and the request (rebinding).
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

const blocked = new BlockList();
for (const [net, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) blocked.addSubnet(net, bits, "ipv4");
for (const [net, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7], // unique local (fd00:ec2::254, the IPv6 metadata address, is here)
  ["fe80::", 10],
  ["ff00::", 8],
  ["2001:db8::", 32],
] as const) blocked.addSubnet(net, bits, "ipv6");

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedV4(v6: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(v6);
  if (m) return m[1];
  const h = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(v6);
  if (!h) return undefined;
  const hi = parseInt(h[1]!, 16);
  const lo = parseInt(h[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, "ipv4");
  if (family === 6) {
    const v4 = embeddedV4(address);
    if (v4) return !blocked.check(v4, "ipv4");
    return !blocked.check(address, "ipv6");
  }
  return false;
}

function domainAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return allowed.some((d) => {
    const a = d.toLowerCase();
    return a.startsWith("*.") ? h.endsWith(a.slice(1)) && h.length > a.length - 1 : h === a;
  });
}

export async function vetWebhookUrl(raw: string, policy: UrlPolicy, o: PolicyOptions = {}): Promise<VettedUrl> {
  if (policy.max_url_length !== undefined && raw.length > policy.max_url_length) {
    throw new WebhookUrlError(`the URL is ${raw.length} characters, over max_url_length ${policy.max_url_length}`, "url_too_long");
  }
  const relative = raw.startsWith("/") && !raw.startsWith("//");
  if (relative) {
    if (policy.disable_loopback) throw new WebhookUrlError("relative webhook URLs (calls back into this server) are disabled by disable_loopback", "loopback_disabled");
    if (!o.baseUrl) throw new WebhookUrlError("a relative webhook URL needs the server's own address, which is not known here", "relative_url");
    const url = new URL(raw, o.baseUrl);
    const address = url.hostname.replace(/^\[|\]$/g, "");
    return { url, address, family: isIP(address) === 6 ? 6 : 4 };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError(`not a URL: ${JSON.stringify(raw.slice(0, 200))}`, "url_parsing");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new WebhookUrlError(`scheme ${url.protocol} is not allowed; use https (or http)`, "url_scheme");
  if (policy.require_https && url.protocol !== "https:") throw new WebhookUrlError("http:// URLs are rejected: require_https is set", "require_https");
  if (url.username || url.password) throw new WebhookUrlError("credentials in the URL are not allowed; use webhooks.headers", "url_credentials");
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
