/** Exit codes of every command (DESIGN.md "CLI"). */
export const EXIT_OK = 0;
/** Some records were invalid; the rest were still processed. */
export const EXIT_INVALID = 1;
/** Bad flags, unknown format, missing file. */
export const EXIT_USAGE = 2;
