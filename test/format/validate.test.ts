import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { validate } from "../../src/format/validate.js";
import { nativeMessagesJsonSchema } from "../../src/format/json-schema.js";

const call = { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "f", args: {} }] };

describe("validate", () => {
  it("accepts a well-formed conversation", () => {
    expect(
      validate([
        { role: "system", content: [{ type: "text", text: "s" }] },
        call,
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "r" }] },
      ]),
    ).toEqual([]);
  });

  it("rejects tool_call_id on a role other than tool", () => {
    expect(validate([call, { role: "user", tool_call_id: "c1", content: [] }])).toEqual([
      { loc: [1, "tool_call_id"], msg: expect.stringContaining('only valid on role "tool"'), type: "tool_call_id_role" },
    ]);
  });

  it("rejects a tool_call_id that names no earlier tool call", () => {
    expect(validate([{ role: "tool", tool_call_id: "c1", content: [] }, call])).toEqual([
      { loc: [0, "tool_call_id"], msg: expect.stringContaining('"c1"'), type: "unknown_tool_call_id" },
    ]);
  });

  it("rejects a server_tool_result status outside success|error", () => {
    const issues = validate([{ role: "assistant", content: [{ type: "server_tool_result", tool_call_id: "s", status: "pending" }] }]);
    expect(issues).toEqual([{ loc: [0, "content", 0, "status"], msg: expect.any(String), type: "invalid_value" }]);
  });

  it.each([
    ["no source", { type: "image" }, "media_source"],
    ["two sources", { type: "image", url: "u", id: "i" }, "media_source"],
    ["base64 without mime_type", { type: "audio", base64: "AA" }, "missing"],
  ])("rejects a media block with %s", (_n, block, type) => {
    const issues = validate([{ role: "user", content: [block] }]);
    expect(issues.map((i) => i.type)).toContain(type);
    expect(issues[0]!.loc.slice(0, 3)).toEqual([0, "content", 0]);
  });

  it("requires base64 on media blocks only in strict mode", () => {
    const msgs = [{ role: "user", content: [{ type: "image", url: "https://x.test/a.png" }] }];
    expect(validate(msgs)).toEqual([]);
    expect(validate(msgs, { strict: true })).toEqual([
      { loc: [0, "content", 0, "base64"], msg: expect.stringContaining("SPEC"), type: "missing" },
    ]);
  });

  it("forbids extras only in strict mode, on messages, blocks and usage", () => {
    const msgs = [
      {
        role: "assistant",
        extras: { a: 1 },
        content: [{ type: "text", text: "t", extras: { b: 2 } }],
        usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2, extras: {} },
      },
    ];
    expect(validate(msgs)).toEqual([]);
    expect(validate(msgs, { strict: true }).map((i) => i.loc)).toEqual([
      [0, "extras"],
      [0, "usage_metadata", "extras"],
      [0, "content", 0, "extras"],
    ]);
  });

  it("reports every problem at once, each with its location", () => {
    const issues = validate([{ role: "robot", content: [{ type: "text" }, { type: "video" }], foo: 1 }]);
    const locs = issues.map((i) => JSON.stringify(i.loc));
    expect(locs).toEqual(expect.arrayContaining(['[0,"role"]', '[0,"content",0,"text"]', '[0,"foo"]', '[0,"content",1]']));
  });

  it("rejects a non-array", () => {
    expect(validate({ role: "user" })).toEqual([{ loc: [], msg: expect.any(String), type: "invalid_type" }]);
  });

  it("rejects a negative token count in usage_metadata", () => {
    const issues = validate([{ role: "assistant", content: [], usage_metadata: { input_tokens: -1, output_tokens: 0, total_tokens: 0 } }]);
    expect(issues[0]!.loc).toEqual([0, "usage_metadata", "input_tokens"]);
  });
});

describe("JSON Schema export", () => {
  it("keeps schema/native-messages.schema.json in step with the zod schemas (run `npm run schema`)", () => {
    const onDisk = JSON.parse(readFileSync(new URL("../../schema/native-messages.schema.json", import.meta.url), "utf8"));
    expect(onDisk).toEqual(nativeMessagesJsonSchema());
  });

  it("describes every role and block type", () => {
    const text = JSON.stringify(nativeMessagesJsonSchema());
    for (const t of ["text", "reasoning", "image", "file", "audio", "video", "tool_call", "server_tool_call", "server_tool_result"])
      expect(text).toContain(`"const":"${t}"`);
    for (const r of ["system", "reasoning", "user", "assistant", "tool"]) expect(text).toContain(`"${r}"`);
  });
});
