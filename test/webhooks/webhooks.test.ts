import { afterEach, describe, expect, it } from "vitest";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkWebhookConfig, loadWebhookConfig } from "../../src/webhooks/config.js";
import { vetWebhookUrl, WebhookUrlError } from "../../src/webhooks/policy.js";
import { WebhookSender } from "../../src/webhooks/sender.js";
import { ConfigError } from "../../src/errors.js";
import { Client } from "../../src/ingest/index.js";
import { startCollector, runRecord } from "../helpers/collector.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/runs.js";
import { openStore } from "../../src/store/index.js";
import { createCollector } from "../../src/server/app.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

interface Receiver {
  url: string;
  hits: { path: string; headers: IncomingMessage["headers"]; body: Record<string, unknown> }[];
}
/** A loopback webhook receiver; `script(n)` gives the status of the n-th request (1-based). */
async function receiver(
  script: (n: number) => number | { status: number; headers?: Record<string, string>; delayMs?: number } = () => 200,
): Promise<Receiver> {
  const hits: Receiver["hits"] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    hits.push({
      path: req.url ?? "",
      headers: req.headers,
      body: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>,
    });
    const v = script(hits.length);
    const { status, headers, delayMs } = typeof v === "number" ? { status: v, headers: {}, delayMs: 0 } : v;
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    res.writeHead(status, headers);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

describe("graph.json webhook configuration", () => {
  it("resolves ${{ env.NAME }} only for the allowed prefix, names missing variables, and honours env_prefix and disable_webhooks", () => {
    const env = { SVC_WEBHOOK_SECRET: "s3", OTHER_SECRET: "x", ACME_TOKEN: "t" };
    expect(loadWebhookConfig({ webhooks: { headers: { authorization: "Bearer ${{ env.SVC_WEBHOOK_SECRET }}" } } }, env).headers).toEqual({
      authorization: "Bearer s3",
    });
    const { issues } = checkWebhookConfig(
      { webhooks: { headers: { a: "${{ env.OTHER_SECRET }}", b: "${{ env.SVC_WEBHOOK_MISSING }}", c: "${{ secrets.X }}" } } },
      env,
    );
    expect(issues).toEqual([
      {
        loc: ["webhooks", "headers", "a"],
        msg: "references env.OTHER_SECRET, but only variables starting with SVC_WEBHOOK_ may be used",
        type: "env_prefix",
      },
      { loc: ["webhooks", "headers", "b"], msg: "references env.SVC_WEBHOOK_MISSING, which is not set", type: "env_missing" },
      { loc: ["webhooks", "headers", "c"], msg: "a ${{ ... }} reference that is not of the form ${{ env.NAME }}", type: "value_error" },
    ]);
    expect(() => loadWebhookConfig({ webhooks: { headers: { b: "${{ env.SVC_WEBHOOK_MISSING }}" } } }, env)).toThrow(ConfigError);
    expect(loadWebhookConfig({ webhooks: { env_prefix: "ACME_", headers: { t: "${{ env.ACME_TOKEN }}" } } }, env).headers).toEqual({
      t: "t",
    });
    expect(
      checkWebhookConfig({ webhooks: { env_prefix: "ACME_", headers: { t: "${{ env.SVC_WEBHOOK_SECRET }}" } } }, env).issues[0]!.msg,
    ).toContain("starting with ACME_ may be used (webhooks.env_prefix)");
    expect(loadWebhookConfig({ http: { disable_webhooks: true } }, env).enabled).toBe(false);
    const types = checkWebhookConfig(
      { webhooks: { url: { allowed_ports: ["443"], allowed_domains: ["bad domain"], require_https: "yes" } } },
      env,
    ).issues;
    // Shape and domain-pattern problems come in one list, not one layer at a time.
    expect(types.map((i) => i.loc.join(".")).sort()).toEqual([
      "webhooks.url.allowed_domains.0",
      "webhooks.url.allowed_ports.0",
      "webhooks.url.require_https",
    ]);
    expect(checkWebhookConfig({ webhooks: { url: { allowed_domains: ["*.example.com", "bad domain"] } } }, env).issues).toEqual([
      { loc: ["webhooks", "url", "allowed_domains", 1], msg: '"bad domain" is not a hostname or a *.domain wildcard', type: "value_error" },
    ]);
  });
});

describe("webhook URL policy", () => {
  const publicDns = async (host: string) =>
    host.endsWith(".internal.example.com")
      ? [{ address: "10.1.2.3", family: 4 }]
      : host === "mixed.example.com"
        ? [
            { address: "93.184.216.34", family: 4 },
            { address: "127.0.0.1", family: 4 },
          ]
        : [{ address: "93.184.216.34", family: 4 }];
  const vet = (url: string, policy = {}, o = {}) => vetWebhookUrl(url, policy, { lookup: publicDns, ...o });
  const refused = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (err) {
      expect(err).toBeInstanceOf(WebhookUrlError);
      return (err as WebhookUrlError).type;
    }
    throw new Error("expected a refusal");
  };

  it("refuses SSRF targets: metadata, link-local, private, IPv6 loopback, mapped and decimal-encoded addresses, private DNS answers", async () => {
    for (const url of [
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00:ec2::254]/latest/meta-data/",
      "http://127.0.0.1/hook",
      "http://2130706433/hook", // 127.0.0.1 in decimal
      "http://0x7f000001/hook", // and in hex
      "http://017700000001/hook", // and in octal
      "http://[::1]/hook",
      "http://[::ffff:127.0.0.1]/hook",
      "http://[::ffff:a9fe:a9fe]/hook", // 169.254.169.254, IPv4-mapped
      "http://[64:ff9b::10.0.0.1]/hook", // NAT64
      "http://10.0.0.5/hook",
      "http://192.168.1.1/hook",
      "http://[fe80::1]/hook",
      "http://0.0.0.0/hook",
      "http://db.internal.example.com/hook",
      "http://mixed.example.com/hook",
    ]) {
      expect(await refused(vet(url)), url).toBe("ssrf_blocked");
    }
    expect((await vet("https://hooks.example.com/x")).address).toBe("93.184.216.34");
  });

  it("applies require_https, ports, allowed_domains with wildcards, max_url_length, credentials and disable_loopback", async () => {
    expect(await refused(vet("http://hooks.example.com/x", { require_https: true }))).toBe("require_https");
    expect(await refused(vet("https://hooks.example.com:8443/x"))).toBe("port_not_allowed");
    expect((await vet("https://hooks.example.com:8443/x", { allowed_ports: [8443] })).url.port).toBe("8443");
    expect(await refused(vet("http://hooks.example.com:8080/x"))).toBe("port_not_allowed");
    expect((await vet("https://a.b.example.com/x", { allowed_domains: ["*.example.com"] })).url.hostname).toBe("a.b.example.com");
    expect(await refused(vet("https://example.com/x", { allowed_domains: ["*.example.com"] }))).toBe("domain_not_allowed");
    expect(await refused(vet("https://evilexample.com/x", { allowed_domains: ["*.example.com"] }))).toBe("domain_not_allowed");
    expect(await refused(vet("https://hooks.example.com/" + "a".repeat(100), { max_url_length: 64 }))).toBe("url_too_long");
    expect(await refused(vet("https://user:pw@hooks.example.com/x"))).toBe("url_credentials");
    expect(await refused(vet("ftp://hooks.example.com/x"))).toBe("url_scheme");
    expect(await refused(vet("/internal/hook", { disable_loopback: true }, { baseUrl: "http://127.0.0.1:8484" }))).toBe(
      "loopback_disabled",
    );
    expect((await vet("/internal/hook", {}, { baseUrl: "http://127.0.0.1:8484" })).url.href).toBe("http://127.0.0.1:8484/internal/hook");
  });

  it("does not follow a redirect, so a redirect to the metadata address goes nowhere", async () => {
    const r = await receiver(() => ({ status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } }));
    const sender = new WebhookSender({
      enabled: true,
      headers: {},
      policy: { allowed_ports: [Number(new URL(r.url).port)], allowed_networks: ["127.0.0.0/8"] },
    });
    const result = await sender.attempt(`${r.url}/hook`, "run-1", { run_id: "run-1" });
    expect(r.hits).toHaveLength(1);
    expect(result).toMatchObject({ status_code: 302, error: "redirects are not followed", verdict: "final" });
  });
});

describe("webhooks.url.allowed_networks", () => {
  const dns: Record<string, string[]> = {
    "db.internal.example.com": ["10.1.2.3"],
    "split.internal.example.com": ["10.1.2.3", "192.168.1.1"],
    "local.example.com": ["127.0.0.1"],
    "v6.internal.example.com": ["fd00::5"],
    "hooks.example.com": ["93.184.216.34"],
  };
  const lookup = async (host: string) => (dns[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  const vet = (url: string, allowed_networks: string[]) => vetWebhookUrl(url, { allowed_networks }, { lookup });
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => "allowed",
      (err: unknown) => (err instanceof WebhookUrlError ? err.type : String(err)),
    );

  it("reports every entry that is not a CIDR range, with its location", () => {
    const { issues } = checkWebhookConfig(
      { webhooks: { url: { allowed_networks: ["10.0.0.0/8", "10.0.0.0", "300.1.1.1/8", "fd00::/129", 5, "fd00::/8", "10.0.0.0/33"] } } },
      {},
    );
    expect(issues.map((i) => [i.loc.join("."), i.type])).toEqual([
      ["webhooks.url.allowed_networks.4", "invalid_type"],
      ["webhooks.url.allowed_networks.1", "value_error"],
      ["webhooks.url.allowed_networks.2", "value_error"],
      ["webhooks.url.allowed_networks.3", "value_error"],
      ["webhooks.url.allowed_networks.6", "value_error"],
    ]);
    expect(issues[1]!.msg).toBe('"10.0.0.0" is not a CIDR range (address/prefix, e.g. 10.0.0.0/8 or fd00::/8)');
    expect(issues[3]!.msg).toBe('"fd00::/129" the prefix /129 is longer than an IPv6 address (/128 at most)');
    expect(
      loadWebhookConfig({ webhooks: { url: { allowed_networks: ["10.0.0.0/8", "fd00::/8", "127.0.0.1/32"] } } }, {}).policy
        .allowed_networks,
    ).toEqual(["10.0.0.0/8", "fd00::/8", "127.0.0.1/32"]);
  });

  it("opens the private addresses inside a named range, IPv4 and IPv6, and only those", async () => {
    expect(await outcome(vet("http://10.1.2.3/x", ["10.0.0.0/8"]))).toBe("allowed");
    expect(await outcome(vet("http://10.1.2.3/x", ["10.2.0.0/16"]))).toBe("ssrf_blocked");
    expect(await outcome(vet("http://10.1.2.3/x", []))).toBe("ssrf_blocked");
    expect(await outcome(vet("http://192.168.1.1/x", ["10.0.0.0/8"]))).toBe("ssrf_blocked");
    expect(await outcome(vet("http://[fd00::5]/x", ["fd00::/8"]))).toBe("allowed");
    expect(await outcome(vet("http://[fd00::5]/x", ["10.0.0.0/8"]))).toBe("ssrf_blocked");
    expect(await outcome(vet("http://[::ffff:10.1.2.3]/x", ["10.0.0.0/8"]))).toBe("allowed"); // IPv4-mapped: judged by its IPv4 address
    expect(await outcome(vet("http://[fe80::1]/x", ["fd00::/8"]))).toBe("ssrf_blocked");
    expect(await outcome(vet("http://192.168.1.1/x", ["0.0.0.0/0"]))).toBe("allowed");
    expect(await outcome(vet("https://hooks.example.com/x", ["10.0.0.0/8"]))).toBe("allowed"); // public stays public
  });

  it("judges the addresses a DNS name resolves to: every one must be public or inside a named range", async () => {
    expect(await outcome(vet("http://db.internal.example.com/x", ["10.0.0.0/8"]))).toBe("allowed");
    expect((await vet("http://db.internal.example.com/x", ["10.0.0.0/8"])).address).toBe("10.1.2.3");
    expect(await outcome(vet("http://db.internal.example.com/x", ["172.16.0.0/12"]))).toBe("ssrf_blocked");
    expect(await outcome(vet("http://split.internal.example.com/x", ["10.0.0.0/8"]))).toBe("ssrf_blocked"); // 192.168.1.1 is outside
    expect(await outcome(vet("http://split.internal.example.com/x", ["10.0.0.0/8", "192.168.0.0/16"]))).toBe("allowed");
    expect(await outcome(vet("http://v6.internal.example.com/x", ["fd00::/8"]))).toBe("allowed");
    expect(await outcome(vet("http://local.example.com/x", ["10.0.0.0/8"]))).toBe("ssrf_blocked");
    expect(await outcome(vet("http://local.example.com/x", ["127.0.0.0/8"]))).toBe("allowed");
  });

  it("opens loopback, link-local and 0.0.0.0 only when a range inside them is named, never through a wider one", async () => {
    for (const wide of [["0.0.0.0/0"], ["::/0"], ["0.0.0.0/0", "::/0"], ["10.0.0.0/8"]]) {
      for (const url of [
        "http://127.0.0.1/x",
        "http://[::1]/x",
        "http://[::ffff:127.0.0.1]/x",
        "http://169.254.169.254/x",
        "http://0.0.0.0/x",
        "http://[fe80::1]/x",
      ]) {
        expect(await outcome(vet(url, wide)), `${url} ${wide.join(",")}`).toBe("ssrf_blocked");
      }
    }
    expect(await outcome(vet("http://127.0.0.1/x", ["127.0.0.0/8"]))).toBe("allowed");
    expect(await outcome(vet("http://[::ffff:127.0.0.1]/x", ["127.0.0.0/8"]))).toBe("allowed");
    expect(await outcome(vet("http://127.0.0.2/x", ["127.0.0.1/32"]))).toBe("ssrf_blocked");
    expect(await outcome(vet("http://[::1]/x", ["::1/128"]))).toBe("allowed");
    expect(await outcome(vet("http://[::1]/x", ["127.0.0.0/8"]))).toBe("ssrf_blocked");
    expect(await outcome(vet("http://169.254.169.254/x", ["169.254.169.254/32"]))).toBe("allowed");
  });
});

interface DeliveryBody {
  run_id: string;
  deliveries: { status: string; url: string; attempts: { at: string; duration_ms: number; status_code?: number; error?: string }[] }[];
}

/** A Client of the collector at `url` (API key "k", project "hooks") with a spool of its own. */
function hookClient(url: string): Client {
  return new Client({ endpoint: url, apiKey: "k", project: "hooks", spoolDir: join(tempDir("tp-hook-"), "spool"), warn: () => {} });
}

describe("the collector sends run-completion webhooks", () => {
  it("POSTs the completed root run with kwargs, the configured headers and its run id once, retrying a failed delivery, without blocking ingest; GET /runs/:id/webhooks shows each attempt", async () => {
    const r = await receiver((n) => (n === 1 ? { status: 503, delayMs: 800 } : 200)); // a slow, failing receiver first
    const config = loadWebhookConfig(
      {
        webhooks: {
          headers: { "x-hook-auth": "${{ env.SVC_WEBHOOK_SECRET }}" },
          url: { allowed_ports: [Number(new URL(r.url).port)], allowed_networks: ["127.0.0.0/8"] },
        },
      },
      { SVC_WEBHOOK_SECRET: "s3cr3t" },
    );
    const col = await startCollector({ apiKey: "k", webhooks: config, webhookDelivery: { backoff: { baseMs: 20, maxMs: 50 } } });
    cleanup.push(() => col.close());
    const client = hookClient(col.url);
    const root = runRecord({
      session_name: "hooks",
      inputs: { question: "why?" },
      extra: { metadata: { webhook: `${r.url}/done?token=abc`, thread_id: "t-1" }, config: { recursion_limit: 5 } },
    });
    const child = runRecord({
      session_name: "hooks",
      parent_run_id: root.id,
      trace_id: root.id,
      extra: { metadata: { webhook: `${r.url}/child` } },
    });
    const plain = runRecord({ session_name: "hooks" });
    for (const run of [root, child, plain]) client.createRun(run as never);
    await client.flush();
    for (const run of [root, child, plain])
      client.updateRun(run.id as string, { end_time: "2026-11-22T10:16:00Z", outputs: { answer: 42 } });
    client.updateRun(root.id as string, { end_time: "2026-11-22T10:16:01Z" }); // completed again: still one webhook
    await client.flush();
    // Ingest was acknowledged while the (slow, failing) first delivery was still under way.
    expect(col.collector.webhooks!.stats.delivered).toBe(0);
    await client.shutdown();
    await col.collector.webhooks!.idle();
    expect(r.hits.map((h) => h.path)).toEqual(["/done?token=abc", "/done?token=abc"]); // the 503, then the retry
    const hit = r.hits[1]!;
    expect(hit.headers["x-hook-auth"]).toBe("s3cr3t");
    expect(r.hits.map((h) => [h.headers["x-tracepipe-run-id"], h.headers["x-tracepipe-attempt"]])).toEqual([
      [root.id, "1"],
      [root.id, "2"],
    ]);
    expect(hit.body).toMatchObject({
      run_id: root.id,
      thread_id: "t-1",
      status: "success",
      output: { answer: 42 },
      kwargs: { input: { question: "why?" }, config: { recursion_limit: 5 }, metadata: { thread_id: "t-1" } },
    });
    expect(col.collector.webhooks!.stats).toMatchObject({ delivered: 1, failed: 0, attempts: 2 });
    const res = await fetch(`${col.url}/runs/${root.id as string}/webhooks`, { headers: { "x-api-key": "k" } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as DeliveryBody;
    expect(body.deliveries).toHaveLength(1);
    expect(body.deliveries[0]).toMatchObject({ status: "delivered", url: `${r.url}/done?token=abc` });
    expect(body.deliveries[0]!.attempts.map((a) => a.status_code)).toEqual([503, 200]);
    expect(body.deliveries[0]!.attempts[0]!.duration_ms).toBeGreaterThanOrEqual(700);
    expect(
      ((await (await fetch(`${col.url}/runs/${child.id as string}/webhooks`, { headers: { "x-api-key": "k" } })).json()) as DeliveryBody)
        .deliveries,
    ).toEqual([]);
    expect((await fetch(`${col.url}/runs/0192b3c4-0000-7000-8000-000000000000/webhooks`, { headers: { "x-api-key": "k" } })).status).toBe(
      404,
    );
  });

  it("retries a webhook whose host name does not resolve yet (a resolver outage), and delivers it once it does", async () => {
    const r = await receiver();
    const port = Number(new URL(r.url).port);
    let lookups = 0;
    // The resolver fails twice (as getaddrinfo does during an outage), then answers.
    const lookup = async (host: string) => {
      lookups++;
      if (host !== "hooks.team.example") throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
      if (lookups <= 2) throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: "EAI_AGAIN" });
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const col = await startCollector({
      apiKey: "k",
      webhooks: loadWebhookConfig({ webhooks: { url: { allowed_ports: [port], allowed_networks: ["127.0.0.0/8"] } } }, {}),
      webhookDelivery: { lookup, backoff: { baseMs: 20, maxMs: 50 } },
    });
    cleanup.push(() => col.close());
    const client = hookClient(col.url);
    const root = runRecord({
      session_name: "hooks",
      end_time: "2026-11-22T10:16:00Z",
      extra: { metadata: { webhook: `http://hooks.team.example:${port}/done` } },
    });
    client.createRun(root as never);
    await client.shutdown();
    await col.collector.webhooks!.idle();
    expect(r.hits.map((h) => h.headers["x-tracepipe-attempt"])).toEqual(["3"]);
    const body = (await (
      await fetch(`${col.url}/runs/${root.id as string}/webhooks`, { headers: { "x-api-key": "k" } })
    ).json()) as DeliveryBody;
    expect(body.deliveries[0]).toMatchObject({ status: "delivered" });
    expect(body.deliveries[0]!.attempts.map((a) => a.status_code ?? a.error)).toEqual([
      "cannot resolve hooks.team.example: getaddrinfo EAI_AGAIN hooks.team.example",
      "cannot resolve hooks.team.example: getaddrinfo EAI_AGAIN hooks.team.example",
      200,
    ]);
    expect(col.collector.webhooks!.stats).toMatchObject({ delivered: 1, refused: 0 });
  });

  it("ends an attempt whose name resolution never answers within the timeout, and retries it", async () => {
    const sender = new WebhookSender(
      { enabled: true, headers: {}, policy: {} },
      { timeoutMs: 150, lookup: () => new Promise<never>(() => {}) },
    );
    const started = performance.now();
    const result = await sender.attempt("https://hooks.team.example/done", "run-1", { run_id: "run-1" });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result).toMatchObject({ verdict: "retry", error: "cannot resolve hooks.team.example: no address within 150 ms" });
    // A name that resolves to a refused address is still final: the same answer would come again.
    const refused = await new WebhookSender(
      { enabled: true, headers: {}, policy: {} },
      { lookup: async () => [{ address: "10.0.0.5", family: 4 }] },
    ).attempt("https://hooks.team.example/done", "run-1", {});
    expect(refused.verdict).toBe("refused");
  });

  it("refuses a webhook URL the policy forbids before connecting to it, and records why", async () => {
    const r = await receiver();
    const col = await startCollector({
      webhooks: { enabled: true, headers: {}, policy: { allowed_ports: [Number(new URL(r.url).port)] } },
    });
    cleanup.push(() => col.close());
    const run = runRecord({ end_time: "2026-11-22T10:16:00Z", extra: { metadata: { webhook: `${r.url}/hook` } } });
    const res = await fetch(`${col.url}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(run),
    });
    expect(res.status).toBeLessThan(300);
    await col.collector.webhooks!.idle();
    expect(col.collector.webhooks!.stats).toMatchObject({ refused: 1, failed: 1, delivered: 0, attempts: 0 });
    expect(r.hits).toHaveLength(0); // loopback, and allowed_networks does not name it
    const body = (await (await fetch(`${col.url}/runs/${run.id as string}/webhooks`)).json()) as DeliveryBody;
    expect(body.deliveries[0]).toMatchObject({ status: "failed" });
    expect(body.deliveries[0]!.attempts).toEqual([expect.objectContaining({ error: expect.stringContaining("refused (ssrf_blocked)") })]);
  });

  it("gives up after the last attempt and says so: failed, with every attempt kept", async () => {
    const r = await receiver(() => 500);
    const col = await startCollector({
      webhooks: { enabled: true, headers: {}, policy: { allowed_ports: [Number(new URL(r.url).port)], allowed_networks: ["127.0.0.0/8"] } },
      webhookDelivery: { maxAttempts: 3, backoff: { baseMs: 20, maxMs: 40 } },
    });
    cleanup.push(() => col.close());
    const run = runRecord({ end_time: "2026-11-22T10:16:00Z", extra: { metadata: { webhook: `${r.url}/hook` } } });
    await fetch(`${col.url}/runs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(run) });
    await col.collector.webhooks!.idle();
    expect(r.hits).toHaveLength(3);
    const body = (await (await fetch(`${col.url}/runs/${run.id as string}/webhooks`)).json()) as DeliveryBody;
    expect(body.deliveries[0]).toMatchObject({ status: "failed", next_attempt_at: null });
    expect(body.deliveries[0]!.attempts.map((a) => a.status_code)).toEqual([500, 500, 500]);
    expect(col.collector.webhooks!.stats).toMatchObject({ failed: 1, attempts: 3 });
  });

  it("delivers what a stopped collector left pending: the outbox lives in the store file", async () => {
    const r = await receiver();
    const dbPath = join(tempDir("tp-hook-restart-"), "traces.db");
    // The completion is stored (with its outbox row) by a process that stops before sending anything.
    const before = await openStore(dbPath, { webhookOutbox: true });
    const run = runRecord({ end_time: "2026-11-22T10:16:00Z", extra: { metadata: { webhook: `${r.url}/hook` } } });
    await before.ingest({ post: [run] });
    await before.close();
    const col = await startCollector({
      db: dbPath,
      webhooks: { enabled: true, headers: {}, policy: { allowed_ports: [Number(new URL(r.url).port)], allowed_networks: ["127.0.0.0/8"] } },
    });
    cleanup.push(() => col.close());
    await col.collector.webhooks!.idle();
    expect(r.hits.map((h) => h.headers["x-tracepipe-run-id"])).toEqual([run.id]);
  });

  it("refuses to start with webhooks on over a store opened without the outbox", async () => {
    const store = await openStore(":memory:");
    cleanup.push(() => store.close());
    await expect(createCollector({ db: store, webhooks: { enabled: true, headers: {}, policy: {} } })).rejects.toThrow(/webhookOutbox/);
  });
});

describe("the collector receives agent-server webhooks", () => {
  it("turns a run webhook with a good token into a trace run; a bad or missing token is 401 and stores nothing", async () => {
    const col = await startCollector({ apiKey: "k", webhookToken: "tok-123" });
    cleanup.push(() => col.close());
    const body = {
      run_id: "1ef0c3f4-7a2b-6c1d-9e8f-0a1b2c3d4e5f",
      thread_id: "thread-9",
      assistant_id: "agent",
      status: "success",
      created_at: "2026-11-22T10:00:00.000Z",
      updated_at: "2026-11-22T10:00:02.500Z",
      values: { messages: [{ type: "ai", content: "done" }] },
      kwargs: {
        input: { messages: [{ role: "user", content: "go" }] },
        config: { configurable: { user: "u1" } },
        metadata: { env: "prod" },
      },
    };
    const post = (q: string) =>
      fetch(`${col.url}/webhooks/runs${q}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await post("?token=wrong")).status).toBe(401);
    expect((await post("")).status).toBe(401);
    expect((await post("?token=tok-12")).status).toBe(401);
    expect(await col.collector.store.countRuns("agent-server")).toBe(0);
    const ok = await post("?token=tok-123");
    expect(ok.status).toBe(200);
    const run = (await col.collector.store.getRun(body.run_id))!;
    expect(run).toMatchObject({
      run_type: "chain",
      session_name: "agent-server",
      name: "agent agent",
      inputs: body.kwargs.input,
      outputs: body.values,
      start_time: "2026-11-22T10:00:00.000000Z",
      end_time: "2026-11-22T10:00:02.500000Z",
    });
    expect((run.extra as { metadata: Record<string, unknown> }).metadata).toMatchObject({
      env: "prod",
      thread_id: "thread-9",
      assistant_id: "agent",
      status: "success",
    });
    const bad = await fetch(`${col.url}/webhooks/runs?token=tok-123`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ created_at: "yesterday" }),
    });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc)).toEqual([
      ["body", "run_id"],
      ["body", "created_at"],
    ]);
    // Other routes still need the API key.
    expect((await fetch(`${col.url}/runs/${body.run_id}`)).status).toBe(401);
  });
});

describe("tracepipe check-config and serve --graph-config", () => {
  it("reports every problem with its location, exits 1 for problems, 0 when clean, 2 for an unreadable file; serve refuses to start naming a missing variable", async () => {
    const dir = tempDir("tp-check-");
    const bad = join(dir, "bad.json");
    writeFileSync(
      bad,
      JSON.stringify({
        graphs: { agent: "./agent.py:graph" },
        webhooks: { headers: { a: "${{ env.SVC_WEBHOOK_NOPE }}", b: "${{ env.HOME }}" }, url: { require_https: "yes" } },
      }),
    );
    const r = await runCli(["check-config", bad], { env: { SVC_WEBHOOK_NOPE: "" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"loc":["webhooks","url","require_https"]');
    const good = join(dir, "good.json");
    writeFileSync(
      good,
      JSON.stringify({
        graphs: { agent: "./agent.py:graph" },
        webhooks: { headers: { a: "${{ env.SVC_WEBHOOK_TOKEN }}" }, url: { allowed_domains: ["*.example.com"], require_https: true } },
      }),
    );
    const ok = await runCli(["check-config", good], { env: { SVC_WEBHOOK_TOKEN: "x" } });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("ok (webhooks enabled, 1 header(s))");
    const refs = join(dir, "refs.json");
    writeFileSync(refs, JSON.stringify({ webhooks: { headers: { a: "${{ env.SVC_WEBHOOK_NOPE }}", b: "${{ env.HOME }}" } } }));
    const r2 = await runCli(["check-config", refs]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain("references env.SVC_WEBHOOK_NOPE, which is not set");
    expect(r2.stderr).toContain("references env.HOME, but only variables starting with SVC_WEBHOOK_ may be used");
    expect((await runCli(["check-config", join(dir, "missing.json")])).code).toBe(2);
    const serve = await runCli(["serve", "--port", "0", "--db", ":memory:", "--graph-config", refs]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain("webhooks.headers.a: references env.SVC_WEBHOOK_NOPE, which is not set");
  });
});
