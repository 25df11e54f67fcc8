/**
 * The fake Bedrock Runtime for benchmarks/bedrock-overhead.ts, in its own
 * process so its CPU is not charged to the clients being measured. It speaks
 * HTTP/2 over cleartext, as the AWS SDK's default handler does against an
 * http:// endpoint: POST /model/{id}/converse answers a fixed Converse
 * response; POST /model/{id}/converse-stream answers EVENTS event-stream frames
 * (messageStart, text deltas, messageStop, metadata) encoded once at startup and
 * written in one go, so what is left is the client's own per-event cost.
 *
 *   node --import tsx benchmarks/bedrock-upstream.ts <events>   # prints "listening on http://…"
 */
import { createServer } from "node:http2";
import type { AddressInfo } from "node:net";
import { EventStreamCodec } from "@smithy/eventstream-codec";

const EVENTS = Number(process.argv[2] ?? 200);
const converse = JSON.stringify({
  output: { message: { role: "assistant", content: [{ text: "The capital of France is Paris." }] } },
  stopReason: "end_turn",
  usage: { inputTokens: 24, outputTokens: 8, totalTokens: 1056, cacheReadInputTokens: 1024 },
  metrics: { latencyMs: 300 },
});
const codec = new EventStreamCodec(
  (b) => new TextDecoder().decode(b),
  (s) => new TextEncoder().encode(s),
);
const frame = (member: string, payload: unknown) =>
  codec.encode({
    headers: {
      ":message-type": { type: "string", value: "event" },
      ":event-type": { type: "string", value: member },
      ":content-type": { type: "string", value: "application/json" },
    },
    body: new TextEncoder().encode(JSON.stringify(payload)),
  });
const words = ["Par", "is", " is", " the", " capital", " of", " France", "."];
const frames: Uint8Array[] = [frame("messageStart", { role: "assistant" })];
for (let i = 0; i < EVENTS - 3; i++)
  frames.push(frame("contentBlockDelta", { delta: { text: words[i % words.length] }, contentBlockIndex: 0 }));
frames.push(frame("messageStop", { stopReason: "end_turn" }));
frames.push(frame("metadata", { usage: { inputTokens: 24, outputTokens: EVENTS, totalTokens: 24 + EVENTS }, metrics: { latencyMs: 200 } }));
const stream = Buffer.concat(frames);

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    if (req.url.endsWith("/converse-stream")) {
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
      res.end(stream);
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(converse);
    }
  });
});
server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
