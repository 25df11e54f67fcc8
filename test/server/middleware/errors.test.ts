import { afterEach, describe, expect, it } from "vitest";
import { errors } from "../../../src/server/middleware/errors.js";
import { HttpError } from "../../../src/server/http-error.js";
import type { Middleware } from "../../../src/server/middleware/compose.js";
import { serveChain, type Served } from "../../helpers/middleware.js";

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

const withHeader: Middleware = (x, next) => {
  x.replyHeaders["x-kept"] = "yes";
  return next();
};

describe("error answers", () => {
  it("puts the request's reply headers on a successful answer, under the handler's own", async () => {
    served = await serveChain([errors({ maxListedIssues: 100 }), withHeader], async () => ({
      status: 200,
      body: {},
      headers: { "x-kept": "handler" },
    }));
    expect((await fetch(served.url)).headers.get("x-kept")).toBe("handler");
  });

  it("answers an HttpError with its status, {detail}, extra fields and headers, over the request's reply headers", async () => {
    served = await serveChain([errors({ maxListedIssues: 100 }), withHeader], async () => {
      throw new HttpError(409, "taken", { "x-own": "1" }, { hint: "h" });
    });
    const r = await fetch(served.url);
    expect(r.status).toBe(409);
    expect(r.headers.get("x-own")).toBe("1");
    expect(r.headers.get("x-kept")).toBe("yes");
    expect(await r.json()).toEqual({ detail: "taken", hint: "h" });
  });

  it("lists the first problems of a 422 and counts them all", async () => {
    const issues = Array.from({ length: 5 }, (_, i) => ({ loc: ["tags", i], msg: "bad", type: "value_error" }));
    served = await serveChain([errors({ maxListedIssues: 2 })], async () => {
      throw new HttpError(422, issues);
    });
    const body = (await (await fetch(served.url)).json()) as { detail: unknown[]; issue_count: number };
    expect(body.detail.slice(0, 2)).toEqual(issues.slice(0, 2));
    expect(body.detail).toHaveLength(3); // the two listed, then one saying how many more
    expect(body.issue_count).toBe(5);
  });

  it("answers a stack overflow with 422 json_depth and anything else with a 500 that keeps the cause in the log", async () => {
    const logged: unknown[] = [];
    let overflow = true;
    served = await serveChain([errors({ maxListedIssues: 100, log: (_m, err) => logged.push(err) }), withHeader], async () => {
      if (overflow) throw new RangeError("Maximum call stack size exceeded");
      throw new Error("secret cause");
    });
    const deep = await fetch(served.url);
    expect(deep.status).toBe(422);
    expect(((await deep.json()) as { detail: { type: string }[] }).detail[0]!.type).toBe("json_depth");
    overflow = false;
    const crash = await fetch(served.url);
    expect(crash.status).toBe(500);
    expect(crash.headers.get("x-kept")).toBeNull();
    expect(JSON.stringify(await crash.json())).not.toContain("secret cause");
    expect((logged[0] as Error).message).toBe("secret cause");
  });
});
