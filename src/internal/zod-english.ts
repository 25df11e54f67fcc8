/**
 * zod/mini leaves its messages to a locale; classic zod sets English when it
 * loads. The native format's issues are reported in English, so English is set
 * here too, unless the application already chose a locale (zod keeps one
 * configuration for every copy of it in the process).
 */
import { config } from "zod/mini";
import { en } from "zod/locales";

if (!config().localeError) config(en());
