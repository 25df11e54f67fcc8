/**
 * Webhook SSRF bypasses (issue 13, item 15) and check-config listing every
 * problem at once (item 19, check-config part).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { embeddedIpv4, isPublicAddress, vetWebhookUrl, WebhookUrlError } from "../../src/webhooks/policy.js";
import { runRecord, startCollector } from "../helpers/collector.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/runs.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

/** A loopback listener that counts every request it receives. */
async function listener(): Promise<{ port: number; hits: string[] }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { port: (server.address() as AddressInfo).port, hits };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookUrlError);
    return (err as WebhookUrlError).type;
  }
  return "accepted";
}

/** "Relative" URLs that the URL parser turns into another host (backslash, TAB, LF, doubled slashes). */
const fakeRelative = (port: number) => [
  `/\\127.0.0.1:${port}/x`,
  `/\t\\127.0.0.1:${port}/x`,
  `/\n/127.0.0.1:${port}/x`,
  `\\\\127.0.0.1:${port}/x`,
  `/\\\t127.0.0.1:${port}/x`,
  `\t//127.0.0.1:${port}/x`,
  ` /\\127.0.0.1:${port}/x`,
  `//127.0.0.1:${port}/x`,
  "/\\169.254.169.254/latest/meta-data/",
];

/** IPv6 spellings of loopback and other non-public IPv4 addresses. */
const v6Forms = (port: number) => [
  `http://[::127.0.0.1]:${port}/x`, // IPv4-compatible
  `http://[::ffff:0:127.0.0.1]:${port}/x`, // IPv4-translated (SIIT)
  `http://[64:ff9b:1::7f00:1]:${port}/x`, // local-use NAT64
  `http://[64:ff9b:1::a9fe:a9fe]:${port}/x`,
  `http://[2002:7f00:1::]:${port}/x`, // 6to4 of 127.0.0.1
  `http://[2002:a9fe:a9fe::1]:${port}/x`, // 6to4 of 169.254.169.254
  `http://[64:ff9b::127.0.0.1]:${port}/x`, // NAT64 well-known prefix
  `http://[::ffff:7f00:1]:${port}/x`, // IPv4-mapped, hex
  `http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]:${port}/x`, // Teredo
  `http://[::]:${port}/x`,
];

describe("webhook URL policy judges the parsed URL", () => {
  it("refuses 'relative' URLs that resolve to another origin, and keeps real relative URLs on the collector itself", async () => {
    const base = "http://127.0.0.1:8484";
    for (const url of fakeRelative(9911))
      expect(await refusal(vetWebhookUrl(url, {}, { baseUrl: base })), JSON.stringify(url)).toBe("relative_url");
    // Even with loopback opened by allowed_networks, a fake relative URL is not a call back into this server.
    for (const url of fakeRelative(9911))
      expect(
        await refusal(vetWebhookUrl(url, { allowed_ports: [9911, 80], allowed_networks: ["127.0.0.0/8"] }, { baseUrl: base })),
        JSON.stringify(url),
      ).toBe("relative_url");
    expect((await vetWebhookUrl("/webhooks/runs?token=t", {}, { baseUrl: base })).url.href).toBe(
      "http://127.0.0.1:8484/webhooks/runs?token=t",
    );
    expect((await vetWebhookUrl("/a/\\b", {}, { baseUrl: base })).url.origin).toBe(base);
    expect(await refusal(vetWebhookUrl("//user:pw@127.0.0.1:8484/x", {}, { baseUrl: base }))).toBe("url_credentials");
    expect(await refusal(vetWebhookUrl("/x", {}))).toBe("relative_url"); // no known origin to be relative to
  });

  it("refuses IPv4-compatible, IPv4-translated, NAT64, 6to4 and Teredo forms of non-public addresses", async () => {
    for (const url of v6Forms(8080)) expect(await refusal(vetWebhookUrl(url, { allowed_ports: [8080] })), url).toBe("ssrf_blocked");
    expect(embeddedIpv4("2002:7f00:1::")).toBe("127.0.0.1");
    expect(embeddedIpv4("64:ff9b::a9fe:a9fe")).toBe("169.254.169.254");
    expect(embeddedIpv4("::ffff:10.1.2.3")).toBe("10.1.2.3");
    // Their public counterparts stay usable: NAT64 and 6to4 of a public IPv4 address, plain global IPv6.
    for (const a of ["64:ff9b::5db8:d822", "2002:5db8:d822::1", "::ffff:93.184.216.34", "2606:4700:4700::1111"])
      expect(isPublicAddress(a), a).toBe(true);
    for (const a of ["::7f00:1", "::ffff:0:7f00:1", "64:ff9b:1::5db8:d822", "100::1", "fec0::1", "3fff::1", "2001:db8::1", "::1"])
      expect(isPublicAddress(a), a).toBe(false);
  });

  it("delivers nothing to a loopback listener from any bypass form, end to end through the collector", async () => {
    const target = await listener();
    const col = await startCollector({ webhooks: { enabled: true, headers: {}, policy: { allowed_ports: [target.port] } } });
    cleanup.push(() => col.close());
    const urls = [
      ...fakeRelative(target.port),
      ...v6Forms(target.port),
      `http://127.0.0.1:${target.port}/x`,
      `http://2130706433:${target.port}/x`,
    ];
    const runs = urls.map((webhook) =>
      runRecord({ session_name: "ssrf", end_time: "2026-11-22T10:16:00Z", extra: { metadata: { webhook } } }),
    );
    const res = await fetch(`${col.url}/runs/batch`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ post: runs }),
    });
    expect(res.status).toBe(202);
    await col.collector.webhooks!.idle();
    expect(col.collector.webhooks!.stats).toMatchObject({ refused: urls.length, delivered: 0, attempts: 0 });
    expect(target.hits).toEqual([]);
    expect(await col.collector.store.countRuns("ssrf")).toBe(urls.length); // the runs themselves are stored
  });
});

describe("tracepipe check-config", () => {
  it("shows shape, env-prefix, missing-variable and domain problems in one run", async () => {
    const dir = tempDir("tp-check-all-");
    const file = join(dir, "graph.json");
    writeFileSync(
      file,
      JSON.stringify({
        graphs: { agent: "./agent.py:graph" },
        webhooks: {
          headers: { a: "${{ env.HOME }}", b: "${{ env.SVC_WEBHOOK_NOPE }}" },
          url: { require_https: "yes", allowed_ports: ["443"], allowed_domains: ["bad domain", "*.example.com"] },
        },
      }),
    );
    const r = await runCli(["check-config", file]);
    expect(r.code).toBe(1);
    const problems = r.stderr
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { error: { loc: (string | number)[]; type: string } }).error);
    expect(problems.map((p) => `${p.loc.join(".")} ${p.type}`).sort()).toEqual([
      "webhooks.headers.a env_prefix",
      "webhooks.headers.b env_missing",
      "webhooks.url.allowed_domains.0 value_error",
      "webhooks.url.allowed_ports.0 invalid_type",
      "webhooks.url.require_https invalid_type",
    ]);
    expect(r.stdout).toContain("5 problem(s)");
  });
});
