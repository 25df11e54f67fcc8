/** Shapes spelled everywhere, named once. */

/** A JSON object whose members are not yet known. */
export type Obj = Record<string, unknown>;

/** Where in a document something is: keys and array indexes from the top (SPEC §7's `loc`). */
export type Loc = (string | number)[];
