/**
 * The set-up the wrapper tests share: one replay server per test file (the real vendor SDK
 * client points at it) and a fresh in-memory run writer per test (the wrapper hands its runs to it).
 *
 *   const vendor = useWrapperReplay();      // or { http2: true } for the AWS SDK's handler
 *   const openai = () => new OpenAI({ apiKey: "sk-test", baseURL: `${vendor.server.url}/v1`, maxRetries: 0 });
 *   wrapOpenAI(openai(), { client: vendor.writer });
 */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { MemoryWriter } from "../../src/run/memory.js";
import { startReplayServer, type ReplayServer } from "./replay-server.js";

export interface WrapperReplay {
  /** The file's replay server, started before its first test and closed after its last. */
  readonly server: ReplayServer;
  /** The current test's run writer: new for every test, so a test reads only its own runs. */
  readonly writer: MemoryWriter;
  /** Start over with a new writer inside a test (a second call whose runs are read on their own). */
  freshWriter(): MemoryWriter;
}

/** Register the hooks that start and stop the replay server and give each test a fresh writer. */
export function useWrapperReplay(opts: { http2?: boolean } = {}): WrapperReplay {
  let server: ReplayServer | undefined;
  let writer = new MemoryWriter();
  beforeAll(async () => {
    server = await startReplayServer(opts);
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    writer = new MemoryWriter();
  });
  return {
    get server() {
      if (!server) throw new Error("the replay server starts in beforeAll: use it inside a test or hook");
      return server;
    },
    get writer() {
      return writer;
    },
    freshWriter() {
      writer = new MemoryWriter();
      return writer;
    },
  };
}
