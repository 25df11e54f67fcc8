import { describe, expect, it } from "vitest";
import { compose, type Exchange, type Middleware } from "../../../src/server/middleware/compose.js";

describe("compose", () => {
  it("runs the middleware in order around the last step, each able to change the answer", async () => {
    const seen: string[] = [];
    const tag =
      (name: string): Middleware =>
      async (_x, next) => {
        seen.push(`${name} in`);
        const reply = await next();
        seen.push(`${name} out`);
        return { ...reply, headers: { ...reply.headers, [name]: "1" } };
      };
    const run = compose([tag("a"), tag("b")], async () => {
      seen.push("last");
      return { status: 204 };
    });
    const reply = await run({} as Exchange);
    expect(seen).toEqual(["a in", "b in", "last", "b out", "a out"]);
    expect(reply).toEqual({ status: 204, headers: { b: "1", a: "1" } });
  });

  it("lets a middleware answer without calling the rest", async () => {
    let reached = false;
    const run = compose([async () => ({ status: 418 })], async () => {
      reached = true;
      return { status: 200 };
    });
    expect((await run({} as Exchange)).status).toBe(418);
    expect(reached).toBe(false);
  });
});
