/**
 * Generated corpora of chat payloads for benchmarks, one per record class, for
 * OpenAI chat-completions and Anthropic Messages alike (half each), as
 * {request, response} records:
 *   text    — plain-text conversations (string content, no tools, no media)
 *   tools   — multi-turn conversations with tool calls and results, no media
 *   images  — conversations whose user turns carry images (data URLs / base64, 0.5-3 KB)
 *   streams — a request and its reply as stream chunks / events (text and tool calls)
 * Seeded, so every run and every peer sees the same records.
 */

export function rng(seed: number): () => number {
  // mulberry32: tiny, fast, good enough for picking shapes.
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  "the of and to in is for on with as trace token model request stream latency batch limit window retry spool collector native format message tool call image weather city report".split(
    " ",
  );

export function sentence(r: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]!);
  return out.join(" ") + ".";
}

export function b64(r: () => number, bytes: number): string {
  const buf = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) buf[i] = Math.floor(r() * 256);
  return buf.toString("base64");
}

export const RECORD_CLASSES = ["text", "tools", "images", "streams"] as const;
export type RecordClass = (typeof RECORD_CLASSES)[number];

export interface CorpusRecord {
  vendor: "openai" | "anthropic";
  kind: RecordClass;
  payload: { request: Record<string, unknown>; response: Record<string, unknown> | Record<string, unknown>[] };
}

type R = () => number;
type Obj = Record<string, unknown>;

export const imageBytes = (r: R) => 500 + Math.floor(r() * 2500);

// ---- OpenAI ------------------------------------------------------------------------------

function openaiMessages(r: R, i: number, kind: RecordClass): Obj[] {
  const turns = 2 + Math.floor(r() * 4);
  const messages: Obj[] = [{ role: "system", content: sentence(r, 20) }];
  for (let t = 0; t < turns; t++) {
    const image = kind === "images" && (t === 0 || r() < 0.5);
    messages.push({
      role: "user",
      content: image
        ? [
            { type: "text", text: sentence(r, 15) },
            { type: "image_url", image_url: { url: `data:image/png;base64,${b64(r, imageBytes(r))}`, detail: "low" } },
          ]
        : sentence(r, 25),
    });
    if ((kind === "tools" || kind === "streams") && r() < 0.6) {
      const id = `call_${i}_${t}`;
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [
          { id, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city: sentence(r, 2), unit: "c" }) } },
        ],
      });
      messages.push({ role: "tool", tool_call_id: id, content: JSON.stringify({ temp: Math.floor(r() * 30), sky: sentence(r, 3) }) });
    }
    messages.push({ role: "assistant", content: sentence(r, 40) });
  }
  messages.push({ role: "user", content: sentence(r, 12) });
  return messages;
}

const OPENAI_TOOLS = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
];
const openaiUsage = (i: number) => ({
  prompt_tokens: 500 + i,
  completion_tokens: 60,
  total_tokens: 560 + i,
  prompt_tokens_details: { cached_tokens: 256, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
});

function openaiStream(r: R, i: number, toolReply: boolean): Obj[] {
  const base = {
    id: `chatcmpl-${i}`,
    object: "chat.completion.chunk",
    created: 1763800000 + i,
    model: "gpt-4o-2024-08-06",
    system_fingerprint: "fp_1",
  };
  const chunks: Obj[] = [
    { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "", refusal: null }, logprobs: null, finish_reason: null }] },
  ];
  if (toolReply) {
    chunks.push({
      ...base,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: `call_r${i}`, type: "function", function: { name: "get_weather", arguments: "" } }] },
          logprobs: null,
          finish_reason: null,
        },
      ],
    });
    for (const piece of ['{"', "city", '":"', "Par", "is", '"}'])
      chunks.push({
        ...base,
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, logprobs: null, finish_reason: null }],
      });
  } else {
    const words = sentence(r, 40).split(" ");
    for (const w of words)
      chunks.push({ ...base, choices: [{ index: 0, delta: { content: w + " " }, logprobs: null, finish_reason: null }] });
  }
  chunks.push({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: toolReply ? "tool_calls" : "stop" }] });
  chunks.push({ ...base, choices: [], usage: openaiUsage(i) });
  return chunks;
}

export function openaiRecord(r: R, i: number, kind: RecordClass): CorpusRecord {
  const messages = openaiMessages(r, i, kind);
  const toolReply = kind !== "text" && kind !== "images" && r() < 0.3;
  const request: Obj = { model: "gpt-4o", temperature: 0.3, messages };
  if (kind === "tools" || kind === "streams") request.tools = OPENAI_TOOLS;
  if (kind === "streams") {
    request.stream = true;
    request.stream_options = { include_usage: true };
    return { vendor: "openai", kind, payload: { request, response: openaiStream(r, i, toolReply) } };
  }
  const response = {
    id: `chatcmpl-${i}`,
    object: "chat.completion",
    created: 1763800000 + i,
    model: "gpt-4o-2024-08-06",
    choices: [
      {
        index: 0,
        message: toolReply
          ? {
              role: "assistant",
              content: null,
              refusal: null,
              tool_calls: [{ id: `call_r${i}`, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
            }
          : { role: "assistant", content: sentence(r, 60), refusal: null, annotations: [] },
        finish_reason: toolReply ? "tool_calls" : "stop",
        logprobs: null,
      },
    ],
    usage: openaiUsage(i),
  };
  return { vendor: "openai", kind, payload: { request, response } };
}

// ---- Anthropic ---------------------------------------------------------------------------

function anthropicMessages(r: R, i: number, kind: RecordClass): Obj[] {
  const turns = 2 + Math.floor(r() * 4);
  const messages: Obj[] = [];
  for (let t = 0; t < turns; t++) {
    const image = kind === "images" && (t === 0 || r() < 0.5);
    messages.push({
      role: "user",
      content: image
        ? [
            { type: "image", source: { type: "base64", media_type: "image/png", data: b64(r, imageBytes(r)) } },
            { type: "text", text: sentence(r, 15) },
          ]
        : sentence(r, 25),
    });
    if ((kind === "tools" || kind === "streams") && r() < 0.6) {
      const id = `toolu_${i}_${t}`;
      messages.push({
        role: "assistant",
        content: [
          { type: "text", text: sentence(r, 8) },
          { type: "tool_use", id, name: "get_weather", input: { city: sentence(r, 2) } },
        ],
      });
      messages.push({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: id, content: [{ type: "text", text: sentence(r, 6) }] }],
      });
    }
    messages.push({ role: "assistant", content: kind === "text" ? sentence(r, 40) : [{ type: "text", text: sentence(r, 40) }] });
  }
  messages.push({ role: "user", content: sentence(r, 12) });
  return messages;
}

const ANTHROPIC_TOOLS = [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
const anthropicUsage = { input_tokens: 400, output_tokens: 60, cache_read_input_tokens: 300, cache_creation_input_tokens: 20 };

function anthropicStream(r: R, i: number, toolReply: boolean): Obj[] {
  const events: Obj[] = [
    {
      type: "message_start",
      message: {
        id: `msg_${i}`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5-20250929",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...anthropicUsage, output_tokens: 1 },
      },
    },
  ];
  if (toolReply) {
    events.push({
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: `toolu_r${i}`, name: "get_weather", input: {} },
    });
    for (const piece of ['{"', "city", '":"', "Par", "is", '"}'])
      events.push({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: piece } });
  } else {
    events.push({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    for (const w of sentence(r, 40).split(" "))
      events.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: w + " " } });
  }
  events.push({ type: "content_block_stop", index: 0 });
  events.push({
    type: "message_delta",
    delta: { stop_reason: toolReply ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: 60 },
  });
  events.push({ type: "message_stop" });
  return events;
}

export function anthropicRecord(r: R, i: number, kind: RecordClass): CorpusRecord {
  const request: Obj = { model: "claude-sonnet-4-5", max_tokens: 1024, system: sentence(r, 20), messages: anthropicMessages(r, i, kind) };
  if (kind === "tools" || kind === "streams") request.tools = ANTHROPIC_TOOLS;
  const toolReply = kind !== "text" && kind !== "images" && r() < 0.3;
  if (kind === "streams") {
    request.stream = true;
    return { vendor: "anthropic", kind, payload: { request, response: anthropicStream(r, i, toolReply) } };
  }
  const response = {
    id: `msg_${i}`,
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5-20250929",
    content: toolReply
      ? [
          { type: "thinking", thinking: sentence(r, 20), signature: "EqQB" },
          { type: "tool_use", id: `toolu_r${i}`, name: "get_weather", input: { city: "Paris" } },
        ]
      : [{ type: "text", text: sentence(r, 60) }],
    stop_reason: toolReply ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: anthropicUsage,
  };
  return { vendor: "anthropic", kind, payload: { request, response } };
}

/** `n` records of one class, alternating OpenAI and Anthropic. */
export function generateCorpus(n: number, kind: RecordClass, seed = 42): CorpusRecord[] {
  const r = rng(seed);
  const out: CorpusRecord[] = [];
  for (let i = 0; i < n; i++) out.push(i % 2 === 0 ? openaiRecord(r, i, kind) : anthropicRecord(r, i, kind));
  return out;
}
