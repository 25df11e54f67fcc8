export { traceable, type TraceableOptions } from "./traceable.js";
export { getCurrentRun, tracingEnabled } from "./context.js";
export { wrapOpenAI, wrapAnthropic, type WrapOptions, type OpenAIWrapOptions } from "./wrappers.js";
export { wrapGemini } from "./gemini.js";
export { wrapBedrock } from "./bedrock.js";
