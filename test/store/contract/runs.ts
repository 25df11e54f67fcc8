/** The runs part of the store contract: the one ingest operation (merge rules, refusals, large fields) and run reads. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../src/errors.js";
import { normalize } from "../../../src/normalize.js";
import { deriveLlm } from "../../../src/store/derive.js";
import { BatchCheck, CursorError } from "../../../src/store/index.js";
import type { Issue } from "../../../src/errors.js";
import { childRun, eachStore, newId, NOTHING_DERIVED, rootRun, type OpenStore, type Rec } from "./fixtures.js";

/** A run without what places it (its id and where it sits), to compare runs merged in different orders. */
function content(run: unknown): unknown {
  const { id: _id, trace_id: _t, dotted_order: _d, ...rest } = run as Rec;
  return rest;
}

export function runsContract(open: OpenStore): void {
  describe("runs: ingest and reads", () => {
    const store = eachStore(open);

    it("stores a post and reads back exactly what was sent, with times in one canonical form", async () => {
      const run = rootRun({
        start_time: "2026-11-22T11:15:00.5+01:00",
        tags: ["a", "b"],
        extra: { metadata: { k: 1 } },
        reference_example_id: null,
        custom_field: { x: [1, "y"] },
      });
      expect(await store().ingest({ post: [run] })).toEqual({ created: 1, updated: 0, attachments: 0, completedRoots: [] });
      expect(await store().getRun(run.id)).toEqual({ ...run, start_time: "2026-11-22T10:15:00.500000Z", ...NOTHING_DERIVED });
      expect(await store().getRun(newId())).toBeUndefined();
    });

    it("is idempotent by id: the same run posted twice is one run, and the second post fills only what is still empty", async () => {
      const run = rootRun({ name: "first" });
      await store().ingest({ post: [run] });
      expect(await store().ingest({ post: [{ ...run, name: "second", outputs: { answer: 42 } }] })).toEqual({
        created: 0,
        updated: 1,
        attachments: 0,
        completedRoots: [],
      });
      expect(await store().countRuns()).toBe(1);
      expect(await store().getRun(run.id)).toEqual({ ...run, name: "first", outputs: { answer: 42 }, ...NOTHING_DERIVED });
    });

    it("makes one complete run of a post and its patch in either order, in one batch or two", async () => {
      const end = { end_time: "2026-11-22T10:15:01.000000Z", outputs: { answer: 42 } };
      const [a, b, c] = [rootRun(), rootRun(), rootRun()];
      await store().ingest({ post: [a] });
      await store().ingest({ patch: [{ id: a.id, ...end }] });
      expect(await store().ingest({ patch: [{ id: b.id, ...end }] })).toMatchObject({ created: 1, updated: 0 });
      // The post says the ended run is a root: it completes now, not with the patch that could not tell.
      expect(await store().ingest({ post: [b] })).toEqual({ created: 0, updated: 1, attachments: 0, completedRoots: [b.id] });
      await store().ingest({ post: [c], patch: [{ id: c.id, ...end }] });
      const expected = { ...(content(a) as object), ...end, ...NOTHING_DERIVED };
      for (const r of [a, b, c]) expect(content(await store().getRun(r.id)), r.id).toEqual(expected);
      expect(await store().countRuns()).toBe(3);
    });

    it("lets the newest update win: a later patch replaces what an earlier one set, a null leaves it, a late post undoes nothing", async () => {
      const run = rootRun();
      await store().ingest({ post: [run] });
      await store().ingest({ patch: [{ id: run.id, outputs: { v: 1 }, error: "first failure" }] });
      await store().ingest({ patch: [{ id: run.id, outputs: { v: 2 }, error: null }] });
      await store().ingest({ post: [{ ...run, outputs: { v: 0 }, error: "never" }] });
      const got = await store().getRun(run.id);
      expect([got?.outputs, got?.error]).toEqual([{ v: 2 }, "first failure"]);
    });

    it("names the root runs a batch completes, and only those", async () => {
      const root = rootRun();
      const child = childRun(root, { end_time: "2026-11-22T10:15:00.500000Z" });
      expect((await store().ingest({ post: [root, child] })).completedRoots).toEqual([]);
      expect((await store().ingest({ patch: [{ id: child.id, outputs: { done: true } }] })).completedRoots).toEqual([]);
      expect((await store().ingest({ patch: [{ id: root.id, end_time: "2026-11-22T10:15:01.000000Z" }] })).completedRoots).toEqual([
        root.id,
      ]);
    });

    it("refuses a batch with any invalid record, naming each problem as {loc, msg, type}, and stores none of it", async () => {
      const good = rootRun();
      const bad = { ...rootRun(), id: "not-a-uuid", name: 5 };
      const batch = {
        post: [bad, good],
        patch: [{ end_time: "2026-11-22T10:15:01Z" }],
        attachments: [{ runId: "zz", name: "f.txt", data: Buffer.from("a"), sha256: "0" }],
      };
      const err = await store()
        .ingest(batch)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).issues).toEqual([
        { loc: ["post", 0, "id"], msg: "Invalid UUID", type: "invalid_format" },
        { loc: ["post", 0, "name"], msg: "Invalid input: expected string, received number", type: "invalid_type" },
        { loc: ["patch", 0, "id"], msg: "Invalid input: expected string, received undefined", type: "invalid_type" },
        { loc: ["attachment", "zz", "f.txt"], msg: 'attachment for run id "zz", which is not a UUID', type: "uuid" },
      ]);
      // Where the caller says each record sits in its request.
      const located = await store()
        .ingest({ post: [bad], locate: (kind, i) => [`${kind}.${i}`, "body"] })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect((located as ValidationError).issues.map((i) => i.loc)).toEqual([
        ["post.0", "body", "id"],
        ["post.0", "body", "name"],
      ]);
      expect(await store().countRuns()).toBe(0);
      expect(await store().getRun(good.id)).toBeUndefined();
    });

    it("stores a batch that BatchCheck passed as is, and the same records as received alike", async () => {
      const issues: Issue[] = [];
      const check = new BatchCheck(issues);
      const [a, b] = [rootRun({ name: "checked" }), rootRun({ name: "as received" })];
      expect(await check.post(a, ["post", 0])).toBe(true);
      expect(await check.patch({ id: a.id, end_time: "2026-11-22T10:15:01Z" }, ["patch", 0])).toBe(true);
      expect(issues).toEqual([]);
      expect(await store().ingest(check.batch())).toEqual({ created: 1, updated: 0, attachments: 0, completedRoots: [a.id] });
      await store().ingest({ post: [b], patch: [{ id: b.id, end_time: "2026-11-22T10:15:01Z" }] });
      expect(content(await store().getRun(a.id))).toEqual({
        ...(content(b) as object),
        name: "checked",
        end_time: "2026-11-22T10:15:01.000000Z",
        ...NOTHING_DERIVED,
      });
      expect(content(await store().getRun(b.id))).toEqual({
        ...(content(b) as object),
        end_time: "2026-11-22T10:15:01.000000Z",
        ...NOTHING_DERIVED,
      });
    });

    it("keeps large fields exact through ingest, patches and queries, multibyte characters and all", async () => {
      // Past 1 MiB: where a store keeps big values apart, this crosses that line.
      const big = "é€😀 the quick brown fox ".repeat(60_000);
      const run = rootRun({ inputs: { text: big, n: 1 } });
      await store().ingest({ post: [run] });
      await store().ingest({ patch: [{ id: run.id, end_time: "2026-11-22T10:15:01.000000Z" }] });
      expect((await store().getRun(run.id))?.inputs).toEqual({ text: big, n: 1 });
      await store().ingest({ patch: [{ id: run.id, outputs: { text: big.toUpperCase() } }] });
      await store().ingest({ patch: [{ id: run.id, inputs: { small: true } }] });
      const { runs } = await store().queryRuns({ trace_id: run.id });
      expect(runs.map((r) => [r.inputs, r.outputs, r.end_time])).toEqual([
        [{ small: true }, { text: big.toUpperCase() }, "2026-11-22T10:15:01.000000Z"],
      ]);
    });

    it("derives native messages of a vendor llm payload, however large, as the store's derivation makes them", async () => {
      const request = {
        model: "gpt-4o",
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "word ".repeat(300_000) },
        ],
      };
      const response = {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: "gpt-4o-2024-08-06",
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      };
      const small = rootRun({ run_type: "llm", inputs: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] } });
      const large = rootRun({ run_type: "llm", inputs: request, outputs: response });
      await store().ingest({ post: [small, large] });
      const want = deriveLlm(request, response);
      const got = await store().getRun(large.id);
      expect([got?.detected_format, got?.normalize_error]).toEqual(["openai-chat", null]);
      expect(got?.normalized_inputs).toEqual(normalize({ request }).inputs);
      expect(got?.normalized_outputs).toEqual(JSON.parse(JSON.stringify(want.normalized_outputs)));
      // The reply's cost is added from the price table, as the run builder adds it to tracepipe's own runs.
      expect(
        (got?.normalized_outputs?.messages[0] as { usage_metadata?: { total_cost?: unknown } }).usage_metadata?.total_cost,
      ).toBeGreaterThan(0);
      const s = await store().getRun(small.id);
      expect([s?.detected_format, s?.normalized_inputs, s?.normalized_outputs]).toEqual([
        "openai-chat",
        normalize({ request: small.inputs }).inputs,
        null,
      ]);
    });

    it("pages runs by (start_time, id) with a cursor, filtered by project, trace, run type and time", async () => {
      const times = ["10:00:03", "10:00:01", "10:00:02", "10:00:01", "10:00:05"].map((t) => `2026-11-22T${t}.000000Z`);
      const runs = times.map((t, i) => rootRun({ start_time: t, session_name: "paged", run_type: i % 2 ? "llm" : "chain", inputs: {} }));
      await store().ingest({ post: [...runs, rootRun({ session_name: "elsewhere" })] });
      const order = [...runs]
        .sort((x, y) => (x.start_time as string).localeCompare(y.start_time as string) || x.id.localeCompare(y.id))
        .map((r) => r.id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await store().queryRuns({ project: "paged", limit: 2, cursor });
        seen.push(...page.runs.map((r) => r.id));
        cursor = page.cursor;
        pages++;
      } while (cursor);
      expect([seen, pages]).toEqual([order, 3]);
      expect((await store().queryRuns({ project: "paged", run_type: "llm" })).runs.map((r) => r.id)).toEqual(
        [runs[3]!.id, runs[1]!.id].sort(),
      );
      expect(
        (
          await store().queryRuns({ project: "paged", start_time_gte: "2026-11-22T10:00:02Z", start_time_lt: "2026-11-22T11:00:04+01:00" })
        ).runs.map((r) => r.id),
      ).toEqual([runs[2]!.id, runs[0]!.id]);
      expect((await store().queryRuns({ trace_id: runs[4]!.id })).runs.map((r) => r.id)).toEqual([runs[4]!.id]);
      expect([
        await store().countRuns("paged"),
        await store().countRuns("elsewhere"),
        await store().countRuns("nowhere"),
        await store().countRuns(),
      ]).toEqual([5, 1, 0, 6]);
      await expect(store().queryRuns({ cursor: "not a cursor" })).rejects.toBeInstanceOf(CursorError);
    });

    it("pages runs without a start time (a patch before its post) first, each once", async () => {
      const posted = [1, 2].map((k) => rootRun({ session_name: "unstarted", start_time: `2026-11-22T10:00:0${k}.000000Z` }));
      const patched = [0, 1, 2].map(() => {
        const id = rootRun().id;
        return { id, trace_id: id, session_name: "unstarted", end_time: "2026-11-22T10:00:05.000000Z", outputs: { done: true } };
      });
      await store().ingest({ post: posted, patch: patched });
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 10; pages++) {
        const page = await store().queryRuns({ project: "unstarted", limit: 1, cursor });
        seen.push(...page.runs.map((r) => r.id));
        cursor = page.cursor;
        if (!cursor) break;
      }
      expect(seen).toEqual([...patched.map((r) => r.id).sort(), posted[0]!.id, posted[1]!.id]);
    });

    it("pages a project's roots and their child runs as one sequence by (start_time, id), and counts both", async () => {
      const a = rootRun({ session_name: "mixed", start_time: "2026-11-22T10:00:00.000000Z" });
      const b = rootRun({ session_name: "mixed", start_time: "2026-11-22T10:00:03.000000Z" });
      const runs = [
        a,
        b,
        childRun(a, { start_time: "2026-11-22T10:00:01.000000Z" }),
        childRun(a, { start_time: "2026-11-22T10:00:04.000000Z" }),
        childRun(b, { start_time: "2026-11-22T10:00:03.000000Z" }),
        childRun(b, { start_time: "2026-11-22T10:00:02.000000Z", run_type: "llm" }),
      ];
      await store().ingest({ post: runs });
      const order = [...runs]
        .sort((x, y) => (x.start_time as string).localeCompare(y.start_time as string) || x.id.localeCompare(y.id))
        .map((r) => r.id);
      for (const q of [{ project: "mixed" }, {}]) {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page = await store().queryRuns({ ...q, limit: 2, cursor });
          seen.push(...page.runs.map((r) => r.id));
          cursor = page.cursor;
        } while (cursor);
        expect(seen).toEqual(order);
      }
      expect(
        (await store().queryRuns({ start_time_gte: "2026-11-22T10:00:02Z", start_time_lt: "2026-11-22T10:00:04Z" })).runs.map((r) => r.id),
      ).toEqual(order.slice(2, 5));
      expect((await store().queryRuns({ trace_id: b.id })).runs.map((r) => r.id)).toEqual(
        order.filter((id) => runs.find((r) => r.id === id)!.trace_id === b.id),
      );
      expect([await store().countRuns("mixed"), await store().countRuns()]).toEqual([6, 6]);
    });

    it("merges posts and patches of the same runs sent at once into one complete run each", async () => {
      const runs = Array.from({ length: 20 }, (_, i) => rootRun({ name: `run ${i}`, session_name: "at-once" }));
      const ops = runs.flatMap((r, i) => [
        { post: [r] },
        { patch: [{ id: r.id, end_time: "2026-11-22T10:15:01.000000Z", outputs: { i } }] },
      ]);
      // A fixed shuffle: patches before posts for some runs, after for others.
      ops.reverse();
      for (let i = 0; i < ops.length; i += 3) [ops[i], ops[ops.length - 1 - i]] = [ops[ops.length - 1 - i]!, ops[i]!];
      await Promise.all(ops.map((b) => store().ingest(b)));
      expect(await store().countRuns("at-once")).toBe(20);
      for (const [i, r] of runs.entries()) {
        const got = await store().getRun(r.id);
        expect([got?.name, got?.outputs, got?.end_time]).toEqual([`run ${i}`, { i }, "2026-11-22T10:15:01.000000Z"]);
      }
    });
  });
}
