import busboy from "busboy";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { encodeMultipart, INLINE_MAX } from "../../src/ingest/multipart.js";
import { postOp } from "../../src/ingest/ops.js";

/** The JSON fields busboy reads back from an encoded body, by part name. */
async function readBack(ops: Parameters<typeof encodeMultipart>[0]): Promise<Map<string, string>> {
  const { body, contentType } = encodeMultipart(ops);
  const fields = new Map<string, string>();
  await new Promise<void>((resolve, reject) => {
    const bb = busboy({ headers: { "content-type": contentType }, defParamCharset: "utf8" });
    bb.on("field", (name, value) => fields.set(name, value));
    bb.on("close", resolve);
    bb.on("error", reject);
    Readable.from([body]).pipe(bb);
  });
  return fields;
}

const id = (n: number) => `0190a000-0000-7000-8000-${String(n).padStart(12, "0")}`;

describe("multipart bytes", () => {
  it.each([
    ["ASCII only", "plain text"],
    ["accents and symbols", "héllo ✓ naïve café"],
    ["astral characters", "emoji 😀 and 𝄞"],
    ["a lone surrogate", "broken \ud800 half"],
  ])("carries %s exactly, with Content-Lengths in bytes", async (_what, text) => {
    // One run with the text in a part of its own (past INLINE_MAX), one with it inside the run's part.
    const long = { text, pad: "p".repeat(INLINE_MAX) };
    const ops = [postOp({ id: id(1), name: "r", inputs: long }), postOp({ id: id(2), name: "plain", inputs: { text } })];
    const fields = await readBack(ops);
    // What JSON.stringify makes of the text is what arrives (a lone surrogate is written as an escape).
    expect(fields.get(`post.${id(1)}.inputs`)).toBe(JSON.stringify(long));
    expect(JSON.parse(fields.get(`post.${id(1)}.inputs`)!)).toEqual(long);
    expect(fields.get(`post.${id(2)}`)).toContain(`"inputs":${JSON.stringify({ text })}`);
    expect(JSON.parse(fields.get(`post.${id(2)}`)!).inputs).toEqual({ text });
    const { body } = encodeMultipart(ops);
    for (const m of body.toString("latin1").matchAll(/Content-Length: (\d+)\r\n\r\n/g)) {
      const start = m.index + m[0].length;
      expect(body.subarray(start + Number(m[1]!), start + Number(m[1]!) + 4).toString("latin1")).toBe("\r\n--");
    }
  });

  it("writes a non-ASCII attachment name in UTF-8 even when every JSON part is ASCII", async () => {
    const { body, contentType } = encodeMultipart([
      postOp({ id: id(3), name: "r", inputs: {} }, { "bild-ü.png": ["image/png", new Uint8Array([1, 2])] }),
    ]);
    const files: { name: string; filename: string }[] = [];
    await new Promise<void>((resolve, reject) => {
      const bb = busboy({ headers: { "content-type": contentType }, defParamCharset: "utf8" });
      bb.on("file", (name, stream, info) => (files.push({ name, filename: info.filename ?? "" }), stream.resume()));
      bb.on("close", resolve);
      bb.on("error", reject);
      Readable.from([body]).pipe(bb);
    });
    expect(files).toEqual([{ name: `attachment.${id(3)}.bild-ü.png`, filename: "bild-ü.png" }]);
  });
});
