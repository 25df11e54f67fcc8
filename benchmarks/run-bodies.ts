/**
 * The multipart bodies the collector benchmarks send: BATCH runs (~2 KB each)
 * with fresh ids. A body is encoded once as a template, and each request gets
 * a copy with new UUIDs written over the template's, so each run is a first
 * insert and making a body costs a copy, not an encoding. Ids are random (v4,
 * and one start time: each insert into an index keyed by id or trace id lands
 * on a random page, the store's worst case) unless
 * time-ordered: then ids are UUIDv7 (what tracepipe's Client and recent
 * langsmith SDKs send) and start/end times are the body's own, so runs arrive
 * in time order as they do from live clients.
 */
import { randomUUID } from "node:crypto";
import { uuidv7 } from "../src/run/ids.js";

export interface RunBodies {
  /** The bodies' content-type (multipart, with its boundary). */
  contentType: string;
  /** Every body's length in bytes (fresh ids and times have the template's). */
  length: number;
  /** A new body: the template with fresh ids (and, time-ordered, the current time). */
  fresh(): Buffer;
}

/** Every place `needle` stands in `b`. */
function placesOf(b: Buffer, needle: string): number[] {
  const at: number[] = [];
  for (let i = b.indexOf(needle); i >= 0; i = b.indexOf(needle, i + 1)) at.push(i);
  return at;
}

export async function runBodies(batch: number, timeOrdered: boolean): Promise<RunBodies> {
  const filler = "lorem ipsum dolor sit amet ".repeat(60).slice(0, 800);
  const templateIds = Array.from({ length: batch }, () => randomUUID());
  const fd = new FormData();
  const now = new Date().toISOString().replace("Z", "000Z");
  for (const id of templateIds) {
    fd.append(
      `post.${id}`,
      new Blob(
        [
          JSON.stringify({
            id,
            trace_id: id,
            dotted_order: `20261122T000000000000Z${id}`,
            name: "bench",
            run_type: "chain",
            start_time: now,
            end_time: now,
            session_name: "bench",
          }),
        ],
        { type: "application/json" },
      ),
    );
    fd.append(`post.${id}.inputs`, new Blob([JSON.stringify({ text: filler })], { type: "application/json" }));
    fd.append(`post.${id}.outputs`, new Blob([JSON.stringify({ text: filler })], { type: "application/json" }));
  }
  const req = new Request("http://x", { method: "POST", body: fd });
  const template = Buffer.from(await req.arrayBuffer());
  // Where each template id sits (part names, id, trace_id, dotted_order), and the start and end times.
  const idPlaces = templateIds.map((id) => placesOf(template, id));
  const timePlaces = placesOf(template, now);
  return {
    contentType: req.headers.get("content-type")!,
    length: template.length,
    fresh() {
      const b = Buffer.from(template);
      for (const at of idPlaces) {
        const id = timeOrdered ? uuidv7() : randomUUID();
        for (const i of at) b.write(id, i, "latin1");
      }
      if (timeOrdered) {
        const t = new Date().toISOString().replace("Z", "000Z");
        for (const i of timePlaces) b.write(t, i, "latin1");
      }
      return b;
    },
  };
}
