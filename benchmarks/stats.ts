/** Small helpers shared by the benchmarks: order statistics, spread, child processes that print "listening on <url>". */
import { spawn, type ChildProcess } from "node:child_process";

export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * q;
  const lo = Math.floor(i);
  return s[lo]! + (s[Math.min(lo + 1, s.length - 1)]! - s[lo]!) * (i - lo);
}
export const median = (xs: readonly number[]) => quantile(xs, 0.5);

/** "median (min–max)", the way every benchmark reports a figure measured several times. */
export function spread(xs: readonly number[], digits = 1, unit = ""): string {
  const f = (v: number) => v.toFixed(digits);
  return `${f(median(xs))}${unit} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;
}

export const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export const peakRssMiB = () => process.resourceUsage().maxRSS / 1024;

/** Start `node [--import tsx] <args>` and resolve with the URL it prints ("listening on http://…"). */
export function startChild(args: string[], opts: { tsx?: boolean; cwd?: string } = {}): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, [...(opts.tsx === false ? [] : ["--import", "tsx"]), ...args], {
    cwd: opts.cwd,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let seen = "";
    proc.stdout!.setEncoding("utf8").on("data", (d: string) => {
      seen += d;
      const m = /listening on (http:\/\/\S+)/.exec(seen);
      if (m) resolve({ proc, url: m[1]! });
    });
    proc.on("exit", (code) => reject(new Error(`${args[0]} exited ${code}`)));
  });
}

/** Peak RSS of a child process we started, from /proc (Linux), in MiB; undefined elsewhere. */
export async function childPeakRssMiB(pid: number | undefined): Promise<number | undefined> {
  if (!pid) return undefined;
  try {
    const { readFileSync } = await import("node:fs");
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}
