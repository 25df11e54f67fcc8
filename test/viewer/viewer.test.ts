/**
 * The trace viewer in a real browser (Debian chromium via playwright-core):
 * traces captured by the real wrappers over the replay server, delivered by
 * the real Client to the real collector, then looked at as a person would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import type { Browser, Page } from "playwright-core";
import { wrapAnthropic, wrapOpenAI, traceable } from "../../src/tracing/index.js";
import { Client } from "../../src/ingest/index.js";
import { startReplayServer, type ReplayServer } from "../helpers/replay-server.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";
import { chromiumPath, launch, screenshotPath } from "./browser.js";
import { bulkTrace, PNG_1PX, XSS } from "./traces.js";

const KEY = "tp-viewer-key";
let vendor: ReplayServer;
let col: Running;
let browser: Browser;
let client: Client;

function newClient(project = "viewer"): Client {
  return new Client({ endpoint: col.url, apiKey: KEY, project, spoolDir: join(tempDir("tp-viewer-"), "spool"), warn: () => {} });
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "chatcmpl-tool1",
  object: "chat.completion.chunk",
  created: 1763800001,
  model: "gpt-4o-2024-08-06",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});

/** A weather agent: a streamed call that asks for a tool, the tool, then a call with its result. */
async function weatherAgent(): Promise<void> {
  vendor.push({
    delayMs: 15,
    sse: [
      chunk({
        role: "assistant",
        content: null,
        tool_calls: [{ index: 0, id: "call_weather_1", type: "function", function: { name: "get_weather", arguments: "" } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({}, "tool_calls"),
      { ...chunk({}), choices: [], usage: { prompt_tokens: 42, completion_tokens: 17, total_tokens: 59 } },
    ],
  });
  vendor.push({
    json: {
      id: "chatcmpl-tool2",
      object: "chat.completion",
      created: 1763800002,
      model: "gpt-4o-2024-08-06",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "It is 18°C and sunny in Paris.", refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 70, completion_tokens: 9, total_tokens: 79 },
    },
  });
  const openai = wrapOpenAI(new OpenAI({ apiKey: "sk-x", baseURL: `${vendor.url}/v1`, maxRetries: 0 }), { client });
  const getWeather = traceable(async (city: string) => `18°C and sunny in ${city}`, { name: "get_weather", run_type: "tool", client });
  const agent = traceable(
    async (question: string) => {
      const history: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: question }];
      const tools = [
        {
          type: "function" as const,
          function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
        },
      ];
      const stream = await openai.chat.completions.create({
        model: "gpt-4o",
        stream: true,
        stream_options: { include_usage: true },
        messages: history,
        tools,
      });
      for await (const _ of stream) void _;
      const result = await getWeather("Paris");
      history.push({
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_weather_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      });
      history.push({ role: "tool", tool_call_id: "call_weather_1", content: result });
      const done = await openai.chat.completions.create({ model: "gpt-4o", messages: history, tools });
      return done.choices[0]!.message.content;
    },
    { name: "weather-agent", client },
  );
  expect(await agent("Weather in Paris?")).toBe("It is 18°C and sunny in Paris.");
}

/** An Anthropic call with an image in and thinking out. */
async function visionCall(): Promise<void> {
  vendor.push({
    json: {
      id: "msg_vision",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [
        { type: "thinking", thinking: "The picture is a single red pixel, so the answer is red.", signature: "sig-abc" },
        { type: "text", text: "It is a red pixel." },
      ],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 1200, output_tokens: 30, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    },
  });
  const anthropic = wrapAnthropic(new Anthropic({ apiKey: "sk-x", baseURL: vendor.url, maxRetries: 0 }), { client });
  await anthropic.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    thinking: { type: "enabled", budget_tokens: 512 },
    messages: [
      {
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1PX } },
          { type: "text", text: "What colour is this?" },
        ],
      },
    ],
  });
}

async function failingTool(): Promise<void> {
  const flaky = traceable(
    async () => {
      throw new Error("upstream 503: the tool crashed");
    },
    { name: "flaky-tool", run_type: "tool", client },
  );
  await expect(flaky()).rejects.toThrow("upstream 503");
}

/** Open the viewer already signed in (the key in sessionStorage, as the sign-in form leaves it). */
async function open(page: Page, hash = "#/"): Promise<void> {
  // A same-origin file that runs no script, so the page never asks the API without the key.
  await page.goto(`${col.url}/viewer/style.css`);
  await page.evaluate((k) => (globalThis as any).sessionStorage.setItem("tracepipe.apiKey", k), KEY);
  await page.goto(`${col.url}/${hash}`);
}

const row = (page: Page, name: string) => page.locator("tr.trace-row", { has: page.locator("td.name a", { hasText: name }) });

describe.skipIf(!chromiumPath)("trace viewer in chromium", () => {
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  let page: Page;

  beforeAll(async () => {
    vendor = await startReplayServer();
    col = await startCollector({ apiKey: KEY });
    client = newClient();
    await weatherAgent();
    await visionCall();
    await failingTool();
    await client.flush();
    // Through the store's one ingest operation, as the collector does: a 500-run trace and a hostile run.
    await col.collector.store.ingest({ post: [...bulkTrace(500), XSS.run] });
    browser = await launch();
    page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on("pageerror", (e) => pageErrors.push(e.message));
    page.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));
  });

  afterAll(async () => {
    await browser?.close();
    await client?.shutdown();
    await col?.close();
    await vendor?.close();
  });

  it("lists the traces with their tokens, latency, status and run counts", async () => {
    await open(page);
    const agent = row(page, "weather-agent");
    await agent.waitFor();
    expect(await agent.locator("td.tokens").innerText()).toBe("138"); // 59 streamed + 79
    expect(await agent.locator("td.model").innerText()).toBe("gpt-4o-2024-08-06");
    expect(await agent.locator("td.status").innerText()).toBe("ok");
    expect(await agent.locator("td.runs").innerText()).toBe("4");
    expect(await agent.locator("td.ttft").innerText()).toMatch(/^\d+ ms$/);
    const bulk = row(page, "bulk-500");
    expect(await bulk.locator("td.latency").innerText()).toBe("2.50 s");
    expect(await bulk.locator("td.runs").innerText()).toBe("500");
    expect(await row(page, "flaky-tool").locator("td.status").innerText()).toBe("error");
    const vision = page.locator("tr.trace-row", { has: page.locator("td.provider", { hasText: "anthropic" }) });
    expect(await vision.locator("td.tokens").innerText()).toBe("1,230");
    await page.screenshot({ path: screenshotPath("list.png"), fullPage: true });
  });

  it("filters to errors only and by text in inputs", async () => {
    await open(page, "#/?errors_only=true");
    await row(page, "flaky-tool").waitFor();
    expect(await page.locator("tr.trace-row").count()).toBe(1);
    await open(page, `#/?q=${encodeURIComponent("What colour")}`);
    await page.locator("tr.trace-row td.provider", { hasText: "anthropic" }).waitFor();
    expect(await page.locator("tr.trace-row").count()).toBe(1);
  });

  it("sorts by cost (priced traces first, dearest on top) and filters by a minimum cost", async () => {
    await open(page, "#/?sort=cost");
    await row(page, "weather-agent").waitFor();
    expect(await page.locator('select[name="sort"]').inputValue()).toBe("cost");
    const cells = await page.locator("tr.trace-row td.cost").allInnerTexts();
    const priced = cells.filter((c) => c !== "–").map((c) => Number(c.slice(1)));
    // The wrapped OpenAI and Anthropic calls are priced; the rest (chains, tools) have no cost and come last.
    expect(priced.length).toBeGreaterThanOrEqual(2);
    expect(cells.slice(0, priced.length).every((c) => c !== "–")).toBe(true);
    expect(priced).toEqual([...priced].sort((a, b) => b - a));
    // The cheapest priced trace is left out by a minimum just above it.
    const min = priced.at(-1)! + 1e-6;
    await open(page, `#/?sort=cost&min_cost=${min}`);
    await page.locator("tr.trace-row").first().waitFor();
    expect(await page.locator('input[name="min_cost"]').inputValue()).toBe(String(min));
    expect(await page.locator("tr.trace-row").count()).toBe(priced.filter((c) => c >= min).length);
  });

  it("opens a trace as a tree with a waterfall, the tool result under its call", async () => {
    await open(page);
    await row(page, "weather-agent").click();
    await page.locator(".tree .node").nth(3).waitFor();
    const names = await page.locator(".tree .node .run-name").allInnerTexts();
    expect(names).toEqual(["weather-agent", "ChatOpenAI", "get_weather", "ChatOpenAI"]);
    // The streamed call has its first-token mark inside its bar's lane.
    expect(await page.locator(".tree .node").nth(1).locator(".ttft-mark").count()).toBe(1);
    // Collapsing the root hides its children.
    await page.locator(".tree .node").first().locator("button.toggle").click();
    expect(await page.locator(".tree .node").count()).toBe(1);
    await page.locator(".tree .node").first().locator("button.toggle").click();
    expect(await page.locator(".tree .node").count()).toBe(4);
    await page.screenshot({ path: screenshotPath("trace.png"), fullPage: true });

    await page.locator(".tree .node").nth(3).click();
    const call = page.locator('.run-detail .tool-call[data-tool-call-id="call_weather_1"]');
    await call.waitFor();
    expect(await call.locator("pre.args").innerText()).toBe(JSON.stringify({ city: "Paris" }, null, 2));
    expect(await call.locator(".tool-result").innerText()).toContain("18°C and sunny in Paris");
    // Shown once, under its call, not again as a loose message.
    expect(await page.locator('.run-detail .msg[data-role="tool"]').count()).toBe(0);
    expect(await page.locator(".run-detail .facts").innerText()).toMatch(/Input tokens\s+70/);
    await page.screenshot({ path: screenshotPath("run-tool-result.png"), fullPage: true });
  });

  it("shows the image a user sent and the model's folded reasoning", async () => {
    await open(page);
    await page.locator("tr.trace-row", { has: page.locator("td.provider", { hasText: "anthropic" }) }).click();
    const img = page.locator(".run-detail figure.image img");
    await img.waitFor();
    expect(await img.getAttribute("src")).toMatch(/^blob:/);
    await expect.poll(() => img.evaluate((el: any) => el.complete && el.naturalWidth)).toBe(1);
    const reasoning = page.locator(".run-detail details.reasoning");
    expect(await reasoning.evaluate((d: any) => d.open)).toBe(false);
    await reasoning.locator("summary").click();
    expect(await reasoning.innerText()).toContain("single red pixel");
    expect(await page.locator(".run-detail .facts").innerText()).toMatch(/Input tokens\s+1,200/);
    await page.screenshot({ path: screenshotPath("run.png"), fullPage: true });
  });

  it("shows the error with its message", async () => {
    await open(page);
    await row(page, "flaky-tool").click();
    await page.locator(".run-detail .error-box").waitFor();
    expect(await page.locator(".run-detail .error-box").innerText()).toContain("upstream 503: the tool crashed");
  });

  it("shows HTML in a run as text and runs none of it", async () => {
    await open(page, `#/trace/${XSS.run.id}`);
    await page.locator(".run-detail .msg").first().waitFor();
    const texts = await page.locator(".run-detail .msg .textblock").allInnerTexts();
    expect(texts).toEqual([XSS.text, XSS.text]);
    expect(await page.locator(".run-detail .conversation img").count()).toBe(0);
    expect(await page.locator(".tree .run-name").first().innerText()).toBe(XSS.name);
    await open(page);
    // count() does not wait: the list is fetched after the page loads, so wait for the row first.
    await row(page, XSS.name).waitFor();
    expect(await row(page, XSS.name).count()).toBe(1);
    await page.waitForTimeout(300); // let any injected handler (there must be none) fire
    expect(dialogs).toEqual([]);
  });

  it("renders a 500-run trace", async () => {
    await open(page);
    await row(page, "bulk-500").click();
    await page.locator(".tree .node").nth(499).waitFor();
    expect(await page.locator(".tree .node").count()).toBe(500);
    // Fold step-1 (it has a child and a grandchild), then pick another run: the fold stays.
    await page.locator('.tree .node[data-depth="1"]').first().locator("button.toggle").click();
    expect(await page.locator(".tree .node").count()).toBe(498);
    await page.locator(".tree .node").nth(2).click();
    await page.locator(".run-detail h2", { hasText: "step-4" }).waitFor();
    expect(await page.locator(".tree .node").count()).toBe(498);
    expect(await page.locator(".tree .node.selected .run-name").innerText()).toBe("step-4");
  });

  it("shows a trace ingested while the page is open, without a reload", async () => {
    await open(page);
    await row(page, "weather-agent").waitFor();
    const before = await page.evaluate(() => (globalThis as any).performance.getEntriesByType("navigation").length);
    const later = traceable(async (x: string) => x.toUpperCase(), { name: "arrived-later", client });
    await later("late");
    await client.flush();
    await row(page, "arrived-later").waitFor({ timeout: 15_000 });
    expect(await page.locator("tr.trace-row").first().locator("td.name a").innerText()).toBe("arrived-later");
    expect(await page.evaluate(() => (globalThis as any).performance.getEntriesByType("navigation").length)).toBe(before);
  });

  it("asks for the API key and never puts it in a URL", async () => {
    const fresh = await browser.newPage();
    const urls: string[] = [];
    fresh.on("request", (r) => urls.push(r.url()));
    await fresh.goto(`${col.url}/`);
    await fresh.locator("form#signin").waitFor();
    await fresh.fill("#api-key", "wrong-key");
    await fresh.click("form#signin button[type=submit]");
    await fresh.locator("form#signin", { hasText: "refused" }).waitFor();
    await fresh.fill("#api-key", KEY);
    await fresh.click("form#signin button[type=submit]");
    await fresh.locator("tr.trace-row").first().waitFor();
    expect(urls.some((u) => u.includes(KEY) || u.includes("wrong-key"))).toBe(false);
    expect(await fresh.evaluate(() => (globalThis as any).sessionStorage.getItem("tracepipe.apiKey"))).toBe(KEY);
    await fresh.close();
  });

  it("ran no script the CSP refused and threw nothing", () => {
    expect(pageErrors).toEqual([]);
  });
});
