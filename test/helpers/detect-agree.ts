/**
 * Detection with the fast paths must answer as asking every adapter does:
 * the tests that hold a fast path to that compare both answers as text.
 */
import { expect } from "vitest";
import { detectFormat, detectFormatFully } from "../../src/normalize.js";
import { NormalizeError } from "../../src/errors.js";

/** A detection's answer as comparable text: the format, or the typed error's issues. */
export function outcome(detect: (p: unknown) => string, p: unknown): string {
  try {
    return `format ${detect(p)}`;
  } catch (err) {
    if (err instanceof NormalizeError) return `error ${JSON.stringify(err.issues)}`;
    throw err;
  }
}

/** Asserts that detection with the fast paths answers as full detection does; returns that answer. */
export function agree(p: unknown): string {
  const full = outcome(detectFormatFully, p);
  expect(outcome(detectFormat, p)).toBe(full);
  return full;
}
