/**
 * Gemini's REST API accepts two JSON spellings of every field: the proto names
 * (`system_instruction`, `inline_data: {mime_type, data}`, `usage_metadata`,
 * ..., what Google's REST documentation and cookbook write) and their
 * lowerCamelCase JSON names (what the SDKs send and the API answers). The
 * adapter reads the lowerCamelCase form, the canonical protobuf JSON mapping,
 * so a body in proto spelling is first re-keyed: only the fields of the
 * messages below, never the caller's own data inside them (function `args`
 * and `response`, schemas, ...). A body with no proto names comes back as the
 * same object, unchanged; the spelling is told from the fields the body's
 * structure shows (see `spelledProto`).
 */
import { NormalizeError } from "../../src/errors.js";
import { isObj, type Loc, type Obj, put } from "../common/guards.js";

/** A message's sub-messages by field (lowerCamelCase); a field not listed holds data, kept as sent. */
interface Shape {
  readonly [field: string]: Shape;
}

/** A message whose fields are all data. */
const LEAF: Shape = {};
const BLOB: Shape = LEAF;
const PART: Shape = {
  inlineData: BLOB,
  fileData: LEAF,
  functionCall: LEAF,
  functionResponse: { parts: { inlineData: BLOB, fileData: LEAF } },
  executableCode: LEAF,
  codeExecutionResult: LEAF,
  videoMetadata: LEAF,
  toolCall: LEAF,
  toolResponse: LEAF,
  partMetadata: LEAF,
};
/** A Content, or (the SDK's shorthands) a part standing for one. */
const CONTENT: Shape = { ...PART, parts: PART };
const SAFETY: Shape = LEAF;
const VOICE: Shape = { prebuiltVoiceConfig: LEAF, replicatedVoiceConfig: LEAF };
const GENERATION: Shape = {
  thinkingConfig: LEAF,
  speechConfig: { voiceConfig: VOICE, multiSpeakerVoiceConfig: { speakerVoiceConfigs: { voiceConfig: VOICE } } },
  imageConfig: LEAF,
  routingConfig: { autoMode: LEAF, manualMode: LEAF },
};
const TOOL: Shape = {
  functionDeclarations: LEAF,
  googleSearchRetrieval: { dynamicRetrievalConfig: LEAF },
  googleSearch: { timeRangeFilter: LEAF },
  codeExecution: LEAF,
  urlContext: LEAF,
  computerUse: LEAF,
  fileSearch: LEAF,
  googleMaps: LEAF,
  retrieval: { vertexAiSearch: LEAF, vertexRagStore: LEAF },
};
const TOOL_CONFIG: Shape = { functionCallingConfig: LEAF, retrievalConfig: { latLng: LEAF } };

export const REQUEST: Shape = {
  contents: CONTENT,
  systemInstruction: CONTENT,
  generationConfig: GENERATION,
  safetySettings: SAFETY,
  tools: TOOL,
  toolConfig: TOOL_CONFIG,
  // The @google/genai SDK's parameters: the same fields under `config`.
  config: { ...GENERATION, systemInstruction: CONTENT, safetySettings: SAFETY, tools: TOOL, toolConfig: TOOL_CONFIG },
};

const MODALITY_COUNTS: Shape = LEAF;
export const USAGE: Shape = {
  promptTokensDetails: MODALITY_COUNTS,
  cacheTokensDetails: MODALITY_COUNTS,
  candidatesTokensDetails: MODALITY_COUNTS,
  toolUsePromptTokensDetails: MODALITY_COUNTS,
};
const GROUNDING: Shape = {
  groundingChunks: { web: LEAF, retrievedContext: LEAF, maps: LEAF },
  groundingSupports: { segment: LEAF },
  searchEntryPoint: LEAF,
  retrievalMetadata: LEAF,
};
const CANDIDATE: Shape = {
  content: CONTENT,
  safetyRatings: SAFETY,
  citationMetadata: { citationSources: LEAF, citations: LEAF },
  groundingMetadata: GROUNDING,
  groundingAttributions: { segment: LEAF, sourceId: { groundingPassage: LEAF, semanticRetrieverChunk: LEAF } },
  logprobsResult: { topCandidates: { candidates: LEAF }, chosenCandidates: LEAF },
  urlContextMetadata: { urlMetadata: LEAF },
};
export const RESPONSE: Shape = {
  candidates: CANDIDATE,
  promptFeedback: { safetyRatings: SAFETY },
  usageMetadata: USAGE,
};

/** `mime_type` -> `mimeType`; a name without an underscore is itself. */
function lowerCamel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** `mimeType` -> `mime_type`. */
function protoName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `v` (a message of `shape`, or a list of them) with every field in lowerCamelCase; `v` itself when nothing changes. */
export function lowerCamelKeys(v: unknown, shape: Shape): unknown {
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const e = lowerCamelKeys(v[i], shape);
      if (e !== v[i]) (out ??= v.slice())[i] = e;
    }
    return out ?? v;
  }
  if (!isObj(v)) return v;
  let out: Obj | undefined;
  for (const k in v) {
    const camel = k.indexOf("_") > 0 ? lowerCamel(k) : k;
    // A field sent in both spellings: the lowerCamelCase one is read, the other kept as sent.
    const name = camel !== k && Object.hasOwn(v, camel) ? k : camel;
    const sub = Object.hasOwn(shape, name) ? shape[name] : undefined;
    const value = sub ? lowerCamelKeys(v[k], sub) : v[k];
    if (!out && (name !== k || value !== v[k])) {
      // The first change: the fields before it are copied as they are.
      out = {};
      for (const before in v) {
        if (before === k) break;
        put(out, before, v[before]);
      }
    }
    if (out) put(out, name, value);
  }
  return out ?? v;
}

/**
 * Where a body shows its spelling: its own fields, its Contents' and
 * candidates' fields and their parts' fields. A writer uses one spelling
 * throughout, so a body with no proto name at these levels is read as it is,
 * without walking the data inside its parts (the common case costs a look at
 * each part's keys, not a copy).
 */
const PARTS_SCAN: Shape = { parts: LEAF };
export const REQUEST_SCAN: Shape = { contents: PARTS_SCAN, systemInstruction: PARTS_SCAN, config: { systemInstruction: PARTS_SCAN } };
export const RESPONSE_SCAN: Shape = { candidates: { content: PARTS_SCAN } };

/** Whether `v` (a message of `scan`, or a list of them) has a field in proto spelling at the levels `scan` names. */
function spelledProto(v: unknown, scan: Shape): boolean {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (spelledProto(v[i], scan)) return true;
    return false;
  }
  if (!isObj(v)) return false;
  for (const k in v) {
    // An underscore after the first character (one search, not two).
    if (k.indexOf("_") > 0) return true;
    const sub = scan === LEAF ? undefined : Object.hasOwn(scan, k) ? scan[k] : undefined;
    if (sub !== undefined && typeof v[k] === "object" && spelledProto(v[k], sub)) return true;
  }
  return false;
}

/** A location in the re-keyed body, spelled as the original body spells it. */
function originalLoc(original: unknown, loc: Loc): Loc {
  let v: unknown = original;
  return loc.map((k) => {
    let key = k;
    if (typeof k === "string" && isObj(v) && !Object.hasOwn(v, k)) {
      const p = protoName(k);
      if (Object.hasOwn(v, p)) key = p;
    }
    v = isObj(v) ? v[key] : Array.isArray(v) && typeof key === "number" ? v[key] : undefined;
    return key;
  });
}

/**
 * `read(body)` on `raw` re-keyed by `shape`; an error's location names the field
 * as `raw` spells it. `prefix` is how many leading location steps lie outside `raw`.
 */
export function readEitherSpelling<T>(raw: unknown, shape: Shape, scan: Shape, read: (body: unknown) => T, prefix = 0): T {
  if (!spelledProto(raw, scan)) return read(raw);
  const body = lowerCamelKeys(raw, shape);
  if (body === raw) return read(raw);
  try {
    return read(body);
  } catch (err) {
    if (!(err instanceof NormalizeError)) throw err;
    throw new NormalizeError(err.issues.map((i) => ({ ...i, loc: [...i.loc.slice(0, prefix), ...originalLoc(raw, i.loc.slice(prefix))] })));
  }
}
