export * from "./schema.js";
export { validate, type ValidateOptions } from "./validate.js";
export { nativeMessagesJsonSchema, nativeMessageJsonSchema, NATIVE_MESSAGES_SCHEMA_ID } from "./json-schema.js";
