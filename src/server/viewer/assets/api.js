/* global sessionStorage, URLSearchParams */
// The viewer API over fetch. With `serve --api-key`, the key the user typed in
// the sign-in form is kept in sessionStorage (gone when the tab closes) and sent
// as X-Api-Key; it never goes into a URL.
const KEY = "tracepipe.apiKey";

export class AuthError extends Error {}

export function setKey(key) {
  sessionStorage.setItem(KEY, key);
}

export function clearKey() {
  sessionStorage.removeItem(KEY);
}

export function hasKey() {
  return sessionStorage.getItem(KEY) !== null;
}

export async function api(path, params) {
  // An array value is a repeated parameter (metadata=a=1&metadata=b=2).
  const qs = params
    ? new URLSearchParams(
        Object.entries(params)
          .flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]]))
          .filter(([, v]) => v !== undefined && v !== null && v !== ""),
      )
    : null;
  const key = sessionStorage.getItem(KEY);
  const res = await fetch(qs && qs.size ? `${path}?${qs}` : path, { headers: key ? { "x-api-key": key } : {}, cache: "no-store" });
  if (res.status === 401) throw new AuthError("API key required");
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const d = body.detail;
    throw new Error(
      typeof d === "string" ? d : Array.isArray(d) ? d.map((i) => `${(i.loc || []).join(".")}: ${i.msg}`).join("; ") : `HTTP ${res.status}`,
    );
  }
  return body;
}
