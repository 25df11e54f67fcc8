// Registered by probe-loads.mjs through module.register(): writes down every URL
// the ESM loader resolves, one a line, so the parent can see what an import pulled in.
import { appendFileSync } from "node:fs";

let out = "";

export async function initialize(data) {
  out = data.out;
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(out, result.url + "\n");
  return result;
}
