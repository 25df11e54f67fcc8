/** Call ids across one record's parts: synthesized where the API gave none, and each answer linked to its call. */

/**
 * Ids for calls the API gave none. The Gemini API matches a `functionResponse`
 * to its `functionCall` by name (ids are optional and often absent), so a call
 * without an id gets a deterministic one, derived from its position, and each
 * later response without an id takes the oldest unanswered call of its name.
 * Code execution results answer the latest unanswered `executableCode`, and
 * server `toolResponse`s the latest unanswered `toolCall`, the same way.
 */
export class CallIds {
  // Made at first use: most part lists (every candidate, most system instructions) hold no call at all.
  private byName?: Map<string, string[]>;
  private readonly code: string[] = [];
  private readonly server: string[] = [];

  /** `prefix` keeps ids of different records' parts apart: `3_1` is part 1 of content 3, `c0_2` part 2 of candidate 0. */
  constructor(private readonly prefix = "") {}

  /** `turn` < 0 for a part list without turns (a candidate, the system instruction): the id names the part alone. */
  synth(kind: string, turn: number, pos: number): string {
    return turn < 0 ? `gemini_${kind}_${this.prefix}${pos}` : `gemini_${kind}_${this.prefix}${turn}_${pos}`;
  }

  callMade(name: string, id: string): void {
    const byName = (this.byName ??= new Map());
    const q = byName.get(name);
    if (q) q.push(id);
    else byName.set(name, [id]);
  }

  /** The call a response answers: its own id when given (and that call is no longer pending), else the oldest pending call of that name. */
  answer(name: string, id: string | undefined): string | undefined {
    const q = this.byName?.get(name);
    if (id !== undefined) {
      const at = q ? q.indexOf(id) : -1;
      if (at >= 0) q!.splice(at, 1);
      return id;
    }
    return q?.shift();
  }

  codeMade(id: string): void {
    this.code.push(id);
  }

  codeAnswered(id: string | undefined): string | undefined {
    return answerLatest(this.code, id);
  }

  serverMade(id: string): void {
    this.server.push(id);
  }

  serverAnswered(id: string | undefined): string | undefined {
    return answerLatest(this.server, id);
  }
}

function answerLatest(list: string[], id: string | undefined): string | undefined {
  if (id !== undefined) {
    const at = list.indexOf(id);
    if (at >= 0) list.splice(at, 1);
    return id;
  }
  return list.pop();
}
