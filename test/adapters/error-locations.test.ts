/**
 * The Gemini and OpenAI chat adapters build an error's location only when they
 * throw (the success path carries a parent location and a key, not a path per
 * part). These cases pin the full path for each shape that takes a different
 * road to it: parts of a Content, loose parts, a lone part, candidate parts,
 * function-call fields, a function response's own parts, the system
 * instruction; and in OpenAI chat, tool calls of a request message and of a
 * reply, custom tool calls, refusals, array content.
 */
import { describe, expect, it } from "vitest";
import { normalize } from "../../src/normalize.js";
import { NormalizeError } from "../../src/errors.js";

function issueOf(payload: unknown, format: string): { loc: (string | number)[]; type: string } {
  try {
    normalize(payload, { format });
  } catch (e) {
    expect(e).toBeInstanceOf(NormalizeError);
    return (e as NormalizeError).issues[0]!;
  }
  throw new Error("expected a NormalizeError");
}

const ok = { text: "fine" };

describe("gemini error locations", () => {
  const cases: [string, unknown, (string | number)[], string][] = [
    [
      "a part of the third Content",
      {
        contents: [
          { role: "user", parts: [ok] },
          { role: "model", parts: [ok] },
          { role: "user", parts: [ok, 7] },
        ],
      },
      ["contents", 2, "parts", 1],
      "object_type",
    ],
    [
      "a text part's text",
      { contents: [{ role: "user", parts: [ok, ok, { text: 3 }] }] },
      ["contents", 0, "parts", 2, "text"],
      "string_type",
    ],
    [
      "a loose part after a Content (the SDK's grouping keeps each part's own index)",
      { model: "gemini-2.5-flash", contents: [{ role: "user", parts: [ok] }, ok, { inlineData: { data: 1 } }] },
      ["contents", 2, "inlineData", "data"],
      "string_type",
    ],
    [
      "a lone part as contents",
      { model: "gemini-2.5-flash", contents: { fileData: { fileUri: 5 } } },
      ["contents", "fileData", "fileUri"],
      "string_type",
    ],
    [
      "a lone Content as contents",
      { model: "gemini-2.5-flash", contents: { role: "user", parts: [ok, { functionCall: { name: 1 } }] } },
      ["contents", "parts", 1, "functionCall", "name"],
      "string_type",
    ],
    [
      "a functionCall that is not an object",
      { contents: [{ role: "model", parts: [{ functionCall: "x" }] }] },
      ["contents", 0, "parts", 0, "functionCall"],
      "object_type",
    ],
    [
      "a functionCall id",
      { contents: [{ role: "model", parts: [ok, { functionCall: { name: "f", id: 9 } }] }] },
      ["contents", 0, "parts", 1, "functionCall", "id"],
      "string_type",
    ],
    [
      "a functionResponse name",
      { contents: [{ role: "user", parts: [{ functionResponse: { name: 2 } }] }] },
      ["contents", 0, "parts", 0, "functionResponse", "name"],
      "string_type",
    ],
    [
      "a functionResponse's own part",
      {
        contents: [
          {
            role: "user",
            parts: [{ functionResponse: { name: "f", response: {}, parts: [{ inlineData: { mimeType: "image/png", data: 1 } }] } }],
          },
        ],
      },
      ["contents", 0, "parts", 0, "functionResponse", "parts", 0, "inlineData", "data"],
      "string_type",
    ],
    [
      "a toolResponse id",
      { contents: [{ role: "model", parts: [{ toolResponse: { id: 4 } }] }] },
      ["contents", 0, "parts", 0, "toolResponse", "id"],
      "string_type",
    ],
    [
      "an inlineData mimeType",
      { contents: [{ role: "user", parts: [{ inlineData: { data: "AAAA", mimeType: 3 } }] }] },
      ["contents", 0, "parts", 0, "inlineData", "mimeType"],
      "string_type",
    ],
    [
      "a system instruction part",
      { contents: "hi", systemInstruction: { parts: [ok, { text: [] }] } },
      ["systemInstruction", "parts", 1, "text"],
      "string_type",
    ],
    [
      "a system instruction in the SDK's config",
      { model: "gemini-2.5-flash", contents: "hi", config: { systemInstruction: [ok, 1] } },
      ["config", "systemInstruction", 1],
      "object_type",
    ],
    [
      "a candidate's part",
      {
        response: {
          candidates: [
            { content: { role: "model", parts: [ok] } },
            { content: { role: "model", parts: [ok, { executableCode: { id: 1 } }] } },
          ],
        },
      },
      ["response", "candidates", 1, "content", "parts", 1, "executableCode", "id"],
      "string_type",
    ],
    [
      "a candidate's parts list",
      { response: { candidates: [{ content: { parts: {} } }] } },
      ["response", "candidates", 0, "content", "parts"],
      "list_type",
    ],
  ];
  for (const [name, payload, loc, type] of cases) {
    it(name, () => expect(issueOf(payload, "gemini")).toEqual(expect.objectContaining({ loc, type })));
  }
});

describe("openai-chat error locations", () => {
  const call = (id: string) => ({ id, type: "function", function: { name: "f", arguments: "{}" } });
  const cases: [string, unknown, (string | number)[], string][] = [
    [
      "a request message's tool call",
      {
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: null, tool_calls: [call("a"), 3] },
        ],
      },
      ["messages", 1, "tool_calls", 1],
      "object_type",
    ],
    [
      "a tool call's function name",
      {
        messages: [
          {
            role: "assistant",
            content: null,
            tool_calls: [call("a"), { id: "b", type: "function", function: { name: 1, arguments: "{}" } }],
          },
        ],
      },
      ["messages", 0, "tool_calls", 1, "function", "name"],
      "string_type",
    ],
    [
      "a custom tool call's name",
      { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "custom", custom: { name: [], input: "x" } }] }] },
      ["messages", 0, "tool_calls", 0, "custom", "name"],
      "string_type",
    ],
    [
      "a tool call of another type",
      { messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c", type: "mcp" }] }] },
      ["messages", 0, "tool_calls", 0, "type"],
      "unsupported_tool_call",
    ],
    [
      "tool_calls that are not a list",
      { messages: [{ role: "assistant", content: null, tool_calls: {} }] },
      ["messages", 0, "tool_calls"],
      "list_type",
    ],
    [
      "a refusal that is not text",
      {
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: null, refusal: 5 },
        ],
      },
      ["messages", 1, "refusal"],
      "string_type",
    ],
    [
      "an assistant's array content part",
      { messages: [{ role: "assistant", content: [{ type: "text", text: 1 }] }] },
      ["messages", 0, "content", 0, "text"],
      "string_type",
    ],
    [
      "a reply's tool call",
      {
        response: {
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: null, tool_calls: [call("a"), { id: "b", type: "function", function: 2 }] },
            },
          ],
        },
      },
      ["response", "choices", 0, "message", "tool_calls", 1, "function"],
      "object_type",
    ],
    [
      "a bare reply's tool call id",
      {
        response: { role: "assistant", content: null, tool_calls: [{ id: 7, type: "function", function: { name: "f", arguments: "{}" } }] },
      },
      ["response", "tool_calls", 0, "id"],
      "string_type",
    ],
  ];
  for (const [name, payload, loc, type] of cases) {
    it(name, () => expect(issueOf(payload, "openai-chat")).toEqual(expect.objectContaining({ loc, type })));
  }
});
