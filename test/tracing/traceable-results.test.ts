/**
 * traceable() hands the caller what the function returned, not a stand-in: a promise, an
 * OpenAI APIPromise (withResponse / asResponse), a lazy thenable, and a generator the caller
 * talks back to (throw) behave as they do untraced, and the run still ends once.
 */
import { describe, expect, it } from "vitest";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import OpenAI from "openai";
import { traceable, wrapOpenAI } from "../../src/tracing/index.js";
import { setDefaultClient } from "../../src/ingest/default.js";
import { MemoryWriter } from "../../src/run/memory.js";
import { fixture } from "../helpers/replay-server.js";
import { useWrapperReplay } from "../helpers/wrapper-replay.js";

const vendor = useWrapperReplay();
const openai = () => new OpenAI({ apiKey: "sk-test", baseURL: `${vendor.server.url}/v1`, maxRetries: 0 });
const ask = { model: "gpt-4o", messages: [{ role: "user" as const, content: "Weather in Paris?" }] };

function onlyRun(w: MemoryWriter) {
  const runs = w.list();
  expect(runs).toHaveLength(1);
  return runs[0]! as Record<string, any>;
}

describe("traceable() returning a promise or thenable", () => {
  it("leaves a rejected promise the caller ignores reported as unhandled, as untraced", async () => {
    const w = new MemoryWriter();
    const boom = new Error("ignored");
    const seen: unknown[] = [];
    const onUnhandled = (reason: unknown) => seen.push(reason);
    process.prependListener("unhandledRejection", onUnhandled);
    try {
      void traceable(async () => Promise.reject(boom), { client: w })();
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    expect(seen).toContain(boom);
    expect(onlyRun(w).error).toBe("Error: ignored");
  });

  it("keeps an APIPromise's withResponse() and records the parsed reply", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") });
    const client = openai();
    const chat = traceable(() => client.chat.completions.create(ask), { name: "chat", client: vendor.writer });
    const { data, response } = await chat().withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0]!.message.content).toBe("Paris is 18°C and rainy.");
    const run = onlyRun(vendor.writer);
    expect(run.name).toBe("chat");
    expect(run.outputs.choices[0].message.content).toBe("Paris is 18°C and rainy.");
    expect(run.end_time >= run.start_time).toBe(true);
  });

  it("keeps withResponse() of a wrapped client's call, ending the chain run and the llm run under it once each", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") });
    const client = wrapOpenAI(openai(), { client: vendor.writer });
    const chat = traceable(() => client.chat.completions.create(ask), { name: "chat", client: vendor.writer });
    const { data } = await chat().withResponse();
    expect(data.choices[0]!.message.content).toBe("Paris is 18°C and rainy.");
    const runs = vendor.writer.list() as Record<string, any>[];
    expect(runs.map((r) => r.name).sort()).toEqual(["ChatOpenAI", "chat"]);
    const [llm, chain] = [runs.find((r) => r.run_type === "llm")!, runs.find((r) => r.name === "chat")!];
    expect(llm.parent_run_id).toBe(chain.id);
    expect(llm.outputs.messages[0].content[0].text).toBe("Paris is 18°C and rainy.");
    expect(chain.outputs.choices[0].message.content).toBe("Paris is 18°C and rainy.");
    const ends = vendor.writer.calls.filter((c) => (c.kind === "create" ? c.run.end_time : (c.patch as { end_time?: string }).end_time));
    expect(ends).toHaveLength(2);
  });

  it("leaves the raw Response of asResponse() unread and still ends the run", async () => {
    vendor.server.push({ json: fixture("openai-completion.json") });
    const client = openai();
    const raw = await traceable(() => client.chat.completions.create(ask), { client: vendor.writer })().asResponse();
    expect(raw.bodyUsed).toBe(false);
    expect(((await raw.json()) as { model: string }).model).toBe("gpt-4o-2024-08-06");
    await new Promise((r) => setImmediate(r));
    const run = onlyRun(vendor.writer);
    expect(run.end_time).toBeDefined();
    expect(run.error).toBeUndefined();
    expect(run.extra.metadata.unparsed_response).toMatchObject({ status: 200 });
  });

  it("runs a lazy thenable only when, and as often as, the caller awaits it", async () => {
    const w = new MemoryWriter();
    let runs = 0;
    // A query builder's shape: nothing happens until then() is called, and each then() runs it.
    const query = () => ({
      then(onValue: (v: unknown) => unknown, onError?: (e: unknown) => unknown) {
        runs++;
        return Promise.resolve({ rows: runs }).then(onValue, onError);
      },
    });
    const traced = traceable(query, { client: w })();
    await new Promise((r) => setTimeout(r, 5));
    expect(runs).toBe(0);
    expect(w.list()[0]!.end_time).toBeUndefined();
    expect(await traced).toEqual({ rows: 1 });
    expect(runs).toBe(1);
    expect(onlyRun(w)).toMatchObject({ outputs: { rows: 1 } });
  });

  it("records a rejected thenable and rethrows its error", async () => {
    const w = new MemoryWriter();
    const boom = new TypeError("no rows");
    const thenable = { then: (_ok: unknown, fail: (e: unknown) => void) => fail(boom) };
    await expect(traceable(() => thenable, { client: w })()).rejects.toBe(boom);
    expect(onlyRun(w).error).toBe("TypeError: no rows");
  });
});

describe("traceable() generators the caller talks back to", () => {
  it("hands an error thrown into an async generator to the traced one, which may recover", async () => {
    const w = new MemoryWriter();
    const closed: string[] = [];
    const make = async function* () {
      try {
        yield 1;
        yield 2;
      } catch (err) {
        yield `recovered from ${(err as Error).message}`;
      } finally {
        closed.push("inner");
      }
    };
    const bare = make();
    await bare.next();
    const bareAfter = await bare.throw(new Error("x"));
    const traced = traceable(make, { client: w })();
    await traced.next();
    expect(await traced.throw(new Error("x"))).toEqual(bareAfter);
    expect(await traced.next()).toEqual({ done: true, value: undefined });
    expect(closed).toEqual(["inner"]);
    expect(onlyRun(w)).toMatchObject({ outputs: { output: [1, "recovered from x"] } });
    expect(onlyRun(w).error).toBeUndefined();
  });

  it("lets an async generator that does not catch a thrown error run its finally, and records the error", async () => {
    const w = new MemoryWriter();
    let cleaned = false;
    const traced = traceable(
      async function* () {
        try {
          yield 1;
          yield 2;
        } finally {
          cleaned = true;
        }
      },
      { client: w },
    )();
    await traced.next();
    const boom = new RangeError("stop");
    await expect(traced.throw(boom)).rejects.toBe(boom);
    expect(cleaned).toBe(true);
    expect(onlyRun(w)).toMatchObject({ error: "RangeError: stop", outputs: { output: [1] } });
  });

  it("hands an error thrown into a generator to the traced one", () => {
    const w = new MemoryWriter();
    let cleaned = false;
    const traced = traceable(
      function* () {
        try {
          yield 1;
        } catch {
          yield "caught";
        } finally {
          cleaned = true;
        }
      },
      { client: w },
    )();
    traced.next();
    expect(traced.throw(new Error("x"))).toEqual({ value: "caught", done: false });
    expect(traced.next()).toEqual({ value: undefined, done: true });
    expect(cleaned).toBe(true);
    expect(onlyRun(w)).toMatchObject({ outputs: { output: [1, "caught"] } });
  });

  it("closes an iterator without throw() when the caller throws into it", async () => {
    const w = new MemoryWriter();
    let returned = 0;
    const iterator = {
      i: 0,
      next() {
        return Promise.resolve({ value: this.i++, done: false });
      },
      return() {
        returned++;
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    // What traceable hands back for an async iterator is an async generator of its own.
    const traced = traceable(() => iterator, { client: w })() as unknown as AsyncGenerator<number>;
    await traced.next();
    const boom = new Error("enough");
    await expect(traced.throw(boom)).rejects.toBe(boom);
    expect(returned).toBe(1);
    expect(onlyRun(w).error).toBe("Error: enough");
  });
});

describe("traceable() never throws into the host", () => {
  const revoked = () => {
    const r = Proxy.revocable({}, {});
    r.revoke();
    return r.proxy;
  };
  /** A "strict" object: reading a member it does not have throws (as some config and ORM proxies do). */
  const strict = () =>
    new Proxy({ id: 7 } as Record<string | symbol, unknown>, {
      get(t, k) {
        if (!(k in t)) throw new TypeError(`no member ${String(k)}`);
        return t[k];
      },
    });
  const hostile: [string, () => unknown][] = [
    ["a revoked proxy", revoked],
    [
      "a proxy whose getPrototypeOf throws",
      () =>
        new Proxy(
          {},
          {
            getPrototypeOf: () => {
              throw new Error("proto");
            },
          },
        ),
    ],
    [
      "a proxy whose has() throws",
      () =>
        new Proxy(
          {},
          {
            has: () => {
              throw new Error("has");
            },
          },
        ),
    ],
    ["a strict proxy", strict],
    [
      "an object whose then getter throws",
      () => ({
        get then() {
          throw new Error("then");
        },
      }),
    ],
    [
      "an object whose next getter throws",
      () => ({
        get next() {
          throw new Error("next");
        },
      }),
    ],
  ];

  it.each(hostile)("calls the function with %s as its argument, and returns its result", (_name, make) => {
    const w = new MemoryWriter();
    const arg = make();
    expect(traceable((x: unknown) => x === arg, { client: w })(arg)).toBe(true);
    const run = onlyRun(w);
    expect(run.end_time).toBeDefined();
    expect(run.inputs.error ?? "").toMatch(/^(could not read the inputs|$)/);
  });

  it.each(hostile)("returns %s as the function returned it, and ends the run", (_name, make) => {
    const w = new MemoryWriter();
    const value = make();
    expect(traceable(() => value, { client: w })()).toBe(value);
    expect(onlyRun(w).end_time).toBeDefined();
  });

  it("goes on untraced, warning once, when the default client cannot be made from the environment", () => {
    const saved = process.env.TRACEPIPE_SAMPLING_RATE;
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.env.TRACEPIPE_SAMPLING_RATE = "often";
    setDefaultClient(undefined);
    process.on("warning", onWarning);
    try {
      const add = traceable((a: number, b: number) => a + b);
      expect(add(2, 3)).toBe(5);
      expect(add(4, 5)).toBe(9);
    } finally {
      if (saved === undefined) delete process.env.TRACEPIPE_SAMPLING_RATE;
      else process.env.TRACEPIPE_SAMPLING_RATE = saved;
      setDefaultClient(undefined);
    }
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        process.off("warning", onWarning);
        expect(warnings.filter((m) => m.includes("TRACEPIPE_SAMPLING_RATE"))).toHaveLength(1);
        resolve();
      }),
    );
  });
});

describe("traceable() generators that yield without end", () => {
  it("do not keep what they yielded past the run's size budget: later values are counted and let go", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const w = new MemoryWriter();
    const watched: WeakRef<object>[] = [];
    // 200 pieces of 256 KiB: 50 MiB in all, past the 16 MiB a run keeps.
    const feed = traceable(
      async function* () {
        for (let i = 0; i < 200; i++) {
          const piece = { i, data: String.fromCharCode(97 + (i % 26)).repeat(256 * 1024) };
          if (i >= 100 && i % 20 === 0) watched.push(new WeakRef(piece));
          yield piece;
        }
      },
      { client: w },
    );
    let n = 0;
    let heldWhileRunning = -1;
    for await (const piece of feed()) {
      n++;
      // The host changes what it was handed: the run keeps what was yielded.
      if (piece.i === 0) piece.data = "changed";
      if (piece.i === 199) {
        // The generator has not finished: what it yielded before and the host let go of must be collectable now.
        await new Promise((r) => setImmediate(r));
        gc();
        heldWhileRunning = watched.filter((r) => r.deref() !== undefined).length;
      }
    }
    expect(n).toBe(200);
    expect(watched).toHaveLength(5);
    expect(heldWhileRunning).toBe(0);
    const output = onlyRun(w).outputs.output as unknown[];
    const kept = output.filter((x) => typeof x === "object");
    expect(kept.length).toBeGreaterThan(50);
    expect(kept.length).toBeLessThan(70);
    expect((kept[0] as { data: string }).data).toBe("a".repeat(256 * 1024));
    expect(output.at(-1)).toBe(`[Truncated ${200 - output.length + 1} more items]`);
    expect(JSON.stringify(output).length).toBeLessThan(17 * 1024 * 1024);
  });

  it("keep a synchronous generator's values and what it returned, as before, when they fit", () => {
    const w = new MemoryWriter();
    const gen = traceable(
      function* () {
        yield { a: 1 };
        yield [2, 3];
        return "done";
      },
      { client: w },
    )();
    expect([...gen]).toEqual([{ a: 1 }, [2, 3]]);
    expect(onlyRun(w).outputs).toEqual({ output: [{ a: 1 }, [2, 3]], return: "done" });
  });
});
