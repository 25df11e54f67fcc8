import { expect } from "vitest";
import { validate } from "../../src/format/validate.js";

/** Every adapter output must be valid native messages (lenient mode: extras allowed). */
export function expectValidNative(messages: unknown): void {
  expect(validate(messages)).toEqual([]);
}
