/**
 * A multipart part busboy reads as a file (it has a filename, as FormData
 * Blobs do): its bytes gathered as busboy hands them over (readFilePart), kept
 * as bytes (an attachment) or turned into text (a JSON part) by FilePart.
 */
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/** A JSON part sent as a file up to this size is decoded once, whole; past it, as it is read. */
const DECODE_AS_READ_BYTES = 1 << 20;

/**
 * Takes a file part's bytes where busboy hands them to the part's stream:
 * busboy gives the stream each chunk with push(chunk) and ends it with
 * push(null). Taken there, synchronously, a part costs none of what reading a
 * stream costs (its buffer, a turn to start flowing, a turn to end, the events
 * of its end), which for a request of many small parts is much of its parsing.
 * busboy counts a part done on the stream's 'end' event (it closes only after
 * every part's), so that event is still emitted, once `end` has taken the part.
 * Nothing is held back: busboy is never told to wait.
 */
export function readFilePart(stream: Readable, chunk: (c: Buffer) => void, end: () => void): void {
  stream.push = (c: Buffer | null): boolean => {
    if (c === null) {
      end();
      stream.emit("end");
      return false;
    }
    chunk(c);
    return true;
  };
}

/**
 * A part busboy read as a file (it has a filename, as FormData Blobs do). An
 * attachment stays bytes. A JSON part becomes text: a small one is decoded
 * once when it ends; one past DECODE_AS_READ_BYTES is decoded chunk by chunk
 * from then on, so its bytes are not held beside its text.
 */
export class FilePart {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private decoder: StringDecoder | undefined;
  private texts: string[] = [];

  constructor(private readonly json: boolean) {}

  add(c: Buffer): void {
    if (this.decoder) {
      this.texts.push(this.decoder.write(c));
      return;
    }
    this.chunks.push(c);
    this.bytes += c.length;
    if (this.json && this.bytes > DECODE_AS_READ_BYTES) {
      this.decoder = new StringDecoder("utf8");
      for (const held of this.chunks) this.texts.push(this.decoder.write(held));
      this.chunks = [];
    }
  }

  /** The part's text (JSON) or bytes (an attachment). */
  take(): Buffer | string {
    if (this.decoder) {
      this.texts.push(this.decoder.end());
      const text = this.texts.length === 1 ? this.texts[0]! : this.texts.join("");
      this.texts = [];
      return text;
    }
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.bytes);
    this.chunks = [];
    return this.json ? bytes.toString("utf8") : bytes;
  }
}
