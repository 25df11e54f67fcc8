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

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

interface Receiver {
  url: string;
  hits: { path: string; headers: IncomingMessage["headers"]; body: Record<string, unknown> }[];
}
/** A loopback webhook receiver; `script(n)` gives the status of the n-th request (1-based). */
async function receiver(script: (n: number) => number | { status: number; headers?: Record<string, string>; delayMs?: number } = () => 200): Promise<Receiver> {
  const hits: Receiver["hits"] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    hits.push({ path: req.url ?? "", headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown> });
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
    expect(loadWebhookConfig({ webhooks: { headers: { authorization: "Bearer ${{ env.SVC_WEBHOOK_SECRET }}" } } }, env).headers).toEqual({ authorization: "Bearer s3" });
    const { issues } = checkWebhookConfig({ webhooks: { headers: { a: "${{ env.OTHER_SECRET }}", b: "${{ env.SVC_WEBHOOK_MISSING }}", c: "${{ secrets.X }}" } } }, env);
    expect(issues).toEqual([
      { loc: ["webhooks", "headers", "a"], msg: "references env.OTHER_SECRET, but only variables starting with SVC_WEBHOOK_ may be used", type: "env_prefix" },
      { loc: ["webhooks", "headers", "b"], msg: "references env.SVC_WEBHOOK_MISSING, which is not set", type: "env_missing" },
      { loc: ["webhooks", "headers", "c"], msg: "a ${{ ... }} reference that is not of the form ${{ env.NAME }}", type: "value_error" },
    ]);
    expect(() => loadWebhookConfig({ webhooks: { headers: { b: "${{ env.SVC_WEBHOOK_MISSING }}" } } }, env)).toThrow(ConfigError);
    expect(loadWebhookConfig({ webhooks: { env_prefix: "ACME_", headers: { t: "${{ env.ACME_TOKEN }}" } } }, env).headers).toEqual({ t: "t" });
    expect(checkWebhookConfig({ webhooks: { env_prefix: "ACME_", headers: { t: "${{ env.SVC_WEBHOOK_SECRET }}" } } }, env).issues[0]!.msg).toContain("starting with ACME_ may be used (webhooks.env_prefix)");
    expect(loadWebhookConfig({ http: { disable_webhooks: true } }, env).enabled).toBe(false);
    const types = checkWebhookConfig({ webhooks: { url: { allowed_ports: ["443"], allowed_domains: ["bad domain"], require_https: "yes" } } }, env).issues;
    // Shape and domain-pattern problems come in one list, not one layer at a time.
    expect(types.map((i) => i.loc.join(".")).sort()).toEqual(["webhooks.url.allowed_domains.0", "webhooks.url.allowed_ports.0", "webhooks.url.require_https"]);
    expect(checkWebhookConfig({ webhooks: { url: { allowed_domains: ["*.example.com", "bad domain"] } } }, env).issues).toEqual([
      { loc: ["webhooks", "url", "allowed_domains", 1], msg: '"bad domain" is not a hostname or a *.domain wildcard', type: "value_error" },
    ]);
  });
});

describe("webhook URL policy", () => {
  const publicDns = async (host: string) => (host.endsWith(".internal.example.com") ? [{ address: "10.1.2.3", family: 4 }] : host === "mixed.example.com" ? [{ address: "93.184.216.34", family: 4 }, { address: "127.0.0.1", family: 4 }] : [{ address: "93.184.216.34", family: 4 }]);
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
    expect(await refused(vet("/internal/hook", { disable_loopback: true }, { baseUrl: "http://127.0.0.1:8484" }))).toBe("loopback_disabled");
    expect((await vet("/internal/hook", {}, { baseUrl: "http://127.0.0.1:8484" })).url.href).toBe("http://127.0.0.1:8484/internal/hook");
  });

  it("does not follow a redirect, so a redirect to the metadata address goes nowhere", async () => {
    const r = await receiver(() => ({ status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } }));
    const results: unknown[] = [];
    const sender = new WebhookSender({ enabled: true, headers: {}, policy: { allowed_ports: [Number(new URL(r.url).port)] } }, { allowPrivateNetworks: true, onResult: (x) => results.push(x), backoff: { baseMs: 1, maxMs: 2 } });
    sender.send(`${r.url}/hook`, { run_id: "x" });
    await sender.idle();
    expect(r.hits).toHaveLength(1);
    expect(results).toEqual([expect.objectContaining({ ok: false, status: 302, error: "redirects are not followed", attempts: 1 })]);
  });
});

describe("the collector sends run-completion webhooks", () => {
  it("POSTs the completed root run with kwargs and the configured headers once, retrying a failed delivery, without blocking ingest", async () => {
    const r = await receiver((n) => (n === 1 ? { status: 503, delayMs: 800 } : 200)); // a slow, failing receiver first
    const config = loadWebhookConfig({ webhooks: { headers: { "x-hook-auth": "${{ env.SVC_WEBHOOK_SECRET }}" }, url: { allowed_ports: [Number(new URL(r.url).port)] } } }, { SVC_WEBHOOK_SECRET: "s3cr3t" });
    const col = await startCollector({ apiKey: "k", webhooks: config, webhookDelivery: { allowPrivateNetworks: true, backoff: { baseMs: 20, maxMs: 50 } } });
    cleanup.push(() => col.close());
    const client = new Client({ endpoint: col.url, apiKey: "k", project: "hooks", spoolDir: join(tempDir("tp-hook-"), "spool"), warn: () => {} });
    const root = runRecord({ session_name: "hooks", inputs: { question: "why?" }, extra: { metadata: { webhook: `${r.url}/done?token=abc`, thread_id: "t-1" }, config: { recursion_limit: 5 } } });
    const child = runRecord({ session_name: "hooks", parent_run_id: root.id, trace_id: root.id, extra: { metadata: { webhook: `${r.url}/child` } } });
    const plain = runRecord({ session_name: "hooks" });
    for (const run of [root, child, plain]) client.createRun(run as never);
    await client.flush();
    for (const run of [root, child, plain]) client.updateRun(run.id as string, { end_time: "2026-11-22T10:16:00Z", outputs: { answer: 42 } });
    client.updateRun(root.id as string, { end_time: "2026-11-22T10:16:01Z" }); // completed again: still one webhook
    await client.flush();
    // Ingest was acknowledged while the (slow, failing) first delivery was still under way.
    expect(col.collector.webhooks!.stats.delivered).toBe(0);
    await client.shutdown();
    await col.collector.webhooks!.idle();
    expect(r.hits.map((h) => h.path)).toEqual(["/done?token=abc", "/done?token=abc"]); // the 503, then the retry
    const hit = r.hits[1]!;
    expect(hit.headers["x-hook-auth"]).toBe("s3cr3t");
    expect(hit.body).toMatchObject({ run_id: root.id, thread_id: "t-1", status: "success", output: { answer: 42 }, kwargs: { input: { question: "why?" }, config: { recursion_limit: 5 }, metadata: { thread_id: "t-1" } } });
    expect(col.collector.webhooks!.stats).toMatchObject({ delivered: 1, failed: 0, attempts: 2 });
  });

  it("refuses a webhook URL the policy forbids before connecting to it", async () => {
    const r = await receiver();
    const col = await startCollector({ webhooks: { enabled: true, headers: {}, policy: { allowed_ports: [Number(new URL(r.url).port)] } } });
    cleanup.push(() => col.close());
    const run = runRecord({ end_time: "2026-11-22T10:16:00Z", extra: { metadata: { webhook: `${r.url}/hook` } } });
    const res = await fetch(`${col.url}/runs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(run) });
    expect(res.status).toBeLessThan(300);
    await col.collector.webhooks!.idle();
    expect(col.collector.webhooks!.stats).toMatchObject({ refused: 1, delivered: 0 });
    expect(r.hits).toHaveLength(0); // loopback: refused without allowPrivateNetworks
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
      kwargs: { input: { messages: [{ role: "user", content: "go" }] }, config: { configurable: { user: "u1" } }, metadata: { env: "prod" } },
    };
    const post = (q: string) => fetch(`${col.url}/webhooks/runs${q}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await post("?token=wrong")).status).toBe(401);
    expect((await post("")).status).toBe(401);
    expect((await post("?token=tok-12")).status).toBe(401);
    expect(await col.collector.store.countRuns("agent-server")).toBe(0);
    const ok = await post("?token=tok-123");
    expect(ok.status).toBe(200);
    const run = (await col.collector.store.getRun(body.run_id))!;
    expect(run).toMatchObject({ run_type: "chain", session_name: "agent-server", name: "agent agent", inputs: body.kwargs.input, outputs: body.values, start_time: "2026-11-22T10:00:00.000000Z", end_time: "2026-11-22T10:00:02.500000Z" });
    expect((run.extra as { metadata: Record<string, unknown> }).metadata).toMatchObject({ env: "prod", thread_id: "thread-9", assistant_id: "agent", status: "success" });
    const bad = await fetch(`${col.url}/webhooks/runs?token=tok-123`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ created_at: "yesterday" }) });
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
    writeFileSync(bad, JSON.stringify({ graphs: { agent: "./agent.py:graph" }, webhooks: { headers: { a: "${{ env.SVC_WEBHOOK_NOPE }}", b: "${{ env.HOME }}" }, url: { require_https: "yes" } } }));
    const r = await runCli(["check-config", bad], { env: { SVC_WEBHOOK_NOPE: "" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"loc":["webhooks","url","require_https"]');
    const good = join(dir, "good.json");
    writeFileSync(good, JSON.stringify({ graphs: { agent: "./agent.py:graph" }, webhooks: { headers: { a: "${{ env.SVC_WEBHOOK_TOKEN }}" }, url: { allowed_domains: ["*.example.com"], require_https: true } } }));
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
