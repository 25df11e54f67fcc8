/**
 * A run whose instrumentation captured no content (usage only, on the span),
 * in the viewer in chromium: it says so instead of showing an empty prompt,
 * and shows the usage and cost the run keeps.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { startCollector, type Running } from "../helpers/collector.js";
import { chromiumPath, launch, screenshotPath } from "./browser.js";

let col: Running;
let browser: Browser;

const span = {
  traceId: "5bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "10f067aa0ba902b7",
  name: "chat gpt-4o",
  kind: 3,
  startTimeUnixNano: "1764000000000000000",
  endTimeUnixNano: "1764000001000000000",
  attributes: [
    { key: "gen_ai.operation.name", value: { stringValue: "chat" } },
    { key: "gen_ai.system", value: { stringValue: "openai" } },
    { key: "gen_ai.response.model", value: { stringValue: "gpt-4o-2024-08-06" } },
    { key: "gen_ai.usage.input_tokens", value: { intValue: "25" } },
    { key: "gen_ai.usage.output_tokens", value: { intValue: "9" } },
  ],
};

describe.skipIf(!chromiumPath)("a run without captured content, in the viewer", () => {
  beforeAll(async () => {
    col = await startCollector();
    browser = await launch();
    const res = await fetch(`${col.url}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        resourceSpans: [{ scopeSpans: [{ scope: { name: "@opentelemetry/instrumentation-openai" }, spans: [span] }] }],
      }),
    });
    expect(res.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await col?.close();
  });

  it("says the content was not captured by the instrumentation, and shows the usage kept on the run", async () => {
    const page = await browser.newPage();
    await page.goto(`${col.url}/#/`);
    await page.locator("tr.trace-row", { hasText: "chat gpt-4o" }).click();
    await page.locator(".tree .node").first().click();
    const note = page.locator(".run-detail .note", { hasText: "content not captured by the instrumentation" });
    await note.waitFor();
    expect(await page.locator(".run-detail .msg").count()).toBe(0);
    expect(await page.locator(".run-detail .facts").innerText()).toMatch(/Input tokens\s+25[\s\S]*Cost/);
    await page.screenshot({ path: screenshotPath("run-content-not-captured.png"), fullPage: true });
  });
});
