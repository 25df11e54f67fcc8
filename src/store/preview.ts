/**
 * A turn of a conversation as a line of text: the user's last message of a
 * run's inputs, the first assistant message of its outputs. Pure; used by the
 * threads views of every store, which send these lines rather than the runs.
 */
type Obj = Record<string, unknown>;

const MAX = 2000;

function clip(s: string): string {
  return s.length > MAX ? s.slice(0, MAX) + "…" : s;
}

/** The text of one message's content: a string, or its text parts joined. */
function contentText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .map((p) =>
      typeof p === "string"
        ? p
        : typeof p === "object" && p !== null && typeof (p as Obj).text === "string"
          ? ((p as Obj).text as string)
          : "",
    )
    .filter(Boolean);
  return texts.length ? texts.join("\n") : undefined;
}

function messagesOf(v: unknown): Obj[] | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const m = (v as Obj).messages;
  if (Array.isArray(m)) return m.filter((x): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x));
  return undefined;
}

/** A run value without messages: a lone string field (`{input}`, `{output}`, `{question}`), else its JSON. */
function plain(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === "string") return v;
  if (typeof v === "object" && !Array.isArray(v)) {
    const vals = Object.values(v as Obj);
    if (vals.length === 1 && typeof vals[0] === "string") return vals[0];
  }
  return JSON.stringify(v);
}

const USER = new Set(["user", "human"]);

/** What the user said in this turn. */
export function userText(inputs: unknown, native?: unknown): string | undefined {
  const msgs = messagesOf(native) ?? messagesOf(inputs);
  if (msgs) {
    for (let i = msgs.length - 1; i >= 0; i--) {
      const m = msgs[i]!;
      if (USER.has(String(m.role ?? m.type ?? ""))) {
        const t = contentText(m.content);
        if (t !== undefined) return clip(t);
      }
    }
  }
  const p = plain(inputs);
  return p === undefined ? undefined : clip(p);
}

/** What the assistant answered in this turn. */
export function assistantText(outputs: unknown, native?: unknown): string | undefined {
  const msgs = messagesOf(native) ?? messagesOf(outputs);
  if (msgs) {
    for (const m of msgs) {
      const t = contentText(m.content);
      if (t !== undefined) return clip(t);
    }
  }
  const choices = typeof outputs === "object" && outputs !== null ? (outputs as Obj).choices : undefined;
  if (Array.isArray(choices) && typeof choices[0] === "object" && choices[0] !== null) {
    const t = contentText(((choices[0] as Obj).message as Obj | undefined)?.content);
    if (t !== undefined) return clip(t);
  }
  const p = plain(outputs);
  return p === undefined ? undefined : clip(p);
}
