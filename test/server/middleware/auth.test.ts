import { afterEach, describe, expect, it } from "vitest";
import { apiKeyAuth, secretMatches } from "../../../src/server/middleware/auth.js";
import { errors } from "../../../src/server/middleware/errors.js";
import { serveChain, type Served } from "../../helpers/middleware.js";

let served: Served | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

describe("API-key auth", () => {
  it("answers 401 without the key or with a wrong one, naming which, and lets the right key through", async () => {
    served = await serveChain([errors({ maxListedIssues: 100 }), apiKeyAuth({ apiKey: "k1" })]);
    const missing = await fetch(`${served.url}/runs`);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ detail: "missing X-Api-Key header" });
    const wrong = await fetch(`${served.url}/runs`, { headers: { "x-api-key": "k2" } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ detail: "invalid API key" });
    expect((await fetch(`${served.url}/runs`, { headers: { "x-api-key": "k1" } })).status).toBe(200);
  });

  it("lets exempt requests and every request without a configured key through", async () => {
    served = await serveChain([
      errors({ maxListedIssues: 100 }),
      apiKeyAuth({ apiKey: "k1", exempt: (method, path) => method === "GET" && path === "/" }),
    ]);
    expect((await fetch(`${served.url}/`)).status).toBe(200);
    expect((await fetch(`${served.url}/`, { method: "POST" })).status).toBe(401);
    await served.close();
    served = await serveChain([errors({ maxListedIssues: 100 }), apiKeyAuth({ apiKey: undefined })]);
    expect((await fetch(`${served.url}/runs`)).status).toBe(200);
  });

  it("compares secrets of any length without throwing", () => {
    expect(secretMatches("abc", "abc")).toBe(true);
    expect(secretMatches("abc", "abcd")).toBe(false);
    expect(secretMatches(undefined, "abc")).toBe(false);
  });
});
