/**
 * A forwarding proxy that stamps ingest arrivals in a process of its own, so a
 * busy event loop in the test process (the client under test, a collector)
 * cannot delay the stamps and make arrivals look bunched.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { TSX } from "./cli.js";

export interface ProxyProcess {
  url: string;
  /** Arrival times (the proxy process's performance.now()) of the ingest requests so far. */
  times(): Promise<number[]>;
  close(): Promise<void>;
}

export async function startProxyProcess(target: string): Promise<ProxyProcess> {
  const child = spawn(process.execPath, ["--import", TSX, new URL("./proxy-child.ts", import.meta.url).pathname, target], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on("line", (line) => waiting.shift()?.(line));
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      waiting.push(resolve);
      child.once("exit", (code) => reject(new Error(`the proxy process exited (${code})`)));
    });
  const ready = await nextLine();
  const m = /^listening (\S+)$/.exec(ready);
  if (!m) throw new Error(`the proxy process said ${JSON.stringify(ready)}`);
  return {
    url: m[1]!,
    async times() {
      const answer = nextLine();
      child.stdin!.write("times\n");
      return JSON.parse(await answer) as number[];
    },
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.stdin!.end();
      }),
  };
}
