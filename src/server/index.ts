export { createCollector, COLLECTOR_VERSION, type Collector, type CollectorOptions } from "./app.js";
export { HttpError, type Route, type Reply, type RequestContext, type Handler } from "./http.js";
export { openStore, type Store, type RunStore, type StoredRun, type RunQuery } from "../store/index.js";
export { Run, RunPatch, RunEvent } from "../run/schema.js";
