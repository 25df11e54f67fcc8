/**
 * Monitoring, threads, metadata filters and feedback in a real browser (Debian
 * chromium via playwright-core): a generated week of traces with a known shape
 * (week.ts) delivered by our Client to the real collector, then checked as a
 * person would, from the page's own text, tables and accessible labels.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { Client } from "../../src/ingest/index.js";
import { startCollector, type Running } from "../helpers/collector.js";
import { tempDir } from "../helpers/runs.js";
import { chromiumPath, launch, screenshotPath } from "./browser.js";
import { BURST_HOUR, generateWeek, HOUR, MARKUP, MARKUP_KEY, PROJECT, STEP_HOUR, THREADS, WEEK_START, type Week } from "./week.js";

const KEY = "tp-insights-key";

/** The few DOM members read inside the page (the tests compile without the DOM library). */
interface El {
  dataset: Record<string, string>;
  hash: string;
  firstElementChild: { textContent: string } | null;
  querySelector(selector: string): El | null;
}
let col: Running;
let browser: Browser;
let week: Week;

async function open(page: Page, hash: string): Promise<void> {
  // A same-origin file that runs no script, so the page never asks the API without the key.
  await page.goto(`${col.url}/viewer/style.css`);
  await page.evaluate((k) => (globalThis as any).sessionStorage.setItem("tracepipe.apiKey", k), KEY);
  await page.goto(`${col.url}/${hash}`);
}

/** A chart's numbers from its table: one entry per bucket, the series' raw values. */
async function chartNumbers(page: Page, chart: string, series: string): Promise<{ t: number; label: string; v: number | null }[]> {
  return page.locator(`table.chart-data[data-chart="${chart}"] tbody tr`).evaluateAll(
    (rows, s) =>
      rows.map((r) => {
        const cell = (r as unknown as El).querySelector(`td[data-series="${s}"]`)!;
        return {
          t: Number((r as unknown as El).dataset.t),
          label: (r as unknown as El).firstElementChild!.textContent,
          v: cell.dataset.v === "" ? null : Number(cell.dataset.v),
        };
      }),
    series,
  );
}

const weekRange = `project=${PROJECT}&range=custom&from=${new Date(WEEK_START).toISOString()}&to=${new Date(WEEK_START + 168 * HOUR).toISOString()}&bucket=hour`;

describe.skipIf(!chromiumPath)("monitoring, threads, filters and feedback in chromium", () => {
  const dialogs: string[] = [];
  const pageErrors: string[] = [];
  let page: Page;

  beforeAll(async () => {
    col = await startCollector({ apiKey: KEY });
    week = generateWeek();
    const client = new Client({
      endpoint: col.url,
      apiKey: KEY,
      project: PROJECT,
      spoolDir: join(tempDir("tp-insights-ui-"), "spool"),
      warn: () => {},
    });
    for (const r of week.runs) client.createRun(r as never);
    const [a, b] = week.llmRuns;
    client.createFeedback(a!.id, "correctness", { score: 1, comment: MARKUP });
    client.createFeedback(a!.id, "tone", { value: "friendly", comment: "Short and polite." });
    client.createFeedback(b!.id, "correctness", { score: 0 });
    expect((await client.shutdown({ timeoutMs: 20_000 })).ok).toBe(true);
    browser = await launch();
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on("pageerror", (e) => pageErrors.push(e.message));
    page.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await col?.close();
  });

  it("charts the week: the p95 latency steps up on day 4 and errors peak at the burst hour", async () => {
    await open(page, `#/monitor?${weekRange}`);
    await page.locator("#chart-trace-latency canvas").first().waitFor();
    const p95 = await chartNumbers(page, "trace-latency", "p95");
    expect(p95).toHaveLength(168);
    const before = p95.slice(0, STEP_HOUR).map((b) => b.v!);
    const after = p95.slice(STEP_HOUR).map((b) => b.v!);
    expect(Math.max(...before)).toBeLessThan(Math.min(...after));
    expect(p95[STEP_HOUR]!.label).toBe("2026-11-19 00:00"); // day 4 of the week
    const errors = await chartNumbers(page, "traces", "errors");
    const peak = errors.reduce((m, b) => (b.v! > m.v! ? b : m));
    expect(peak.label).toBe(new Date(WEEK_START + BURST_HOUR * HOUR).toISOString().slice(0, 16).replace("T", " "));
    expect(peak.v).toBe(6);
    // The same facts in the chart's accessible description.
    expect(await page.locator("#chart-traces").getAttribute("aria-description")).toContain(`errors peaks at 6 at ${peak.label} UTC`);
    expect(await page.locator("#chart-llm-latency").getAttribute("aria-description")).toContain("p95 peaks at 1.20 s");
    await page.screenshot({ path: screenshotPath("monitoring.png"), fullPage: true });
  });

  it("lists each model's calls, tokens and cost exactly as generated, rows linking to the filtered list", async () => {
    await open(page, `#/monitor?${weekRange}`);
    const rows = page.locator('section[data-by="model"] tr.breakdown-row');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    for (const [model, t] of Object.entries(week.totals)) {
      const r = page.locator(`section[data-by="model"] tr.breakdown-row[data-value="${model}"]`);
      expect(await r.locator("td.runs").innerText()).toBe(t.runs.toLocaleString("en-US"));
      expect(await r.locator("td.input-tokens").innerText()).toBe(t.input.toLocaleString("en-US"));
      expect(await r.locator("td.output-tokens").innerText()).toBe(t.output.toLocaleString("en-US"));
      expect(Number(await r.locator("td.cost").getAttribute("data-v"))).toBe(t.cost);
      expect(await r.locator(".spark").getAttribute("aria-label")).toMatch(new RegExp(`^${model}, runs per bucket: `));
    }
    await page.locator('section[data-by="model"] tr.breakdown-row[data-value="claude-3-5-haiku"] td.value a').click();
    await page.locator("tr.trace-row").first().waitFor();
    expect(page.url()).toContain("model=claude-3-5-haiku");
    const models = await page.locator("tr.trace-row td.model").allInnerTexts();
    expect(new Set(models)).toEqual(new Set(["claude-3-5-haiku"]));
  });

  it("opens the trace list for the hour clicked on a chart, and for a range dragged across it", async () => {
    await open(page, `#/monitor?${weekRange}`);
    const over = page.locator("#chart-traces .u-over");
    await over.waitFor();
    const box = (await over.boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    await page.waitForURL(/start_time_gte/);
    const hash = new URLSearchParams(new URL(page.url()).hash.split("?")[1]);
    const from = Date.parse(hash.get("start_time_gte")!);
    expect(Date.parse(hash.get("start_time_lt")!) - from).toBe(HOUR);
    expect(hash.get("project")).toBe(PROJECT);
    await page.locator("tr.trace-row").first().waitFor();
    expect(await page.locator("tr.trace-row").count()).toBeGreaterThanOrEqual(2);

    await open(page, `#/monitor?${weekRange}`);
    await over.waitFor();
    await page.mouse.move(box.x + box.width * 0.2, box.y + 40);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.4, box.y + 40, { steps: 8 });
    await page.mouse.up();
    await page.waitForURL(/start_time_gte/);
    const dragged = new URLSearchParams(new URL(page.url()).hash.split("?")[1]);
    const span = Date.parse(dragged.get("start_time_lt")!) - Date.parse(dragged.get("start_time_gte")!);
    expect(span).toBeGreaterThan(24 * HOUR); // a fifth of the week, give or take a bucket
    expect(span).toBeLessThan(48 * HOUR);
  });

  it("lists the three threads and shows one conversation turn by turn, each turn linked to its trace", async () => {
    await open(page, `#/threads?project=${PROJECT}`);
    const rows = page.locator("tr.thread-row");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(3);
    const markup = THREADS[1].id;
    const r = page.locator("tr.thread-row").nth(1);
    expect(await r.locator("td.thread-id").innerText()).toBe(markup);
    expect(await r.locator("td.turns").innerText()).toBe("5");
    expect(await r.locator("td.first-message").innerText()).toBe(week.threads[markup]!.questions[0]);
    await r.locator("td.thread-id a").click();
    await page.locator("li.turn").first().waitFor();
    expect(await page.locator("h1 .thread-id").innerText()).toBe(markup);
    expect(await page.locator("main b, main img").count()).toBe(0);
    expect(await page.locator("li.turn .user-text").allInnerTexts()).toEqual(week.threads[markup]!.questions);
    expect(await page.locator("li.turn .assistant-text").allInnerTexts()).toEqual([1, 2, 3, 4, 5].map((n) => `Reply ${n} to ${markup}`));
    const links = await page.locator("li.turn a.turn-trace").evaluateAll((as) => as.map((a) => (a as unknown as El).hash));
    expect(links).toEqual(week.threads[markup]!.traces.map((t) => `#/trace/${t}`));
    await page.screenshot({ path: screenshotPath("thread.png"), fullPage: true });
  });

  it("narrows the trace list by a metadata filter typed into the form, kept in the URL", async () => {
    await open(page, `#/?project=${PROJECT}`);
    await page.locator("tr.trace-row").first().waitFor();
    await page.locator("input.metadata-filter").first().fill("experiment=e7");
    await page.locator("#filters button[type=submit]").click();
    await page.waitForURL(/metadata=experiment%3De7/);
    await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll("tr.trace-row").length === n, week.experiment.length);
    const ids = await page.locator("tr.trace-row").evaluateAll((rs) => rs.map((r) => (r as unknown as El).dataset.traceId));
    expect(ids.sort()).toEqual([...week.experiment].sort());
    // A shared URL gives the same list; markup in a filter is a value, not markup.
    await open(page, `#/?project=${PROJECT}&metadata=${encodeURIComponent(`${MARKUP_KEY}=${MARKUP}`)}`);
    await page.locator("tr.trace-row").first().waitFor();
    expect(await page.locator("tr.trace-row").evaluateAll((rs) => rs.map((r) => (r as unknown as El).dataset.traceId))).toEqual([
      week.markupTrace,
    ]);
    expect(await page.locator("input.metadata-filter").first().inputValue()).toBe(`${MARKUP_KEY}=${MARKUP}`);
    await page.locator("tr.trace-row td.name a").first().click();
    await page.locator("#run-detail pre.json").first().waitFor();
    const metadata = page.locator("#run-detail h3", { hasText: "Metadata" }).locator("xpath=following-sibling::pre[1]");
    expect(await metadata.innerText()).toContain(`"${MARKUP_KEY}": "${MARKUP}"`);
  });

  it("shows feedback on its run, on the trace tree and as a list column and filter, comments as text", async () => {
    const [a] = week.llmRuns;
    await open(page, `#/?project=${PROJECT}&feedback_key=correctness`);
    await page.locator("tr.trace-row").first().waitFor();
    expect(await page.locator("tr.trace-row").count()).toBe(2);
    expect(await page.locator(`tr.trace-row[data-trace-id="${a!.trace}"] td.feedback .fb-chip`).allInnerTexts()).toEqual([
      "correctness 1",
      "tone",
    ]);
    await open(page, `#/trace/${a!.trace}/${a!.id}`);
    const fb = page.locator("table.feedback tr.feedback-row");
    await fb.first().waitFor();
    expect(await fb.count()).toBe(2);
    expect(await fb.nth(0).locator("td.fb-key").innerText()).toBe("correctness");
    expect(await fb.nth(0).locator("td.fb-score").innerText()).toBe("1");
    expect(await fb.nth(0).locator("td.fb-comment").innerText()).toBe(MARKUP);
    expect(await fb.nth(1).locator("td.fb-value").innerText()).toBe("friendly");
    expect(await fb.nth(1).locator("td.fb-source").innerText()).toBe("api");
    expect(await page.locator(`.tree .node[data-run-id="${a!.id}"] .fb-chip`).allInnerTexts()).toEqual(["correctness 1", "tone"]);
    expect(await page.locator("table.feedback img").count()).toBe(0);
    await page.screenshot({ path: screenshotPath("run-feedback.png"), fullPage: true });
  });

  it("ran no script from any run, thread id, metadata or feedback", async () => {
    expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
    expect(dialogs).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
