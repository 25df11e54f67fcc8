#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm install` (the prepare script).
let cli;
try {
  cli = await import("../dist/src/cli/index.js");
} catch (err) {
  if (err && err.code === "ERR_MODULE_NOT_FOUND") {
    console.error("tracepipe: dist/ is missing; run `npm install` (or `npm run build`) first.");
    process.exit(2);
  }
  throw err;
}
await cli.main(process.argv);
