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

const CHUNKS = Number(process.argv[2] ?? 200);
const model = "gpt-4o-mini-2024-07-18";
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
const chunk = (delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1763800000, model, system_fingerprint: "fp_bench", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
const words = ["Par", "is", " is", " the", " capital", " of", " France", "."];
let sse = chunk({ role: "assistant", content: "", refusal: null }, null);
for (let i = 0; i < CHUNKS - 2; i++) sse += chunk({ content: words[i % words.length] }, null);
sse += chunk({}, "stop") + "data: [DONE]\n\n";

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
