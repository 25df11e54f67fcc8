/**
 * A page cursor the store did not make (or made for another sort). Cursors
 * are opaque: each store encodes its own; readers pass them back as given.
 * The collector answers 422 naming `cursor`.
 */
export class CursorError extends RangeError {
  override name = "CursorError";
}
