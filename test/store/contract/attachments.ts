/** Attachments: stored with their runs in one ingest, read back as the exact bytes. */
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { AttachmentInput } from "../../../src/store/index.js";
import { eachStore, rootRun, type OpenStore } from "./fixtures.js";

function attachment(runId: string, name: string, data: Buffer, contentType?: string): AttachmentInput {
  return { runId, name, data, contentType, sha256: createHash("sha256").update(data).digest("hex") };
}

export function attachmentsContract(open: OpenStore): void {
  describe("attachments", () => {
    const store = eachStore(open);

    it("are stored with their run and read back byte for byte, listed by name", async () => {
      const run = rootRun();
      const every = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
      const large = randomBytes(3 * 1024 * 1024);
      const files = [attachment(run.id, "z-every-byte.bin", every, "application/octet-stream"), attachment(run.id, "a-large.bin", large)];
      expect(await store().ingest({ post: [run], attachments: files })).toEqual({
        created: 1,
        updated: 0,
        attachments: 2,
        completedRoots: [],
      });
      expect(await store().listAttachments(run.id)).toEqual([
        { name: "a-large.bin", content_type: null, size: large.length, sha256: files[1]!.sha256 },
        { name: "z-every-byte.bin", content_type: "application/octet-stream", size: 512, sha256: files[0]!.sha256 },
      ]);
      const got = await store().getAttachment(run.id, "z-every-byte.bin");
      expect(got && Buffer.compare(got.data, every)).toBe(0);
      expect(got && { ...got, data: undefined }).toEqual({
        name: "z-every-byte.bin",
        content_type: "application/octet-stream",
        size: 512,
        sha256: files[0]!.sha256,
        data: undefined,
      });
      expect(Buffer.compare((await store().getAttachment(run.id, "a-large.bin"))!.data, large)).toBe(0);
    });

    it("replace an attachment of the same name, and know nothing of names never sent", async () => {
      const run = rootRun();
      await store().ingest({ post: [run], attachments: [attachment(run.id, "f.txt", Buffer.from("first"), "text/plain")] });
      await store().ingest({ attachments: [attachment(run.id, "f.txt", Buffer.from("second!"), "text/plain")] });
      expect((await store().listAttachments(run.id)).map((a) => [a.name, a.size])).toEqual([["f.txt", 7]]);
      expect((await store().getAttachment(run.id, "f.txt"))?.data.toString()).toBe("second!");
      expect(await store().getAttachment(run.id, "g.txt")).toBeUndefined();
      expect(await store().listAttachments("0192b3c4-d5e6-7f00-8000-ffffffffffff")).toEqual([]);
    });

    it("are stored with their run when the name or content type has U+0000 in it, and found by the name sent", async () => {
      // The embedded sink names an attachment as the host's code did; PostgreSQL text cannot hold U+0000.
      const run = rootRun();
      const name = "a\u0000b.txt";
      await store().ingest({ post: [run], attachments: [attachment(run.id, name, Buffer.from("bytes"), "text/x\u0000y")] });
      expect(await store().countRuns()).toBe(1);
      expect((await store().getAttachment(run.id, name))?.data.toString()).toBe("bytes");
      expect(await store().listAttachments(run.id)).toHaveLength(1);
    });
  });
}
