/**
 * OpenAI audio replies (DESIGN "Audio and other media the vendor returns as bytes"):
 * `message.audio = {id, data, expires_at, transcript}` -> an audio block with
 * `base64` (the id expires, so it is not the source; it goes to extras), and the
 * transcript as a text block after it. History messages that refer to earlier
 * audio by `{id}` alone keep `id` as the source.
 */
import type { ContentBlock } from "../../src/format/schema.js";
import { isObj, type Obj } from "../common/guards.js";
import { audioMime } from "./parts.js";
import { sniffMime } from "../common/mime.js";

/** The request's `audio.format`, when the request asked for audio output. */
export function requestAudioFormat(request: unknown): string | undefined {
  return isObj(request) && isObj(request.audio) && typeof request.audio.format === "string" ? request.audio.format : undefined;
}

/** The request's format names the MIME type; without the request, the bytes' header does. */
export function audioMimeFor(base64: string, format: string | undefined): string {
  return format ? audioMime(format) : sniffMime(base64);
}

export interface AudioReply {
  id?: string;
  data?: string;
  transcript?: string;
  rest: Obj;
}

export function audioBlocks(a: AudioReply, format: string | undefined): ContentBlock[] {
  const extras: Obj = { ...a.rest };
  let block: ContentBlock;
  if (a.data !== undefined) {
    if (a.id !== undefined) extras.id = a.id;
    block = { type: "audio", base64: a.data, mime_type: audioMimeFor(a.data, format) };
  } else if (a.id !== undefined) {
    block = { type: "audio", id: a.id };
  } else {
    return a.transcript !== undefined ? [{ type: "text", text: a.transcript, extras: { audio_transcript: true, ...extras } }] : [];
  }
  if (Object.keys(extras).length) block.extras = extras;
  const out: ContentBlock[] = [block];
  if (a.transcript !== undefined) out.push({ type: "text", text: a.transcript, extras: { audio_transcript: true } });
  return out;
}
