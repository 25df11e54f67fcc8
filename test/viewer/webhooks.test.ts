/**
 * A run's webhook deliveries on its page in the viewer (Debian chromium via
 * playwright-core): a real collector with webhooks configured, a loopback
 * receiver that fails once and then accepts, and the page showing the status
 * and both attempts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { startCollector, type Running } from "../helpers/collector.js";
import { runRecord } from "../helpers/runs.js";
import { chromiumPath, launch, screenshotPath } from "./browser.js";

describe.skipIf(!chromiumPath)("webhook deliveries in the viewer", () => {
  let receiver: Server;
  let col: Running;
  let browser: Browser;
  let hits = 0;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(++hits === 1 ? 503 : 204).end());
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const port = (receiver.address() as AddressInfo).port;
    col = await startCollector({
      webhooks: { enabled: true, headers: {}, policy: { allowed_ports: [port], allowed_networks: ["127.0.0.0/8"] } },
      webhookDelivery: { backoff: { baseMs: 20, maxMs: 40 } },
    });
    browser = await launch();
  });

  afterAll(async () => {
    await browser?.close();
    await col?.close();
    await new Promise((r) => receiver?.close(r));
  });

  it("shows the delivery's status, URL and every attempt on the run's page", async () => {
    const port = (receiver.address() as AddressInfo).port;
    const run = runRecord({
      name: "hooked",
      end_time: "2026-11-22T10:15:01.000000Z",
      extra: { metadata: { webhook: `http://127.0.0.1:${port}/done` } },
    });
    await col.collector.store.ingest({ post: [run] });
    col.collector.webhooks!.wake();
    await col.collector.webhooks!.idle();
    const page = await browser.newPage();
    await page.goto(`${col.url}/#/trace/${run.id as string}`);
    const block = page.locator('.run-detail .webhook[data-status="delivered"]');
    await block.waitFor();
    expect(await block.locator("code").innerText()).toBe(`http://127.0.0.1:${port}/done`);
    const rows = await block.locator("table.webhook-attempts tbody tr").allInnerTexts();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain("HTTP 503");
    expect(rows[1]).toContain("HTTP 204");
    await page.screenshot({ path: screenshotPath("run-webhooks.png"), fullPage: true });
  });
});
