/**
 * Detection's fast path (adapters/fast-detect.ts) must answer what asking every
 * adapter answers: the same format, or the same NormalizeError. Checked on every
 * record the benchmark corpora generate, on cross-vendor pairs, on generated
 * mutations of chat pairs, and on hostile objects (throwing getters, proxies, cycles).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readFileSync, readdirSync } from "node:fs";
import { fastDetect, soleResponseClaim } from "../../adapters/index.js";
import { agree } from "../helpers/detect-agree.js";
import { RECORD_CLASSES, generateCorpus } from "../../benchmarks/corpus.js";
import { FORMATS, generateFormatCorpus } from "../../benchmarks/corpus-formats.js";

type Obj = Record<string, unknown>;

const FIXTURES = new URL("../fixtures/replay/", import.meta.url);
const REPLIES: unknown[] = readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".json"))
  .map((f) => JSON.parse(readFileSync(new URL(f, FIXTURES), "utf8")) as unknown);

const corpusRecords = () =>
  FORMATS.flatMap((format) => RECORD_CLASSES.flatMap((kind) => generateFormatCorpus(12, kind, format, 7).map((r) => r.payload)));

describe("detection's fast path", () => {
  it("names every generated record of every format and class as asking every adapter does", () => {
    let fast = 0;
    for (const format of FORMATS)
      for (const kind of RECORD_CLASSES)
        for (const rec of generateFormatCorpus(40, kind, format, 11)) {
          expect(agree(rec.payload)).toBe(`format ${format}`);
          if (fastDetect(rec.payload) !== undefined) fast++;
        }
    for (const kind of RECORD_CLASSES) for (const rec of generateCorpus(40, kind, 5)) agree(rec.payload);
    // The OpenAI chat and Anthropic pairs (two fifths of the corpus) are the fast path's.
    expect(fast).toBe(2 * RECORD_CLASSES.length * 40);
  });

  it("agrees on every generated request paired with every recorded reply of every vendor", () => {
    const requests = corpusRecords().map((p) => p.request);
    for (const request of requests) for (const response of REPLIES) agree({ request, response });
    for (const response of REPLIES) {
      agree({ response });
      agree(response);
    }
  });

  // Values that are some format's marker, so mutations cross the lines between formats.
  const marker = fc.oneof(
    fc.constantFrom(
      "chat.completion",
      "chat.completion.chunk",
      "message",
      "message_start",
      "response",
      "text_completion",
      "assistant",
      "system",
      "tool",
      "ai",
      "AIMessage",
      null,
    ),
    fc.constantFrom("gpt-4o", "claude-sonnet-4-5", "gemini-2.5-flash", "anthropic.claude-3"),
  );
  const block = fc.oneof(
    fc.record({
      type: fc.constantFrom("text", "image_url", "tool_use", "tool_result", "thinking", "image", "file", "refusal"),
      text: fc.string(),
    }),
    fc.record({ type: fc.constant("image"), source: fc.record({ type: fc.constant("base64"), data: fc.string() }) }),
    fc.record({ text: fc.string() }),
    fc.record({ toolUse: fc.record({ name: fc.string() }) }),
    fc.jsonValue(),
  );
  const msg = fc.record(
    {
      role: fc.oneof(fc.constantFrom("system", "developer", "user", "assistant", "tool", "function"), fc.jsonValue()),
      content: fc.oneof(fc.string(), fc.constant(null), fc.array(block, { maxLength: 3 }), fc.jsonValue()),
      tool_calls: fc.jsonValue(),
      name: fc.string(),
      type: fc.constantFrom("human", "ai", "constructor"),
      lc: fc.constant(1),
    },
    { requiredKeys: ["role"] },
  );
  const value = fc.oneof(marker, msg, fc.array(msg, { maxLength: 3 }), fc.array(block, { maxLength: 3 }), fc.jsonValue());
  const REQUEST_KEYS = [
    "model",
    "system",
    "messages",
    "modelId",
    "contents",
    "input",
    "prompt",
    "prompts",
    "tools",
    "tool_choice",
    "n",
    "top_k",
  ];
  const RESPONSE_KEYS = [
    "object",
    "type",
    "role",
    "content",
    "choices",
    "output",
    "candidates",
    "generations",
    "lc",
    "data",
    "message",
    "text",
    "usage_metadata",
    "usage",
  ];
  const mutation = fc.oneof(
    fc.record({ at: fc.constant("request" as const), key: fc.constantFrom(...REQUEST_KEYS), value }),
    fc.record({ at: fc.constant("response" as const), key: fc.constantFrom(...RESPONSE_KEYS), value }),
    fc.record({ at: fc.constant("message" as const), index: fc.nat(12), value: fc.oneof(msg, value) }),
    fc.record({ at: fc.constant("first" as const), value: fc.oneof(msg, value) }),
    fc.record({ at: fc.constant("drop" as const), key: fc.constantFrom("request", "response") }),
  );
  type Mutation = typeof mutation extends fc.Arbitrary<infer M> ? M : never;

  function mutate(base: Obj, ms: Mutation[]): Obj {
    const p = structuredClone(base);
    for (const m of ms) {
      const request = p.request as Obj;
      const response = p.response as Obj | unknown[];
      if (m.at === "request" && request) request[m.key] = m.value;
      else if (m.at === "response" && response && !Array.isArray(response)) response[m.key] = m.value;
      else if (m.at === "message" && request && Array.isArray(request.messages))
        request.messages[m.index % (request.messages.length + 1)] = m.value;
      else if (m.at === "first" && Array.isArray(response)) response[0] = m.value;
      else if (m.at === "first" && response && Array.isArray((response as Obj).choices))
        ((response as Obj).choices as unknown[])[0] = { message: m.value };
      else if (m.at === "drop") delete p[m.key];
    }
    return p;
  }

  const chatPairs = [
    ...RECORD_CLASSES.flatMap((kind) => generateFormatCorpus(6, kind, "openai-chat", 3)),
    ...RECORD_CLASSES.flatMap((kind) => generateFormatCorpus(6, kind, "anthropic-messages", 3)),
  ].map((r) => r.payload as unknown as Obj);

  it("agrees on chat pairs mutated with other formats' markers, messages and blocks", () => {
    let fast = 0;
    fc.assert(
      fc.property(fc.nat(chatPairs.length - 1), fc.array(mutation, { minLength: 1, maxLength: 3 }), (i, ms) => {
        const p = mutate(chatPairs[i]!, ms);
        agree(p);
        if (fastDetect(p) !== undefined) fast++;
      }),
      { numRuns: 1500 },
    );
    // Many mutations leave the pair the fast path's: its answers were compared, not only its refusals.
    expect(fast).toBeGreaterThan(100);
  });

  const otherPairs = (["openai-responses", "gemini", "bedrock-converse"] as const)
    .flatMap((format) => RECORD_CLASSES.flatMap((kind) => generateFormatCorpus(6, kind, format, 3)))
    .map((r) => r.payload as unknown as Obj);

  it("names the other formats' pairs by the one adapter that reads their response, as asking every adapter does", () => {
    for (const format of ["openai-responses", "gemini", "bedrock-converse"] as const)
      for (const kind of RECORD_CLASSES)
        for (const rec of generateFormatCorpus(20, kind, format, 13)) {
          expect(soleResponseClaim(rec.payload)).toBe(format);
          expect(agree(rec.payload)).toBe(`format ${format}`);
        }
  });

  it("agrees on Responses, Gemini and Converse pairs mutated with other formats' markers, messages and blocks", () => {
    let sole = 0;
    fc.assert(
      fc.property(fc.nat(otherPairs.length - 1), fc.array(mutation, { minLength: 1, maxLength: 3 }), (i, ms) => {
        const p = mutate(otherPairs[i]!, ms);
        agree(p);
        if (fastDetect(p) === undefined && soleResponseClaim(p) !== undefined) sole++;
      }),
      { numRuns: 1500 },
    );
    // Many mutations leave the pair the second fast path's: its answers were compared, not only its refusals.
    expect(sole).toBeGreaterThan(100);
  });

  it("leaves a response that another format's test also passes to the full detection, which finds two claims", () => {
    const openaiReply = { object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "hi" } }] };
    const anthropicReply = { type: "message", role: "assistant", content: [{ type: "text", text: "hi" }] };
    const toolUse = [{ type: "tool_use", id: "toolu_1", name: "f", input: {} }];
    const cases: [unknown, string][] = [
      // An Anthropic message inside an OpenAI response, beside a request with no vendor's markers.
      [
        {
          request: { model: "local-model", messages: [{ role: "user", content: "hi" }] },
          response: { ...openaiReply, choices: [{ message: { role: "assistant", content: toolUse } }] },
        },
        "openai-chat and anthropic-messages",
      ],
      // Without a request, a response that is also a LangChain, Bedrock Converse or completions reply.
      [{ response: { ...openaiReply, generations: [[{ text: "hi" }]] } }, "openai-chat and langchain"],
      [{ response: { ...anthropicReply, generations: [[{ text: "hi" }]] } }, "anthropic-messages and langchain"],
      [
        { response: { ...anthropicReply, output: { message: { role: "assistant", content: [] } } } },
        "anthropic-messages and bedrock-converse",
      ],
      [{ response: { ...openaiReply, choices: [{ index: 0, text: "hi" }] } }, "openai-chat and openai-completions"],
    ];
    for (const [payload, both] of cases) {
      expect(fastDetect(payload)).toBeUndefined();
      expect(agree(payload)).toContain(`it matches ${both}`);
    }
  });

  describe("hostile payloads give the same format or the same typed error", () => {
    const base = () =>
      [
        generateFormatCorpus(1, "tools", "openai-chat", 9)[0]!.payload,
        generateFormatCorpus(1, "tools", "anthropic-messages", 9)[0]!.payload,
        generateFormatCorpus(1, "streams", "openai-chat", 9)[0]!.payload,
        generateFormatCorpus(1, "streams", "anthropic-messages", 9)[0]!.payload,
      ] as unknown as Obj[];

    /** Every object and array reachable from `root`, with the key that holds it. */
    function holders(root: Obj): [Obj | unknown[], string][] {
      const out: [Obj | unknown[], string][] = [];
      const walk = (v: unknown, depth: number) => {
        if (typeof v !== "object" || v === null || depth > 5) return;
        for (const k of Object.keys(v)) {
          out.push([v as Obj, k]);
          walk((v as Obj)[k], depth + 1);
        }
      };
      walk(root, 0);
      return out;
    }

    /** Each payload once per place a value sits, that value behind a getter that throws: detection agrees with the full one. Returns the cases. */
    const everyHostileGetter = (payloads: Obj[]): number => {
      let cases = 0;
      for (const b of payloads) {
        const n = holders(b).length;
        for (let j = 0; j < n; j++) {
          const p = structuredClone(b);
          const [holder, key] = holders(p)[j]!;
          Object.defineProperty(holder, key, {
            enumerable: true,
            get() {
              throw new Error(`hostile getter at ${key}`);
            },
          });
          agree(p);
          cases++;
        }
      }
      return cases;
    };

    it("a getter that throws, wherever it sits", () => {
      expect(everyHostileGetter(base())).toBeGreaterThan(200);
    });

    it("a getter that throws, wherever it sits in a Responses, Gemini or Converse pair", () => {
      const pairs = (["openai-responses", "gemini", "bedrock-converse"] as const).flatMap((format) =>
        (["tools", "streams"] as const).map((kind) => generateFormatCorpus(1, kind, format, 9)[0]!.payload as unknown as Obj),
      );
      expect(everyHostileGetter(pairs)).toBeGreaterThan(200);
    });

    /** `v` behind proxies all the way down, which answer like the object (or throw from one trap). */
    function proxied(v: unknown, trap?: "get" | "has" | "ownKeys", at?: string): unknown {
      if (typeof v !== "object" || v === null) return v;
      const handler: ProxyHandler<object> = {
        get(t, k, r) {
          if (trap === "get" && k === at) throw new Error("hostile get trap");
          return proxied(Reflect.get(t, k, r), trap, at);
        },
        has(t, k) {
          if (trap === "has" && k === at) throw new Error("hostile has trap");
          return Reflect.has(t, k);
        },
        ownKeys(t) {
          if (trap === "ownKeys" && at !== undefined && Object.hasOwn(t, at)) throw new Error("hostile ownKeys trap");
          return Reflect.ownKeys(t);
        },
      };
      return new Proxy(v, handler);
    }

    it("proxies that answer like the record detect as the record does", () => {
      for (const b of base()) expect(agree(proxied(b))).toBe(agree(b));
    });

    it("proxies whose traps throw", () => {
      for (const b of base())
        for (const trap of ["get", "has", "ownKeys"] as const)
          for (const at of [
            "request",
            "response",
            "object",
            "type",
            "choices",
            "content",
            "messages",
            "role",
            "0",
            "length",
            "model",
            "system",
          ])
            agree(proxied(b, trap, at));
    });

    it("cycles", () => {
      for (const b of base()) {
        const self = structuredClone(b);
        (self.request as Obj).self = self.request;
        ((self.request as Obj).messages as unknown[]).push(self.request);
        agree(self);
        const inner = structuredClone(b);
        const res = inner.response as Obj | Obj[];
        if (Array.isArray(res)) res.push(res as unknown as Obj);
        else {
          res.self = res;
          if (Array.isArray(res.content)) res.content.push(res);
          const choice = (res.choices as Obj[] | undefined)?.[0];
          if (choice) (choice.message as Obj).content = [res, choice];
        }
        agree(inner);
        const outer = structuredClone(b);
        ((outer.request as Obj).messages as Obj[])[0]!.content = [outer];
        agree(outer);
      }
    });
  });
});
