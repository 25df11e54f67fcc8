/** Marks a vendor client or resource already traced: wrapping twice would trace every call twice. */
export const WRAPPED = Symbol.for("tracepipe.wrapped");
