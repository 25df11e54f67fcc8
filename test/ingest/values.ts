/** Hostile values for the ingest and serializer tests. */

/**
 * A parent whose `n` children each point back to it in two places (ORM-style
 * `parent` and `owner.root`), every field behind a getter that counts reads:
 * the count is the work done, measured without a clock.
 */
export function backRefGraph(n: number): { root: Record<string, unknown>; reads: () => number; fields: number } {
  let reads = 0;
  let fields = 0;
  const counted = (o: Record<string, unknown>, k: string, v: unknown) => {
    fields++;
    Object.defineProperty(o, k, { enumerable: true, get: () => (reads++, v) });
  };
  const root: Record<string, unknown> = {};
  const children: Record<string, unknown>[] = [];
  counted(root, "name", "root");
  counted(root, "children", children);
  for (let i = 0; i < n; i++) {
    const child: Record<string, unknown> = {};
    const owner: Record<string, unknown> = {};
    counted(owner, "root", root);
    counted(child, "i", i);
    counted(child, "parent", root);
    counted(child, "owner", owner);
    children.push(child);
  }
  return { root, reads: () => reads, fields };
}
