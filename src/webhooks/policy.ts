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
 * the URL literal or from DNS, must all be public, or inside a range
 * `allowed_networks` names (networks.ts). The parser has already
 * turned decimal, octal and hex IPv4 spellings (http://2130706433/) into
 * dotted form; IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4)
 * are judged by that address, and the other transition ranges (IPv4-compatible,
 * IPv4-translated, local-use NAT64, Teredo) are refused outright. The caller
 * connects to the vetted address, so DNS cannot be re-pointed between the
 * check and the request (rebinding).
 */
import { TracepipeError } from "../errors.js";
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { isPublicAddress } from "./addresses.js";
import { inAllowedNetworks } from "./networks.js";
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

export { embeddedIpv4, ipv6Groups, isPublicAddress } from "./addresses.js";

export interface VettedUrl {
  url: URL;
  /** The address to connect to. */
  address: string;
  family: 4 | 6;
}

export interface PolicyOptions {
  /** This server's own base URL, for relative (loopback) webhook URLs. */
  baseUrl?: string;
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>;
}

/** Every address the system resolver gives for `host`, in its order. */
export const systemLookup = (host: string): Promise<{ address: string; family: number }[]> =>
  dnsLookup(host, { all: true, verbatim: true });

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
  if (!baseUrl)
    throw new WebhookUrlError(
      `${JSON.stringify(raw.slice(0, 200))} is not an absolute URL, and a relative one needs the server's own address, which is not known here`,
      "relative_url",
    );
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
  if (url.username || url.password)
    throw new WebhookUrlError("credentials in the URL are not allowed; use webhooks.headers", "url_credentials");
  if (relative) {
    // A relative URL is a call back into this server, and nothing else: `/\host/`, `//host/` and
    // their TAB/LF variants resolve to another origin and are refused, not "relative".
    const self = new URL(o.baseUrl!);
    if (url.origin !== self.origin)
      throw new WebhookUrlError(
        `${JSON.stringify(raw.slice(0, 200))} is not an absolute URL and resolves to ${url.origin}, not to this server (${self.origin})`,
        "relative_url",
      );
    if (policy.disable_loopback)
      throw new WebhookUrlError(
        "relative webhook URLs (calls back into this server) are disabled by disable_loopback",
        "loopback_disabled",
      );
    const address = url.hostname.replace(/^\[|\]$/g, "");
    return { url, address, family: isIP(address) === 6 ? 6 : 4 };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new WebhookUrlError(`scheme ${url.protocol} is not allowed; use https (or http)`, "url_scheme");
  if (policy.require_https && url.protocol !== "https:")
    throw new WebhookUrlError("http:// URLs are rejected: require_https is set", "require_https");
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  const ports = policy.allowed_ports ?? [url.protocol === "https:" ? 443 : 80];
  if (!ports.includes(port)) throw new WebhookUrlError(`port ${port} is not allowed (allowed: ${ports.join(", ")})`, "port_not_allowed");
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (policy.allowed_domains && !domainAllowed(host, policy.allowed_domains))
    throw new WebhookUrlError(`host ${host} is not in allowed_domains`, "domain_not_allowed");

  let candidates: { address: string; family: number }[];
  if (isIP(host)) candidates = [{ address: host, family: isIP(host) }];
  else {
    try {
      candidates = await (o.lookup ?? systemLookup)(host);
    } catch (err) {
      throw new WebhookUrlError(`cannot resolve ${host}: ${(err as Error).message}`, "dns_failed");
    }
    if (!candidates.length) throw new WebhookUrlError(`${host} has no addresses`, "dns_failed");
  }
  // Every address must be public or in a named allowed_networks range: a name with one refused address among good ones is refused too.
  const nets = policy.allowed_networks ?? [];
  const bad = candidates.find((c) => !isPublicAddress(c.address) && !inAllowedNetworks(c.address, nets));
  if (bad)
    throw new WebhookUrlError(
      `${host} resolves to ${bad.address}, a private, loopback, link-local or reserved address${nets.length ? " outside allowed_networks" : " (webhooks.url.allowed_networks opens named ranges)"}`,
      "ssrf_blocked",
    );
  const pick = candidates[0]!;
  return { url, address: pick.address, family: pick.family === 6 ? 6 : 4 };
}
