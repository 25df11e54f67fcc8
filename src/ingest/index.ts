export { Client, type ClientStats, type FlushOptions, type FlushResult } from "./client.js";
export { type ClientOptions } from "./config.js";
export { getDefaultClient, setDefaultClient, flush } from "./default.js";
export { SinkError, type Sink, type SinkLimits } from "./sink.js";
