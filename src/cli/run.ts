// TypeScript entry for development and tests (`node --import tsx src/cli/run.ts ...`); the published bin uses dist/.
import { main } from "./index.js";

await main(process.argv);
