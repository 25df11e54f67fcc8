/**
 * Filters by metadata (`key = value`) and tags (`has tag`) as SQL conditions
 * on one run's row (`alias`), for the trace list and POST /runs/query alike.
 * Keys are matched through json_each, never spliced into a JSON path, so any
 * key (dots, quotes, markup) means itself. Values compare as text: metadata
 * `{"n": 3}` matches `n = 3`, `{"ok": true}` matches `ok = true`.
 */

/** Binds a value and returns its placeholder (positional or named: the caller's statement decides). */
export type Bind = (value: unknown) => string;

export function metadataConditions(alias: string, bind: Bind, metadata?: Record<string, string>, tags?: readonly string[]): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(metadata ?? {})) {
    out.push(
      `EXISTS (SELECT 1 FROM json_each(${alias}.extra, '$.metadata') j WHERE j.key = ${bind(k)} AND (CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(j.value AS TEXT) END) = ${bind(v)})`,
    );
  }
  for (const t of tags ?? []) out.push(`EXISTS (SELECT 1 FROM json_each(${alias}.tags) t WHERE t.value = ${bind(t)})`);
  return out;
}
