/** Projects: made by the runs stored in them or by name, listed newest first, deleted with everything of theirs. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { eachStore, rootRun, sleep, type OpenStore } from "./fixtures.js";

export function projectsContract(open: OpenStore): void {
  describe("projects", () => {
    const store = eachStore(open);

    it("exist once a run names them or once ensured, and list newest first", async () => {
      await store().ingest({ post: [rootRun({ session_name: "from-a-run" })] });
      await sleep(5);
      await store().ensureProject("empty");
      await sleep(5);
      await store().ensureProject("from-a-run"); // already there: keeps its creation time
      expect([
        await store().projectExists("from-a-run"),
        await store().projectExists("empty"),
        await store().projectExists("never"),
      ]).toEqual([true, true, false]);
      const projects = await store().listProjects();
      expect(projects.map((p) => p.name)).toEqual(["empty", "from-a-run"]);
      expect(projects.every((p) => !Number.isNaN(Date.parse(p.created_at)))).toBe(true);
    });

    it("are deleted with their runs and the runs' attachments, leaving other projects alone", async () => {
      const doomed = [
        rootRun({ session_name: "doomed" }),
        rootRun({ session_name: "doomed" }),
        rootRun({ session_name: "doomed", inputs: { text: "x".repeat(2_000_000) } }),
      ];
      const kept = rootRun({ session_name: "kept" });
      const data = Buffer.from("attached");
      const sha256 = createHash("sha256").update(data).digest("hex");
      await store().ingest({
        post: [...doomed, kept],
        attachments: [
          { runId: doomed[0]!.id, name: "a.txt", data, sha256 },
          { runId: kept.id, name: "a.txt", data, sha256 },
        ],
      });
      expect(await store().deleteProject("doomed")).toBe(3);
      expect([
        await store().countRuns("doomed"),
        await store().countRuns("kept"),
        await store().projectExists("doomed"),
        await store().projectExists("kept"),
      ]).toEqual([0, 1, false, true]);
      expect(await store().getRun(doomed[2]!.id)).toBeUndefined();
      expect(await store().listAttachments(doomed[0]!.id)).toEqual([]);
      expect((await store().listAttachments(kept.id)).map((a) => a.name)).toEqual(["a.txt"]);
      expect(await store().deleteProject("never")).toBe(0);
    });
  });
}
