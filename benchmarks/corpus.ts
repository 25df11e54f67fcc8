/**
 * A generated corpus of realistic chat payloads for benchmarks: multi-turn
 * conversations with tools and images, for OpenAI chat-completions and
 * Anthropic Messages, as {request, response} records. Seeded, so every run and
 * every peer sees the same records.
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

const WORDS = "the of and to in is for on with as trace token model request stream latency batch limit window retry spool collector native format message tool call image weather city report".split(" ");

function sentence(r: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]!);
  return out.join(" ") + ".";
}

function b64(r: () => number, bytes: number): string {
  const buf = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) buf[i] = Math.floor(r() * 256);
  return buf.toString("base64");
}

export interface CorpusRecord {
  vendor: "openai" | "anthropic";
  payload: { request: Record<string, unknown>; response: Record<string, unknown> };
}

function openaiRecord(r: () => number, i: number): CorpusRecord {
  const turns = 2 + Math.floor(r() * 5);
  const messages: Record<string, unknown>[] = [{ role: "system", content: sentence(r, 20) }];
  for (let t = 0; t < turns; t++) {
    const withImage = r() < 0.25;
    messages.push({
      role: "user",
      content: withImage ? [{ type: "text", text: sentence(r, 15) }, { type: "image_url", image_url: { url: `data:image/png;base64,${b64(r, 1500)}`, detail: "low" } }] : sentence(r, 25),
    });
    if (r() < 0.4) {
      const id = `call_${i}_${t}`;
      messages.push({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city: sentence(r, 2), unit: "c" }) } }] });
      messages.push({ role: "tool", tool_call_id: id, content: JSON.stringify({ temp: Math.floor(r() * 30), sky: sentence(r, 3) }) });
    }
    messages.push({ role: "assistant", content: sentence(r, 40) });
  }
  messages.push({ role: "user", content: sentence(r, 12) });
  const toolReply = r() < 0.3;
  return {
    vendor: "openai",
    payload: {
      request: { model: "gpt-4o", temperature: 0.3, tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }], messages },
      response: {
        id: `chatcmpl-${i}`,
        object: "chat.completion",
        created: 1763800000 + i,
        model: "gpt-4o-2024-08-06",
        choices: [
          {
            index: 0,
            message: toolReply
              ? { role: "assistant", content: null, refusal: null, tool_calls: [{ id: `call_r${i}`, type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] }
              : { role: "assistant", content: sentence(r, 60), refusal: null, annotations: [] },
            finish_reason: toolReply ? "tool_calls" : "stop",
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 500 + i, completion_tokens: 60, total_tokens: 560 + i, prompt_tokens_details: { cached_tokens: 256, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 } },
      },
    },
  };
}

function anthropicRecord(r: () => number, i: number): CorpusRecord {
  const turns = 2 + Math.floor(r() * 5);
  const messages: Record<string, unknown>[] = [];
  for (let t = 0; t < turns; t++) {
    const withImage = r() < 0.25;
    messages.push({
      role: "user",
      content: withImage ? [{ type: "image", source: { type: "base64", media_type: "image/png", data: b64(r, 1500) } }, { type: "text", text: sentence(r, 15) }] : sentence(r, 25),
    });
    if (r() < 0.4) {
      const id = `toolu_${i}_${t}`;
      messages.push({ role: "assistant", content: [{ type: "text", text: sentence(r, 8) }, { type: "tool_use", id, name: "get_weather", input: { city: sentence(r, 2) } }] });
      messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: [{ type: "text", text: sentence(r, 6) }] }] });
    }
    messages.push({ role: "assistant", content: [{ type: "text", text: sentence(r, 40) }] });
  }
  messages.push({ role: "user", content: sentence(r, 12) });
  return {
    vendor: "anthropic",
    payload: {
      request: { model: "claude-sonnet-4-5", max_tokens: 1024, system: sentence(r, 20), tools: [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }], messages },
      response: {
        id: `msg_${i}`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5-20250929",
        content: r() < 0.3 ? [{ type: "thinking", thinking: sentence(r, 20), signature: "EqQB" }, { type: "tool_use", id: `toolu_r${i}`, name: "get_weather", input: { city: "Paris" } }] : [{ type: "text", text: sentence(r, 60) }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 400, output_tokens: 60, cache_read_input_tokens: 300, cache_creation_input_tokens: 20 },
      },
    },
  };
}

export function generateCorpus(n: number, seed = 42): CorpusRecord[] {
  const r = rng(seed);
  const out: CorpusRecord[] = [];
  for (let i = 0; i < n; i++) out.push(i % 2 === 0 ? openaiRecord(r, i) : anthropicRecord(r, i));
  return out;
}
