import { afterEach, describe, expect, it } from "vitest";
import { Router } from "../../../src/server/router.js";
import { dispatch } from "../../../src/server/middleware/context.js";
import { errors } from "../../../src/server/middleware/errors.js";
import { bodyAdmission, LargeBodySlots } from "../../../src/server/middleware/body-admission.js";
import { refuseWhileClosing } from "../../../src/server/middleware/shutdown.js";
import { serveChain, type Served } from "../../helpers/middleware.js";

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

const router = new Router().add([
  {
    method: "POST",
    path: "/echo/:name",
    handler: async (ctx) => ({ status: 200, body: { name: ctx.params.name, q: ctx.query.get("q"), value: await ctx.json() } }),
  },
]);
const chain = (maxJsonDepth = 16) =>
  serveChain(
    [
      errors({ maxListedIssues: 100 }),
      bodyAdmission({ slots: new LargeBodySlots(1), maxBodyBytes: 1024, largeBodyBytes: 512, idleSocketMs: 5000 }),
    ],
    dispatch(router, { maxJsonDepth }),
  );

describe("request context and dispatch", () => {
  it("gives the handler its path params, query and parsed body", async () => {
    served = await chain();
    const r = await fetch(`${served.url}/echo/a%20b?q=1`, { method: "POST", body: JSON.stringify({ x: [1] }) });
    expect(await r.json()).toEqual({ name: "a b", q: "1", value: { x: [1] } });
  });

  it("answers 404 for an unknown path and 405 with Allow for a wrong method", async () => {
    served = await chain();
    expect((await fetch(`${served.url}/nothing`)).status).toBe(404);
    const wrong = await fetch(`${served.url}/echo/x`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
  });

  it("answers malformed JSON with 400, JSON past the depth bound with 422 and a loc, and a body past the limit with 413", async () => {
    served = await chain(2);
    expect((await fetch(`${served.url}/echo/x`, { method: "POST", body: "{" })).status).toBe(400);
    const deep = await fetch(`${served.url}/echo/x`, { method: "POST", body: JSON.stringify({ a: { b: {} } }) });
    expect(deep.status).toBe(422);
    expect(((await deep.json()) as { detail: { loc: unknown[] }[] }).detail[0]!.loc).toEqual(["a", "b"]);
    expect((await fetch(`${served.url}/echo/x`, { method: "POST", body: JSON.stringify({ s: "x".repeat(2000) }) })).status).toBe(413);
  });
});

describe("shutdown", () => {
  it("answers 503 with Retry-After once the collector is closing", async () => {
    let closing = false;
    served = await serveChain([errors({ maxListedIssues: 100 }), refuseWhileClosing(() => closing)]);
    expect((await fetch(served.url)).status).toBe(200);
    closing = true;
    const r = await fetch(served.url);
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("1");
  });
});
