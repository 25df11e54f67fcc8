/**
 * Generated {request, response} records for the formats added after
 * corpus.ts's OpenAI chat / Anthropic pair: the OpenAI Responses API, Gemini
 * generateContent (the @google/genai parameters and GenerateContentResponse)
 * and Bedrock Converse (ConverseRequest / ConverseResponse and the
 * ConverseStream events as the SDK yields them, bytes as base64 text, as the
 * service's JSON and invocation logs carry them). The same record classes as
 * corpus.ts: text, tools (multi-turn with calls and results), images (base64,
 * 0.5-3 KB), streams. Seeded like corpus.ts, so every variant sees the same records.
 */
import { anthropicRecord, b64, imageBytes, openaiRecord, rng, sentence } from "./corpus.js";
import type { RecordClass } from "./corpus.js";

type R = () => number;
type Obj = Record<string, unknown>;

const WEATHER_SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const ARG_PIECES = ['{"', "city", '":"', "Par", "is", '"}'];

// ---- OpenAI Responses --------------------------------------------------------------------

function responsesInput(r: R, i: number, kind: RecordClass): Obj[] {
  const turns = 2 + Math.floor(r() * 4);
  const input: Obj[] = [];
  for (let t = 0; t < turns; t++) {
    const image = kind === "images" && (t === 0 || r() < 0.5);
    input.push({
      role: "user",
      content: image
        ? [
            { type: "input_text", text: sentence(r, 15) },
            { type: "input_image", detail: "low", image_url: `data:image/png;base64,${b64(r, imageBytes(r))}` },
          ]
        : sentence(r, 25),
    });
    if ((kind === "tools" || kind === "streams") && r() < 0.6) {
      const id = `call_${i}_${t}`;
      input.push({
        type: "function_call",
        id: `fc_${i}_${t}`,
        call_id: id,
        name: "get_weather",
        arguments: JSON.stringify({ city: sentence(r, 2), unit: "c" }),
        status: "completed",
      });
      input.push({
        type: "function_call_output",
        call_id: id,
        output: JSON.stringify({ temp: Math.floor(r() * 30), sky: sentence(r, 3) }),
      });
    }
    input.push({
      type: "message",
      id: `msg_${i}_${t}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: sentence(r, 40), annotations: [] }],
    });
  }
  input.push({ role: "user", content: sentence(r, 12) });
  return input;
}

const responsesUsage = (i: number) => ({
  input_tokens: 500 + i,
  input_tokens_details: { cached_tokens: 256 },
  output_tokens: 60,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 560 + i,
});

function responseBody(i: number, output: Obj[], status: string, usage: Obj | null): Obj {
  return {
    id: `resp_${i}`,
    object: "response",
    created_at: 1763800000 + i,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: "gpt-4.1-2025-04-14",
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 0.3,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage,
    metadata: {},
  };
}

function responsesOutput(r: R, i: number, toolReply: boolean): Obj[] {
  if (toolReply)
    return [
      {
        type: "function_call",
        id: `fc_r${i}`,
        call_id: `call_r${i}`,
        name: "get_weather",
        arguments: '{"city":"Paris"}',
        status: "completed",
      },
    ];
  return [
    {
      type: "message",
      id: `msg_r${i}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: sentence(r, 60), annotations: [] }],
    },
  ];
}

function responsesStream(r: R, i: number, toolReply: boolean): Obj[] {
  let seq = 0;
  const ev = (e: Obj): Obj => ({ ...e, sequence_number: seq++ });
  const events: Obj[] = [
    ev({ type: "response.created", response: responseBody(i, [], "in_progress", null) }),
    ev({ type: "response.in_progress", response: responseBody(i, [], "in_progress", null) }),
  ];
  let item: Obj;
  if (toolReply) {
    item = { type: "function_call", id: `fc_r${i}`, call_id: `call_r${i}`, name: "get_weather", arguments: "", status: "in_progress" };
    events.push(ev({ type: "response.output_item.added", output_index: 0, item }));
    for (const piece of ARG_PIECES)
      events.push(ev({ type: "response.function_call_arguments.delta", item_id: item.id, output_index: 0, delta: piece }));
    const done = { ...item, arguments: ARG_PIECES.join(""), status: "completed" };
    events.push(ev({ type: "response.function_call_arguments.done", item_id: item.id, output_index: 0, arguments: done.arguments }));
    events.push(ev({ type: "response.output_item.done", output_index: 0, item: done }));
    events.push(ev({ type: "response.completed", response: responseBody(i, [done], "completed", responsesUsage(i)) }));
  } else {
    item = { type: "message", id: `msg_r${i}`, status: "in_progress", role: "assistant", content: [] };
    events.push(ev({ type: "response.output_item.added", output_index: 0, item }));
    events.push(
      ev({
        type: "response.content_part.added",
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      }),
    );
    const words = sentence(r, 40)
      .split(" ")
      .map((w) => w + " ");
    for (const w of words)
      events.push(ev({ type: "response.output_text.delta", item_id: item.id, output_index: 0, content_index: 0, delta: w, logprobs: [] }));
    const text = words.join("");
    events.push(ev({ type: "response.output_text.done", item_id: item.id, output_index: 0, content_index: 0, text, logprobs: [] }));
    const part = { type: "output_text", text, annotations: [] };
    events.push(ev({ type: "response.content_part.done", item_id: item.id, output_index: 0, content_index: 0, part }));
    const done = { ...item, status: "completed", content: [part] };
    events.push(ev({ type: "response.output_item.done", output_index: 0, item: done }));
    events.push(ev({ type: "response.completed", response: responseBody(i, [done], "completed", responsesUsage(i)) }));
  }
  return events;
}

export function responsesRecord(r: R, i: number, kind: RecordClass): { request: Obj; response: Obj | Obj[] } {
  const request: Obj = { model: "gpt-4.1", instructions: sentence(r, 20), input: responsesInput(r, i, kind), temperature: 0.3 };
  if (kind === "tools" || kind === "streams")
    request.tools = [{ type: "function", name: "get_weather", parameters: WEATHER_SCHEMA, strict: true }];
  const toolReply = kind !== "text" && kind !== "images" && r() < 0.3;
  if (kind === "streams") {
    request.stream = true;
    return { request, response: responsesStream(r, i, toolReply) };
  }
  return { request, response: responseBody(i, responsesOutput(r, i, toolReply), "completed", responsesUsage(i)) };
}

// ---- Gemini --------------------------------------------------------------------------------

function geminiContents(r: R, i: number, kind: RecordClass): Obj[] {
  const turns = 2 + Math.floor(r() * 4);
  const contents: Obj[] = [];
  for (let t = 0; t < turns; t++) {
    const image = kind === "images" && (t === 0 || r() < 0.5);
    contents.push({
      role: "user",
      parts: image
        ? [{ text: sentence(r, 15) }, { inlineData: { mimeType: "image/png", data: b64(r, imageBytes(r)) } }]
        : [{ text: sentence(r, 25) }],
    });
    if ((kind === "tools" || kind === "streams") && r() < 0.6) {
      const id = `call_${i}_${t}`;
      contents.push({ role: "model", parts: [{ functionCall: { id, name: "get_weather", args: { city: sentence(r, 2), unit: "c" } } }] });
      contents.push({
        role: "user",
        parts: [{ functionResponse: { id, name: "get_weather", response: { temp: Math.floor(r() * 30), sky: sentence(r, 3) } } }],
      });
    }
    contents.push({ role: "model", parts: [{ text: sentence(r, 40) }] });
  }
  contents.push({ role: "user", parts: [{ text: sentence(r, 12) }] });
  return contents;
}

const geminiUsage = (i: number) => ({
  promptTokenCount: 500 + i,
  candidatesTokenCount: 60,
  totalTokenCount: 560 + i,
  cachedContentTokenCount: 256,
  promptTokensDetails: [{ modality: "TEXT", tokenCount: 500 + i }],
});

function geminiResponse(i: number, parts: Obj[], finishReason: string | undefined, usage: Obj): Obj {
  const candidate: Obj = { content: { role: "model", parts }, index: 0 };
  if (finishReason) candidate.finishReason = finishReason;
  return { candidates: [candidate], usageMetadata: usage, modelVersion: "gemini-2.5-flash", responseId: `gem_${i}` };
}

export function geminiRecord(r: R, i: number, kind: RecordClass): { request: Obj; response: Obj | Obj[] } {
  const config: Obj = { systemInstruction: sentence(r, 20), temperature: 0.3 };
  const request: Obj = { model: "gemini-2.5-flash", contents: geminiContents(r, i, kind), config };
  if (kind === "tools" || kind === "streams")
    config.tools = [{ functionDeclarations: [{ name: "get_weather", parameters: WEATHER_SCHEMA }] }];
  const toolReply = kind !== "text" && kind !== "images" && r() < 0.3;
  if (kind === "streams") {
    // streamGenerateContent: each chunk a GenerateContentResponse with the parts generated since the last.
    if (toolReply)
      return {
        request,
        response: [
          geminiResponse(i, [{ functionCall: { id: `call_r${i}`, name: "get_weather", args: { city: "Paris" } } }], "STOP", geminiUsage(i)),
        ],
      };
    const words = sentence(r, 40).split(" ");
    const chunks = words.map((w, k) =>
      geminiResponse(i, [{ text: w + " " }], k === words.length - 1 ? "STOP" : undefined, {
        promptTokenCount: 500 + i,
        candidatesTokenCount: k + 1,
        totalTokenCount: 501 + i + k,
      }),
    );
    chunks[chunks.length - 1]!.usageMetadata = geminiUsage(i);
    return { request, response: chunks };
  }
  const parts = toolReply
    ? [{ functionCall: { id: `call_r${i}`, name: "get_weather", args: { city: "Paris" } } }]
    : [{ text: sentence(r, 60) }];
  return { request, response: geminiResponse(i, parts, "STOP", geminiUsage(i)) };
}

// ---- Bedrock Converse ----------------------------------------------------------------------

function converseMessages(r: R, i: number, kind: RecordClass): Obj[] {
  const turns = 2 + Math.floor(r() * 4);
  const messages: Obj[] = [];
  for (let t = 0; t < turns; t++) {
    const image = kind === "images" && (t === 0 || r() < 0.5);
    messages.push({
      role: "user",
      content: image
        ? [{ text: sentence(r, 15) }, { image: { format: "png", source: { bytes: b64(r, imageBytes(r)) } } }]
        : [{ text: sentence(r, 25) }],
    });
    if ((kind === "tools" || kind === "streams") && r() < 0.6) {
      const id = `tooluse_${i}_${t}`;
      messages.push({
        role: "assistant",
        content: [{ text: sentence(r, 8) }, { toolUse: { toolUseId: id, name: "get_weather", input: { city: sentence(r, 2) } } }],
      });
      messages.push({
        role: "user",
        content: [
          { toolResult: { toolUseId: id, content: [{ json: { temp: Math.floor(r() * 30), sky: sentence(r, 3) } }], status: "success" } },
        ],
      });
    }
    messages.push({ role: "assistant", content: [{ text: sentence(r, 40) }] });
  }
  messages.push({ role: "user", content: [{ text: sentence(r, 12) }] });
  return messages;
}

const converseUsage = { inputTokens: 400, outputTokens: 60, totalTokens: 460, cacheReadInputTokens: 300, cacheWriteInputTokens: 20 };

function converseStream(r: R, toolReply: boolean): Obj[] {
  const events: Obj[] = [{ messageStart: { role: "assistant" } }];
  if (toolReply) {
    events.push({ contentBlockStart: { start: { toolUse: { toolUseId: "tooluse_r", name: "get_weather" } }, contentBlockIndex: 0 } });
    for (const piece of ARG_PIECES) events.push({ contentBlockDelta: { delta: { toolUse: { input: piece } }, contentBlockIndex: 0 } });
  } else {
    for (const w of sentence(r, 40).split(" ")) events.push({ contentBlockDelta: { delta: { text: w + " " }, contentBlockIndex: 0 } });
  }
  events.push({ contentBlockStop: { contentBlockIndex: 0 } });
  events.push({ messageStop: { stopReason: toolReply ? "tool_use" : "end_turn" } });
  events.push({ metadata: { usage: converseUsage, metrics: { latencyMs: 812 } } });
  return events;
}

export function converseRecord(r: R, i: number, kind: RecordClass): { request: Obj; response: Obj | Obj[] } {
  const request: Obj = {
    modelId: "anthropic.claude-3-5-sonnet-20240620-v1:0",
    system: [{ text: sentence(r, 20) }],
    messages: converseMessages(r, i, kind),
    inferenceConfig: { maxTokens: 1024, temperature: 0.3 },
  };
  if (kind === "tools" || kind === "streams")
    request.toolConfig = {
      tools: [{ toolSpec: { name: "get_weather", description: "Weather for a city", inputSchema: { json: WEATHER_SCHEMA } } }],
    };
  const toolReply = kind !== "text" && kind !== "images" && r() < 0.3;
  if (kind === "streams") return { request, response: converseStream(r, toolReply) };
  const content = toolReply
    ? [{ text: sentence(r, 10) }, { toolUse: { toolUseId: `tooluse_r${i}`, name: "get_weather", input: { city: "Paris" } } }]
    : [{ text: sentence(r, 60) }];
  return {
    request,
    response: {
      output: { message: { role: "assistant", content } },
      stopReason: toolReply ? "tool_use" : "end_turn",
      usage: converseUsage,
      metrics: { latencyMs: 812 },
    },
  };
}

// ---- one format's corpus -------------------------------------------------------------------

export const FORMATS = ["openai-chat", "anthropic-messages", "openai-responses", "gemini", "bedrock-converse"] as const;
export type Format = (typeof FORMATS)[number];

export interface FormatRecord {
  format: Format;
  kind: RecordClass;
  payload: { request: Obj; response: Obj | Obj[] };
}

const MAKERS: Record<Format, (r: R, i: number, kind: RecordClass) => { request: Obj; response: Obj | Obj[] }> = {
  "openai-chat": (r, i, k) => openaiRecord(r, i, k).payload,
  "anthropic-messages": (r, i, k) => anthropicRecord(r, i, k).payload,
  "openai-responses": responsesRecord,
  gemini: geminiRecord,
  "bedrock-converse": converseRecord,
};

/** `n` records of one class in one format. */
export function generateFormatCorpus(n: number, kind: RecordClass, format: Format, seed = 42): FormatRecord[] {
  const r = rng(seed);
  const make = MAKERS[format];
  const out: FormatRecord[] = [];
  for (let i = 0; i < n; i++) out.push({ format, kind, payload: make(r, i, kind) });
  return out;
}
