/**
 * Filters by metadata (`key = value`) and tags (`has tag`) as SQL conditions
 * on one run's row (`alias`), for the trace list and the run query alike. The
 * stored `extra` and `tags` are JSON text: read as `json` (which, unlike
 * jsonb, takes any escape the text holds). Keys and values are bound, never
 * spliced into the statement, so any key means itself. Values compare as
 * text: metadata `{"n": 3}` matches `n = 3`, `{"ok": true}` matches `ok = true`.
 */

/** Binds a value and returns its placeholder. */
export type Bind = (value: unknown) => string;

export function metadataConditions(alias: string, bind: Bind, metadata?: Record<string, string>, tags?: readonly string[]): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(metadata ?? {})) {
    out.push(`(${alias}.extra::json->'metadata'->>${bind(k)}) = ${bind(v)}`);
  }
  for (const t of tags ?? []) {
    out.push(
      `EXISTS (SELECT 1 FROM json_array_elements_text(CASE WHEN json_typeof(${alias}.tags::json) = 'array' THEN ${alias}.tags::json END) t(v) WHERE t.v = ${bind(t)})`,
    );
  }
  return out;
}
