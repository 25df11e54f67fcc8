import { describe, expect, it } from "vitest";
import {
  bedrockConverse,
  normalizeRequest,
  normalizeResponse,
  normalizeStream,
  createStreamAccumulator,
} from "../../adapters/bedrock-converse/index.js";
import { anthropicMessages } from "../../adapters/anthropic-messages/index.js";
import { openaiChat } from "../../adapters/openai-chat/index.js";
import { openaiResponses } from "../../adapters/openai-responses/index.js";
import { native } from "../../adapters/native/index.js";
import { normalize, detectFormat } from "../../src/normalize.js";
import { readVendorCall } from "../../src/run/llm.js";
import { NormalizeError } from "../../src/errors.js";
import { expectValidNative } from "../helpers/native.js";
import { fixture } from "../helpers/replay-server.js";

const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const req = (messages: unknown[], extra: Record<string, unknown> = {}) => ({ modelId: MODEL, messages, ...extra });
const user = (...content: unknown[]) => req([{ role: "user", content }]);
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
const PNG_B64 = Buffer.from(PNG).toString("base64");

describe("bedrock-converse request -> native, block by block", () => {
  const cases: [string, unknown, unknown][] = [
    ["text", user({ text: "hi" }), [{ role: "user", content: [{ type: "text", text: "hi" }] }]],
    [
      "image bytes as a Uint8Array (the SDK)",
      user({ image: { format: "png", source: { bytes: PNG } } }),
      [{ role: "user", content: [{ type: "image", base64: PNG_B64, mime_type: "image/png" }] }],
    ],
    [
      "image bytes as base64 text (the service's JSON)",
      user({ image: { format: "jpeg", source: { bytes: "/9j/4AAQ" } } }),
      [{ role: "user", content: [{ type: "image", base64: "/9j/4AAQ", mime_type: "image/jpeg" }] }],
    ],
    [
      "image bytes as JSON.stringify(Uint8Array)",
      user({ image: { format: "png", source: { bytes: { 0: 0x89, 1: 0x50, 2: 0x4e, 3: 0x47 } } } }),
      [{ role: "user", content: [{ type: "image", base64: PNG_B64, mime_type: "image/png" }] }],
    ],
    [
      "image bytes as a serialized Buffer",
      user({ image: { format: "webp", source: { bytes: { type: "Buffer", data: [0x89, 0x50, 0x4e, 0x47] } } } }),
      [{ role: "user", content: [{ type: "image", base64: PNG_B64, mime_type: "image/webp" }] }],
    ],
    [
      "image in S3 -> url, bucket owner kept",
      user({ image: { format: "gif", source: { s3Location: { uri: "s3://bucket/cat.gif", bucketOwner: "111122223333" } } } }),
      [
        {
          role: "user",
          content: [
            { type: "image", url: "s3://bucket/cat.gif", mime_type: "image/gif", extras: { s3Location: { bucketOwner: "111122223333" } } },
          ],
        },
      ],
    ],
    [
      "document bytes -> file, name and context kept",
      user({ document: { format: "pdf", name: "Spec", context: "the spec", source: { bytes: "JVBERi0=" } } }),
      [
        {
          role: "user",
          content: [{ type: "file", base64: "JVBERi0=", mime_type: "application/pdf", extras: { name: "Spec", context: "the spec" } }],
        },
      ],
    ],
    [
      "document text -> base64 of its text, source_type text",
      user({ document: { format: "md", name: "notes", source: { text: "# hi" } } }),
      [
        {
          role: "user",
          content: [
            {
              type: "file",
              base64: Buffer.from("# hi").toString("base64"),
              mime_type: "text/markdown",
              extras: { name: "notes", source_type: "text" },
            },
          ],
        },
      ],
    ],
    [
      "document content -> readable text blocks with the document in extras",
      user({ document: { name: "Doc", citations: { enabled: true }, source: { content: [{ text: "one" }, { text: "two" }] } } }),
      [
        {
          role: "user",
          content: [
            { type: "text", text: "one", extras: { document: { name: "Doc", citations: { enabled: true } }, document_part: 0 } },
            { type: "text", text: "two", extras: { document: { name: "Doc", citations: { enabled: true } }, document_part: 1 } },
          ],
        },
      ],
    ],
    [
      "document in S3",
      user({ document: { format: "docx", name: "d", source: { s3Location: { uri: "s3://b/d.docx" } } } }),
      [
        {
          role: "user",
          content: [
            {
              type: "file",
              url: "s3://b/d.docx",
              mime_type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
              extras: { name: "d" },
            },
          ],
        },
      ],
    ],
    [
      "video bytes",
      user({ video: { format: "mp4", source: { bytes: "AAAAIGZ0eXA=" } } }),
      [{ role: "user", content: [{ type: "video", base64: "AAAAIGZ0eXA=", mime_type: "video/mp4" }] }],
    ],
    [
      "video three_gp in S3",
      user({ video: { format: "three_gp", source: { s3Location: { uri: "s3://b/v.3gp" } } } }),
      [{ role: "user", content: [{ type: "video", url: "s3://b/v.3gp", mime_type: "video/3gpp" }] }],
    ],
    [
      "a format whose MIME type names another keeps it in extras",
      user({ video: { format: "mpg", source: { bytes: "AAAB" } } }),
      [{ role: "user", content: [{ type: "video", base64: "AAAB", mime_type: "video/mpeg", extras: { format: "mpg" } }] }],
    ],
    [
      "audio bytes",
      user({ audio: { format: "mp3", source: { bytes: "SUQz" } } }),
      [{ role: "user", content: [{ type: "audio", base64: "SUQz", mime_type: "audio/mpeg" }] }],
    ],
    [
      "media without a format: the bytes are sniffed",
      user({ image: { source: { bytes: "iVBORw0KGgoAAAA" } } }),
      [{ role: "user", content: [{ type: "image", base64: "iVBORw0KGgoAAAA", mime_type: "image/png" }] }],
    ],
    [
      "toolUse -> tool_call; toolResult -> a tool message; text after it -> a user message, in order",
      req([
        { role: "assistant", content: [{ toolUse: { toolUseId: "t1", name: "get", input: { q: 1 } } }] },
        { role: "user", content: [{ toolResult: { toolUseId: "t1", content: [{ text: "42" }], status: "success" } }, { text: "thanks" }] },
      ]),
      [
        { role: "assistant", content: [{ type: "tool_call", id: "t1", name: "get", args: { q: 1 } }] },
        { role: "tool", tool_call_id: "t1", content: [{ type: "text", text: "42" }] },
        { role: "user", content: [{ type: "text", text: "thanks" }] },
      ],
    ],
    [
      "toolResult status error -> extras.is_error; json, image and document results",
      req([
        { role: "assistant", content: [{ toolUse: { toolUseId: "t2", name: "shot", input: {} } }] },
        {
          role: "user",
          content: [
            {
              toolResult: {
                toolUseId: "t2",
                status: "error",
                content: [
                  { json: { err: "nope" } },
                  { image: { format: "png", source: { bytes: PNG } } },
                  { document: { format: "txt", name: "log", source: { text: "x" } } },
                ],
              },
            },
          ],
        },
      ]),
      [
        { role: "assistant", content: [{ type: "tool_call", id: "t2", name: "shot", args: {} }] },
        {
          role: "tool",
          tool_call_id: "t2",
          extras: { is_error: true },
          content: [
            { type: "text", text: '{"err":"nope"}', extras: { vendor_type: "json" } },
            { type: "image", base64: PNG_B64, mime_type: "image/png" },
            { type: "file", base64: "eA==", mime_type: "text/plain", extras: { name: "log", source_type: "text" } },
          ],
        },
      ],
    ],
    [
      "a toolResult whose call is not in the record is an orphan",
      req([{ role: "user", content: [{ toolResult: { toolUseId: "gone", content: [{ text: "late" }] } }] }]),
      [{ role: "tool", tool_call_id: "gone", content: [{ type: "text", text: "late" }], extras: { orphan: true } }],
    ],
    [
      "reasoningText -> reasoning with the signature in extras",
      req([
        { role: "assistant", content: [{ reasoningContent: { reasoningText: { text: "think", signature: "sig" } } }, { text: "done" }] },
      ]),
      [
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "think", extras: { signature: "sig" } },
            { type: "text", text: "done" },
          ],
        },
      ],
    ],
    [
      "redactedContent -> empty reasoning, redacted, the bytes kept as base64",
      req([{ role: "assistant", content: [{ reasoningContent: { redactedContent: new Uint8Array([1, 2, 3]) } }] }]),
      [{ role: "assistant", content: [{ type: "reasoning", text: "", extras: { redacted: true, redacted_content: "AQID" } }] }],
    ],
    [
      "citationsContent -> text with the citations as annotations",
      req([
        {
          role: "assistant",
          content: [
            {
              citationsContent: {
                content: [{ text: "Grass is green." }],
                citations: [{ title: "Doc", location: { documentChar: { documentIndex: 0, start: 0, end: 5 } } }],
              },
            },
          ],
        },
      ]),
      [
        {
          role: "assistant",
          content: [
            {
              type: "text",
              text: "Grass is green.",
              annotations: [{ title: "Doc", location: { documentChar: { documentIndex: 0, start: 0, end: 5 } } }],
              extras: { vendor_type: "citationsContent" },
            },
          ],
        },
      ],
    ],
    [
      "guardContent text -> text marked guard_content with its qualifiers",
      user({ guardContent: { text: { text: "Is this allowed?", qualifiers: ["query"] } } }),
      [{ role: "user", content: [{ type: "text", text: "Is this allowed?", extras: { guard_content: { qualifiers: ["query"] } } }] }],
    ],
    [
      "guardContent image",
      user({ guardContent: { image: { format: "png", source: { bytes: PNG } } } }),
      [{ role: "user", content: [{ type: "image", base64: PNG_B64, mime_type: "image/png", extras: { guard_content: true } }] }],
    ],
    [
      "cachePoint -> extras.cache_point on the block before it",
      user({ text: "long context" }, { cachePoint: { type: "default" } }, { text: "question" }),
      [
        {
          role: "user",
          content: [
            { type: "text", text: "long context", extras: { cache_point: { type: "default" } } },
            { type: "text", text: "question" },
          ],
        },
      ],
    ],
    [
      "a cachePoint with no block before it is kept in its place",
      user({ cachePoint: { type: "default" } }, { text: "q" }),
      [
        {
          role: "user",
          content: [{ type: "text", text: "q" }],
          extras: { unmapped_content: [{ index: 0, part: { cachePoint: { type: "default" } } }] },
        },
      ],
    ],
    [
      "searchResult -> its joined text, source and title in extras",
      user({ searchResult: { source: "https://x.test", title: "X", content: [{ text: "a" }, { text: "b" }] } }),
      [
        {
          role: "user",
          content: [{ type: "text", text: "a\n\nb", extras: { vendor_type: "searchResult", source: "https://x.test", title: "X" } }],
        },
      ],
    ],
    [
      "unknown members ($unknown, a later block) are kept whole, in order",
      user({ text: "a" }, { $unknown: ["hologram", { x: 1 }] }, { toolAddition: { tool: { name: "t" } } }, { text: "b" }),
      [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
          extras: {
            unmapped_content: [
              { index: 1, part: { $unknown: ["hologram", { x: 1 }] } },
              { index: 2, part: { toolAddition: { tool: { name: "t" } } } },
            ],
          },
        },
      ],
    ],
    [
      "toolUse of type server_tool_use -> server_tool_call; its toolResult in the assistant turn -> server_tool_result",
      req([
        {
          role: "assistant",
          content: [
            { toolUse: { toolUseId: "s1", name: "web_search", input: { q: "x" }, type: "server_tool_use" } },
            { toolResult: { toolUseId: "s1", content: [{ text: "found" }], status: "success", type: "web_search_result" } },
          ],
        },
      ]),
      [
        {
          role: "assistant",
          content: [
            { type: "server_tool_call", id: "s1", name: "web_search", args: { q: "x" } },
            {
              type: "server_tool_result",
              tool_call_id: "s1",
              status: "success",
              output: [{ type: "text", text: "found" }],
              extras: { type: "web_search_result" },
            },
          ],
        },
      ],
    ],
    [
      "tool input that is JSON text is parsed; unparseable text is kept",
      req([
        {
          role: "assistant",
          content: [
            { toolUse: { toolUseId: "a", name: "f", input: '{"k":2}' } },
            { toolUse: { toolUseId: "b", name: "g", input: "{oops" } },
          ],
        },
      ]),
      [
        {
          role: "assistant",
          content: [
            { type: "tool_call", id: "a", name: "f", args: { k: 2 } },
            {
              type: "tool_call",
              id: "b",
              name: "g",
              args: {},
              extras: { raw_args: "{oops", args_error: expect.stringMatching(/^invalid JSON/) },
            },
          ],
        },
      ],
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      const out = normalizeRequest(input).messages;
      expect(out).toEqual(expected);
      expectValidNative(out);
    });
  }

  it("makes the system list one system message, with cache points and guard content kept", () => {
    const r = normalizeRequest(
      req([], { system: [{ text: "Be brief." }, { cachePoint: { type: "default" } }, { guardContent: { text: { text: "policy" } } }] }),
    );
    expect(r.messages).toEqual([
      {
        role: "system",
        content: [
          { type: "text", text: "Be brief.", extras: { cache_point: { type: "default" } } },
          { type: "text", text: "policy", extras: { guard_content: true } },
        ],
      },
    ]);
  });

  it("makes no system message of an empty system list", () => {
    expect(normalizeRequest(req([{ role: "user", content: [{ text: "hi" }] }], { system: [] })).messages.map((m) => m.role)).toEqual([
      "user",
    ]);
  });

  it("keeps what a toolResult's union object carries besides the member on its tool message", () => {
    const r = normalizeRequest(
      req([{ role: "user", content: [{ toolResult: { toolUseId: "t", content: [{ text: "ok" }], type: "x" }, note: "kept" }] }]),
    );
    expect(r.messages[0]).toEqual({
      role: "tool",
      tool_call_id: "t",
      content: [{ type: "text", text: "ok" }],
      extras: { type: "x", note: "kept", orphan: true },
    });
  });

  it("puts every field but modelId, messages and system into invocation params, and keeps the model as given", () => {
    const params = {
      inferenceConfig: { maxTokens: 512, temperature: 0.5, topP: 0.9, stopSequences: ["END"] },
      toolConfig: { tools: [{ toolSpec: { name: "f", inputSchema: { json: { type: "object" } } } }], toolChoice: { auto: {} } },
      additionalModelRequestFields: { top_k: 40 },
      guardrailConfig: { guardrailIdentifier: "gr-1", guardrailVersion: "1", trace: "enabled" },
      promptVariables: { city: { text: "Paris" } },
      requestMetadata: { team: "search" },
      performanceConfig: { latency: "optimized" },
    };
    const arn = "arn:aws:bedrock:us-east-1:111122223333:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0";
    const r = normalizeRequest({ modelId: arn, messages: [], system: [{ text: "s" }], ...params });
    expect(r.invocation_params).toEqual(params);
    expect(r.trace_model_name).toBe(arn);
    expect(r.trace_provider).toBe("bedrock");
  });

  it("names the field of what it cannot read", () => {
    const bad: [unknown, (string | number)[]][] = [
      [user({ image: { format: "png", source: { bytes: 42 } } }), ["messages", 0, "content", 0, "image", "source", "bytes"]],
      [user({ image: { format: "png", source: { bytes: [1, 300] } } }), ["messages", 0, "content", 0, "image", "source", "bytes", 1]],
      [
        user({ image: { format: "png", source: { s3Location: { bucketOwner: "x" } } } }),
        ["messages", 0, "content", 0, "image", "source", "s3Location", "uri"],
      ],
      [
        req([{ role: "assistant", content: [{ toolUse: { name: "f", input: {} } }] }]),
        ["messages", 0, "content", 0, "toolUse", "toolUseId"],
      ],
      [
        req([{ role: "user", content: [{ toolResult: { toolUseId: "t", content: "not a list" } }] }]),
        ["messages", 0, "content", 0, "toolResult", "content"],
      ],
      [req([{ role: "robot", content: [] }]), ["messages", 0, "role"]],
      [{ modelId: 7, messages: [] }, ["modelId"]],
    ];
    for (const [input, loc] of bad) {
      let err: unknown;
      try {
        normalizeRequest(input);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(loc)).toBeInstanceOf(NormalizeError);
      expect((err as NormalizeError).issues[0]!.loc).toEqual(loc);
    }
  });
});

describe("bedrock-converse response -> native", () => {
  it("reads the message, usage with cache reads and writes folded into input_tokens, and keeps the rest", () => {
    const r = normalizeResponse({
      ...fixture("bedrock-converse.json"),
      additionalModelResponseFields: { stop_sequence: null },
      $metadata: { httpStatusCode: 200, requestId: "r-1" },
    });
    const m = r.messages[0]!;
    expect(m.content).toEqual([{ type: "text", text: "Bonjour ! Il fait 18 °C à Paris." }]);
    expect(m.usage_metadata).toEqual({
      input_tokens: 1221,
      output_tokens: 14,
      total_tokens: 1235,
      input_token_details: { cache_read: 1024, cache_creation: 176 },
    });
    expect(m.extras).toEqual({
      stopReason: "end_turn",
      metrics: { latencyMs: 612 },
      additionalModelResponseFields: { stop_sequence: null },
      $metadata: { httpStatusCode: 200, requestId: "r-1" },
    });
    expect(r.stop_reason).toBe("end_turn");
    expect(r.trace_provider).toBe("bedrock");
    expect(r.trace_model_name).toBeUndefined();
    expectValidNative(r.messages);
  });

  const usageCases: [string, Record<string, unknown>, unknown][] = [
    ["no cache", { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, { input_tokens: 10, output_tokens: 5, total_tokens: 15 }],
    [
      "cache read only",
      { inputTokens: 10, outputTokens: 5, totalTokens: 115, cacheReadInputTokens: 100 },
      { input_tokens: 110, output_tokens: 5, total_tokens: 115, input_token_details: { cache_read: 100 } },
    ],
    [
      "cache write with TTL details",
      { inputTokens: 3, outputTokens: 2, totalTokens: 505, cacheWriteInputTokens: 500, cacheDetails: [{ ttl: "1h", inputTokens: 500 }] },
      {
        input_tokens: 503,
        output_tokens: 2,
        total_tokens: 505,
        input_token_details: { cache_creation: 500 },
        extras: { cacheDetails: [{ ttl: "1h", inputTokens: 500 }] },
      },
    ],
    [
      "a vendor total that disagrees is kept",
      { inputTokens: 10, outputTokens: 5, totalTokens: 99 },
      { input_tokens: 10, output_tokens: 5, total_tokens: 15, extras: { totalTokens: 99 } },
    ],
  ];
  for (const [name, usage, expected] of usageCases) {
    it(`usage: ${name}`, () => {
      expect(normalizeResponse({ output: { message: { role: "assistant", content: [] } }, usage }).usage_metadata).toEqual(expected);
    });
  }

  it("takes the model a prompt router chose as the response's model", () => {
    const r = normalizeResponse({
      ...fixture("bedrock-converse.json"),
      trace: {
        promptRouter: { invokedModelId: "arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0" },
      },
    });
    expect(r.trace_model_name).toBe("arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0");
  });

  it("keeps an output member it does not know whole", () => {
    const r = normalizeResponse({ output: { $unknown: ["later", { x: 1 }] }, stopReason: "end_turn" });
    expect(r.messages).toEqual([
      { role: "assistant", content: [], extras: { stopReason: "end_turn", output: { $unknown: ["later", { x: 1 }] } } },
    ]);
  });
});

describe("bedrock-converse stream -> native, event by event", () => {
  const start = { messageStart: { role: "assistant" } };
  const stop = (stopReason = "end_turn") => ({ messageStop: { stopReason } });
  const meta = { metadata: { usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 }, metrics: { latencyMs: 20 } } };
  const delta = (i: number, d: unknown) => ({ contentBlockDelta: { delta: d, contentBlockIndex: i } });
  const cases: [string, unknown[], unknown][] = [
    [
      "text deltas join",
      [start, delta(0, { text: "Hel" }), delta(0, { text: "lo" }), { contentBlockStop: { contentBlockIndex: 0 } }, stop(), meta],
      [{ type: "text", text: "Hello" }],
    ],
    [
      "toolUse start + input deltas -> tool_call with parsed args",
      [
        start,
        { contentBlockStart: { start: { toolUse: { toolUseId: "t", name: "f" } }, contentBlockIndex: 0 } },
        delta(0, { toolUse: { input: '{"a":' } }),
        delta(0, { toolUse: { input: "1}" } }),
        stop("tool_use"),
      ],
      [{ type: "tool_call", id: "t", name: "f", args: { a: 1 } }],
    ],
    [
      "a toolUse with no input deltas has args {}",
      [start, { contentBlockStart: { start: { toolUse: { toolUseId: "t", name: "f" } }, contentBlockIndex: 0 } }, stop("tool_use")],
      [{ type: "tool_call", id: "t", name: "f", args: {} }],
    ],
    [
      "reasoning text and signature deltas",
      [
        start,
        delta(0, { reasoningContent: { text: "hm" } }),
        delta(0, { reasoningContent: { text: "m" } }),
        delta(0, { reasoningContent: { signature: "s1" } }),
        delta(1, { text: "ok" }),
        stop(),
      ],
      [
        { type: "reasoning", text: "hmm", extras: { signature: "s1" } },
        { type: "text", text: "ok" },
      ],
    ],
    [
      "redacted reasoning",
      [start, delta(0, { reasoningContent: { redactedContent: "AQID" } }), stop()],
      [{ type: "reasoning", text: "", extras: { redacted: true, redacted_content: "AQID" } }],
    ],
    [
      "citation deltas -> text with annotations",
      [
        start,
        delta(0, { text: "Green." }),
        delta(0, { citation: { title: "Doc", location: { documentPage: { documentIndex: 0, start: 1, end: 1 } } } }),
        stop(),
      ],
      [
        {
          type: "text",
          text: "Green.",
          annotations: [{ title: "Doc", location: { documentPage: { documentIndex: 0, start: 1, end: 1 } } }],
          extras: { vendor_type: "citationsContent" },
        },
      ],
    ],
    [
      "a server tool result block",
      [
        start,
        {
          contentBlockStart: {
            start: { toolResult: { toolUseId: "s1", status: "success", type: "web_search_result" } },
            contentBlockIndex: 0,
          },
        },
        delta(0, { toolResult: [{ text: "found" }] }),
        stop(),
      ],
      [
        {
          type: "server_tool_result",
          tool_call_id: "s1",
          status: "success",
          output: [{ type: "text", text: "found" }],
          extras: { type: "web_search_result" },
        },
      ],
    ],
    [
      "blocks are placed by contentBlockIndex",
      [start, delta(1, { text: "second" }), delta(0, { text: "first" }), stop()],
      [
        { type: "text", text: "first" },
        { type: "text", text: "second" },
      ],
    ],
  ];
  for (const [name, events, content] of cases) {
    it(name, () => {
      const r = normalizeStream(events);
      expect(r.messages[0]!.content).toEqual(content);
      expectValidNative(r.messages);
    });
  }

  it("takes usage and metrics from the metadata event and the stop reason from messageStop", () => {
    const r = normalizeStream(fixture("bedrock-converse-stream.json"));
    expect(r.messages[0]!.usage_metadata).toEqual({
      input_tokens: 1043,
      output_tokens: 11,
      total_tokens: 1054,
      input_token_details: { cache_read: 1024 },
    });
    expect(r.messages[0]!.extras).toEqual({ stopReason: "end_turn", metrics: { latencyMs: 388 } });
    expect(r.stop_reason).toBe("end_turn");
  });

  it("normalizes a stream like the response it adds up to", () => {
    const events = fixture("bedrock-converse-stream.json");
    const s = normalizeStream(events).messages[0]!;
    const whole = normalizeResponse({
      output: { message: { role: "assistant", content: [{ text: "Bonjour ! Il fait 18 °C." }] } },
      stopReason: "end_turn",
      usage: events.at(-1).metadata.usage,
      metrics: events.at(-1).metadata.metrics,
    }).messages[0]!;
    expect(s).toEqual(whole);
  });

  it("keeps the partial output and an exception event, and events it does not know", () => {
    const r = normalizeStream([
      start,
      delta(0, { text: "par" }),
      { throttlingException: { message: "slow down" } },
      { $unknown: ["later", {}] },
    ]);
    expect(r.messages[0]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "par" }],
      extras: { stream_error: { throttlingException: { message: "slow down" } }, unmapped_events: [{ $unknown: ["later", {}] }] },
    });
  });

  it("reports the first content token exactly once: a tool start counts, an empty text does not", () => {
    const acc = createStreamAccumulator();
    expect(acc.push(start)).toBe(false);
    expect(acc.push(delta(0, { text: "" }))).toBe(false);
    expect(acc.push(delta(0, { reasoningContent: { signature: "s" } }))).toBe(false);
    expect(acc.push({ contentBlockStart: { start: { toolUse: { toolUseId: "t", name: "f" } }, contentBlockIndex: 1 } })).toBe(true);
    expect(acc.push(delta(1, { toolUse: { input: "{}" } }))).toBe(false);
    const acc2 = createStreamAccumulator();
    acc2.push(start);
    expect(acc2.push(delta(0, { text: "a" }))).toBe(true);
    expect(acc2.push(delta(0, { text: "b" }))).toBe(false);
    expect(acc2.result().messages[0]!.content).toEqual([{ type: "text", text: "ab" }]);
  });

  it("names a malformed event by its position", () => {
    expect(() => normalizeStream([start, "nope"])).toThrow(NormalizeError);
    try {
      normalizeStream([start, { contentBlockDelta: 5 }]);
    } catch (e) {
      expect((e as NormalizeError).issues[0]!.loc).toEqual([1, "contentBlockDelta"]);
    }
  });
});

describe("bedrock-converse detection and normalize", () => {
  const request = req([{ role: "user", content: [{ text: "hi" }] }], {
    system: [{ text: "Be brief." }],
    inferenceConfig: { maxTokens: 10 },
  });
  const response = fixture("bedrock-converse.json");
  const stream = fixture("bedrock-converse-stream.json");

  it("claims Converse requests, responses, streams and pairs, and no other adapter does", () => {
    const payloads: [unknown, string][] = [
      [request, "request"],
      [{ messages: [{ role: "user", content: [{ text: "hi" }] }], system: [{ text: "s" }] }, "request"],
      [{ modelId: "arn:aws:bedrock:us-east-1:1:prompt/abc:1", promptVariables: { x: { text: "y" } } }, "request"],
      [response, "response"],
      [stream, "stream"],
      [{ request, response }, "pair"],
      [{ request, response: stream }, "pair"],
    ];
    for (const [p, kind] of payloads) {
      expect(bedrockConverse.detect(p), JSON.stringify(p).slice(0, 80)).toBe(kind);
      for (const other of [native, openaiChat, openaiResponses, anthropicMessages])
        expect(other.detect(p), `${other.name} on ${JSON.stringify(p).slice(0, 60)}`).toBeNull();
      expect(detectFormat(p)).toBe("bedrock-converse");
    }
  });

  it("does not claim OpenAI, Anthropic or native payloads", () => {
    const others = [
      { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
      { model: "claude-sonnet-4-5", max_tokens: 5, system: "s", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
      { messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] },
      { object: "response", output: [] },
      [{ type: "message_start", message: {} }],
      { output: { message: "not a message" } },
    ];
    for (const p of others) expect(bedrockConverse.detect(p), JSON.stringify(p)).toBeNull();
  });

  it("normalizes a {request, response} pair: provider bedrock, the request's modelId", () => {
    const rec = normalize({ request, response });
    expect(rec.format).toBe("bedrock-converse");
    expect(rec.metadata).toEqual({ trace_provider: "bedrock", trace_model_name: MODEL });
    expect(rec.inputs!.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(rec.outputs!.messages[0]!.usage_metadata!.input_tokens).toBe(1221);
    expect(normalize({ request, response }, { format: "bedrock-converse" })).toEqual(rec);
  });

  it("reads a generic log line {request, response} the way backfill and the collector do", () => {
    const { format, call } = readVendorCall({ request, response: stream });
    expect(format).toBe("bedrock-converse");
    expect(call).toMatchObject({ provider: "bedrock", requestModel: MODEL, invocation_params: { inferenceConfig: { maxTokens: 10 } } });
    expect(call.outputs![0]!.content).toEqual([{ type: "text", text: "Bonjour ! Il fait 18 °C." }]);
  });

  it("reports a malformed record under request or response", () => {
    try {
      normalize({
        request: { modelId: MODEL, messages: [{ role: "user", content: [{ image: { format: "png", source: { bytes: false } } }] }] },
        response,
      });
      expect.unreachable();
    } catch (e) {
      expect((e as NormalizeError).issues[0]!.loc).toEqual(["request", "messages", 0, "content", 0, "image", "source", "bytes"]);
    }
    expect(() => bedrockConverse.normalize({ hello: 1 })).toThrow(/not a Bedrock Converse request/);
  });
});
