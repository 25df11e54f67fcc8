import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = new URL("../", import.meta.url);
let said = false;

/** Import a module from dist/ when it has been built, else from the TypeScript sources (via tsx). */
export async function loadBuilt<T>(path: string): Promise<T> {
  const dist = new URL(`dist/${path}`, ROOT);
  const useDist = existsSync(fileURLToPath(dist));
  if (!said) {
    console.log(`(measuring ${useDist ? "dist/ (compiled)" : "TypeScript sources through tsx; run `npm run build` for compiled numbers"})`);
    said = true;
  }
  return (await import(useDist ? dist.href : new URL(path.replace(/\.js$/, ".ts"), ROOT).href)) as T;
}
