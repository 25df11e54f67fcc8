/**
 * OTLP/HTTP: POST /otel/v1/traces and /otel/v1/logs, and the standard base
 * paths /v1/traces and /v1/logs (so OTEL_EXPORTER_OTLP_ENDPOINT pointing at
 * the collector works unchanged). JSON or protobuf; src/otlp/ decodes,
 * stores and converts (receive.ts), the gRPC receiver calls the same. The answer
 * is in the request's encoding, with OTLP's partial success naming the spans or
 * log records refused as malformed (the others are stored).
 */
import type { Route } from "../http.js";
import { HttpError } from "../http-error.js";
import type { OtlpReceiveStore } from "../../otlp/receive.js";
import { ValidationError } from "../../errors.js";
import { PROJECT_HEADER } from "../../otlp/plain.js";
import { receiveOtlp } from "../../otlp/receive.js";
import { isProtobuf, type Signal } from "../../otlp/decode.js";
import { exportResponse } from "../../otlp/protobuf.js";
import { tooDeep } from "../depth.js";

export function otelRoutes(store: OtlpReceiveStore, maxJsonDepth = Infinity): Route[] {
  const guard = async (doc: object) => {
    if (await tooDeep(doc, maxJsonDepth)) throw new HttpError(400, `OTLP request nested more than ${maxJsonDepth} levels deep`);
  };
  const route = (path: string, signal: Signal): Route => ({
    method: "POST",
    path,
    handler: async (ctx) => {
      const header = ctx.headers[PROJECT_HEADER];
      try {
        const contentType = String(ctx.headers["content-type"] ?? "");
        const body = await receiveOtlp(store, signal, await ctx.body(), contentType, {
          project: typeof header === "string" && header ? header : undefined,
          guard,
        });
        if (!isProtobuf(contentType)) return { status: 200, body };
        return {
          status: 200,
          body: exportResponse(signal, body.partialSuccess),
          headers: { "content-type": "application/x-protobuf" },
        };
      } catch (err) {
        if (err instanceof ValidationError)
          throw new HttpError(err.issues[0]?.type === "unsupported_media_type" ? 415 : 400, err.issues[0]?.msg ?? err.message);
        throw err;
      }
    },
  });
  return [route("/otel/v1/traces", "traces"), route("/otel/v1/logs", "logs"), route("/v1/traces", "traces"), route("/v1/logs", "logs")];
}
