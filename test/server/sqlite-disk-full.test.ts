/**
 * The collector over SQLite when the disk fills up: the store lives on a
 * small tmpfs that a real tracepipe Client fills while it sends runs. The
 * collector answers 503 with Retry-After naming the full disk (never a 500),
 * /info says the store cannot write, and once the file system has room again
 * every run the Client was given is stored exactly once, complete, with the
 * monitoring rollups counting each once: a transaction refused for want of
 * space left nothing of itself behind.
 *
 * Mounting a tmpfs needs root with CAP_SYS_ADMIN; elsewhere the file skips
 * with a notice (a privilege, not a program CI could install).
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../../src/ingest/client.js";
import { createCollector, type Collector } from "../../src/server/app.js";
import { tempDir } from "../helpers/runs.js";
import { expectEveryRunOnce } from "../helpers/outage.js";

const mountPoint = mkdtempSync(join(tmpdir(), "tp-tinyfs-"));
function mount(sizeKib: number, remount = false): boolean {
  try {
    const opts = `${remount ? "remount," : ""}size=${sizeKib}k`;
    execFileSync("mount", ["-t", "tmpfs", "-o", opts, "tmpfs", mountPoint], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const mounted = process.platform === "linux" && mount(1536);
if (!mounted) console.warn("NOTICE: skipping the disk-full tests: mounting a small tmpfs needs root with CAP_SYS_ADMIN");

describe.skipIf(!mounted)("collector over SQLite: a full disk", () => {
  let collector: Collector;
  let url: string;
  beforeAll(async () => {
    collector = await createCollector({ db: join(mountPoint, "traces.db"), rateLimits: false });
    url = (await collector.listen(0, "127.0.0.1")).url;
  });
  afterAll(async () => {
    await collector?.close();
    await collector?.store.close();
    try {
      execFileSync("umount", [mountPoint], { stdio: "ignore" });
    } catch {
      // Left mounted only if something still holds it; the tmpfs goes with the machine.
    }
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it("answers 503 with Retry-After while the disk is full, and stores every run the Client sent exactly once when it has room", async () => {
    const dir = tempDir("tp-disk-full-");
    const client = new Client({
      endpoint: url,
      project: "full",
      spoolDir: join(dir, "spool"),
      deadLetterPath: join(dir, "dead.jsonl"),
      batchSize: 10,
      flushIntervalMs: 20,
      backoff: { baseMs: 50, maxMs: 500 },
      maxAttempts: 1000,
      exitHooks: false,
      warn: () => {},
    });
    const ids: string[] = [];
    const send = (n: number) => {
      for (let i = 0; i < n; i++) {
        const id = randomUUID();
        ids.push(id);
        const start = new Date(Date.UTC(2026, 10, 28, 10, 0, 0, ids.length)).toISOString();
        client.createRun({
          id,
          trace_id: id,
          dotted_order: `${start.replace(/[-:.]/g, "").replace("Z", "000Z")}${id}`,
          name: `run ${ids.length}`,
          run_type: "chain",
          start_time: start,
          // Incompressible enough that ~60 of them fill the file system.
          inputs: { n: ids.length, text: randomUUID().repeat(600) },
        });
        client.updateRun(id, { end_time: new Date(Date.parse(start) + 1500).toISOString(), outputs: { done: true } });
      }
    };

    // Fill the disk: keep handing runs over until the collector says it cannot write.
    let refusal: Response | undefined;
    for (let round = 0; round < 40 && !refusal; round++) {
      send(10);
      await client.flush({ timeoutMs: 2_000 });
      const probe = await fetch(`${url}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          id: randomUUID(),
          trace_id: randomUUID(),
          dotted_order: "20261128T000000000000Z",
          name: "probe",
          run_type: "chain",
          start_time: "2026-11-27T00:00:00Z",
          session_name: "probe",
          inputs: { text: randomUUID().repeat(600) },
        }),
      });
      if (probe.status === 503) refusal = probe;
      else expect([200, 201, 202]).toContain(probe.status);
    }
    expect(refusal, "the tmpfs never filled up").toBeDefined();
    expect(Number(refusal!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await refusal!.json()) as { detail: string }).detail).toMatch(
      /cannot be written now: database or disk is full \(SQLITE_FULL\)/,
    );
    const info = (await (await fetch(`${url}/info`)).json()) as { store: { ok: boolean; error?: string } };
    expect(info.store).toMatchObject({ ok: false, error: expect.stringMatching(/disk is full/) });
    // Reads still answer while writes cannot.
    expect((await fetch(`${url}/api/viewer/traces?project=full`)).status).toBe(200);

    // More runs while the disk is full: the Client holds them.
    send(20);
    await new Promise((r) => setTimeout(r, 300));
    expect(mount(64 * 1024, true)).toBe(true);
    send(10);
    const result = await client.flush({ timeoutMs: 60_000 });
    expect(result).toMatchObject({ ok: true, dropped: 0, deadLettered: 0 });
    await client.shutdown({ timeoutMs: 10_000 });

    await expectEveryRunOnce(url, collector.store, "full", ids);
    const series = await collector.store.monitorSeries({
      project: "full",
      from_ms: Date.UTC(2026, 10, 28, 10),
      to_ms: Date.UTC(2026, 10, 28, 11),
      step_ms: 3_600_000,
    });
    expect(series.traces.runs).toEqual([ids.length]);
  }, 120_000);
});
