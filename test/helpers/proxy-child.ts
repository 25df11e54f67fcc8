/**
 * startProxy in a process of its own (see proxy-process.ts): prints
 * `listening <url>`, then answers each `times` line on stdin with the arrival
 * times as one JSON line.
 */
import { createInterface } from "node:readline";
import { startProxy } from "./proxy.js";

const proxy = await startProxy(process.argv[2]!);
process.stdout.write(`listening ${proxy.url}\n`);
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "times") process.stdout.write(JSON.stringify(proxy.times) + "\n");
});
process.stdin.on("end", () => void proxy.close().then(() => process.exit(0)));
