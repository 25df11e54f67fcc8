/**
 * Stopping `tracepipe serve` (SIGTERM, as an orchestrator does in a rolling restart) answers
 * the requests under way before the process exits, instead of resetting their connections;
 * a request that does not finish within `--drain-timeout` is cut, so the stop stays bounded.
 */
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { multipart, runRecord, startServeProcess } from "../helpers/collector.js";

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A multipart upload sent in two halves: the first now, the second when `finish` is called. */
async function upload(url: string, run: Record<string, unknown>) {
  const encoded = new Request("http://encoder", { method: "POST", body: multipart({ post: [run] }) });
  const body = Buffer.from(await encoded.arrayBuffer());
  let finish!: () => void;
  const answer = new Promise<number>((resolve, reject) => {
    const req = request(
      `${url}/runs/multipart`,
      { method: "POST", headers: { "content-type": encoded.headers.get("content-type")!, "content-length": body.length } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.write(body.subarray(0, body.length >> 1));
    finish = () => req.end(body.subarray(body.length >> 1));
  });
  return { answer, finish: () => finish() };
}

describe("serve, stopped with requests under way", () => {
  it("answers an upload caught mid-body and stores its run, then exits", async () => {
    const s = await startServeProcess(["--no-rate-limit"]);
    const run = runRecord({ session_name: "drain" });
    const up = await upload(s.url, run);
    await pause(300); // the collector has the headers and half the body
    const stopped = s.close(); // SIGTERM
    await pause(300);
    up.finish();
    expect(await up.answer).toBe(202);
    await stopped;
    expect(s.count("drain")).toEqual({ n: 1, d: 1 });
  });

  it("cuts an upload that does not finish within --drain-timeout, and exits", async () => {
    const s = await startServeProcess(["--no-rate-limit", "--drain-timeout", "300"]);
    const up = await upload(s.url, runRecord({ session_name: "drain" }));
    up.answer.catch(() => undefined);
    await pause(300);
    const started = Date.now();
    await s.close();
    await expect(up.answer).rejects.toThrow();
    // Bounded by the drain timeout, far below the 120 s request timeout that would otherwise hold it.
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(s.count("drain")).toEqual({ n: 0, d: 0 });
  });
});
