import { describe, expect, it } from "vitest";
import { Readable } from "node:stream";
import { parseMultipart } from "../../src/server/multipart.js";
import { IssueList } from "../../src/server/issues.js";
import { HttpError } from "../../src/server/http-error.js";

const BOUNDARY = "----tracepipe-test";
const headers = { "content-type": `multipart/form-data; boundary=${BOUNDARY}` };
const limits = { maxPartBytes: 64, maxParts: 100, maxRuns: 100 };
const id = "0192f5a0-0000-7000-8000-000000000001";

/** A body with one JSON part sent as a file (a filename, as FormData Blobs are), `text` its content. */
function body(text: string, end = true): Buffer {
  const head =
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="post.${id}.inputs"; filename="blob"\r\n` +
    `Content-Type: application/json\r\n\r\n`;
  return Buffer.from(head + text + (end ? `\r\n--${BOUNDARY}--\r\n` : ""));
}

const parse = (b: Buffer) => parseMultipart(Readable.from([b]), headers, limits, new IssueList(100, 10_000));

describe("a multipart file part past maxPartBytes", () => {
  it("is refused with 413 naming the part", async () => {
    const err = await parse(body(JSON.stringify({ text: "x".repeat(200) }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(413);
    expect((err as HttpError).message).toMatch(`part "post.${id}.inputs" exceeds 64 bytes`);
  });

  it("is refused with 413 when the body ends inside it", async () => {
    const err = await parse(body(JSON.stringify({ text: "x".repeat(200) }), false)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(413);
  });

  it("within the limit is read", async () => {
    const parsed = await parse(body(JSON.stringify({ a: 1 })));
    expect(parsed.post.get(id)).toEqual({ id, inputs: { a: 1 } });
  });
});
