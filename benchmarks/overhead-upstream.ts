/**
 * The fake vendor for benchmarks/overhead.ts, in its own process so its CPU is
 * not charged to the clients being measured. POST …/chat/completions answers a
 * fixed completion, or with `"stream": true` an SSE stream of CHUNKS chunks
 * written in one go (no delays: what is left is the client's own per-chunk cost).
 *
 *   node --import tsx benchmarks/overhead-upstream.ts <chunks>   # prints "listening on http://…"
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { chatSse, MODEL } from "./chat-sse.js";

const CHUNKS = Number(process.argv[2] ?? 200);
const model = MODEL;
const completion = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1763800000,
  model,
  system_fingerprint: "fp_bench",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "The capital of France is Paris.", refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: "stop",
    },
  ],
  usage: {
    prompt_tokens: 24,
    completion_tokens: 8,
    total_tokens: 32,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
});
const sse = chatSse(CHUNKS);

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on("data", (c: Buffer) => parts.push(c));
  req.on("end", () => {
    const stream = Buffer.concat(parts).includes('"stream":true');
    if (stream) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.end(sse);
    } else {
      res.writeHead(200, { "content-type": "application/json", "x-request-id": "req_bench" });
      res.end(completion);
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
