/** The JSON Schema of the native format, derived from the zod schemas (never written by hand). */
import { z } from "zod";
import { nativeSchemas } from "./schema.js";

export const NATIVE_MESSAGES_SCHEMA_ID = "https://tracepipe.dev/schema/native-messages.schema.json";

export function nativeMessagesJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(nativeSchemas().Messages, { target: "draft-2020-12" }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    $id: NATIVE_MESSAGES_SCHEMA_ID,
    title: "tracepipe native messages",
    description: "An LLM run's messages in the native format (SPEC §2.6). Generated from src/format/schema.ts by `npm run schema`.",
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "$schema")),
  };
}

export function nativeMessageJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(nativeSchemas().Message, { target: "draft-2020-12" }) as Record<string, unknown>;
}
