// Regenerates schema/native-messages.schema.json from the zod schemas: `npm run schema`.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { nativeMessagesJsonSchema } from "../src/format/json-schema.js";

const target = fileURLToPath(new URL("../schema/native-messages.schema.json", import.meta.url));
writeFileSync(target, JSON.stringify(nativeMessagesJsonSchema(), null, 2) + "\n");
console.log(`wrote ${target}`);
