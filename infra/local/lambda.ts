import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import path from "node:path";
import { Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { InvokeStore, InvokeStoreBase } from "@aws/lambda-invoke-store";
import { API_HANDLER, API_TIMEOUT_SECONDS } from "../aws/handlers.js";

const MAX_LAMBDA_MS = 15 * 60_000;

/**
 * The API function's time limit, as its context reports it: as deployed, or
 * STEPWISE_LOCAL_API_TIMEOUT_SECONDS (shorter: a buffered `/mcp` call answers "still running"
 * sooner). The other functions get Lambda's 15 min. Nothing is cut off at a limit here.
 */
const API_TIMEOUT_MS = (() => {
  const setting = process.env.STEPWISE_LOCAL_API_TIMEOUT_SECONDS;
  const seconds = Number(setting || API_TIMEOUT_SECONDS);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > API_TIMEOUT_SECONDS) {
    throw new Error(`STEPWISE_LOCAL_API_TIMEOUT_SECONDS is a whole number from 1 to ${API_TIMEOUT_SECONDS}, got '${setting}'`);
  }
  return seconds * 1000;
})();
const timeoutMs = (entry: string) => (entry === API_HANDLER ? API_TIMEOUT_MS : MAX_LAMBDA_MS);

// One process runs every invocation at once, as a Lambda environment with AWS_LAMBDA_MAX_CONCURRENCY
// does: each invocation runs in its own InvokeStore context, so Powertools keeps each invocation's
// log keys, Lambda context and metrics apart (the Lambda runtime does the same on AWS).
process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= "1000";
const invokeStore = await InvokeStore.getInstanceAsync(true);
const inInvocation = <T>(requestId: string, fn: () => Promise<T>): Promise<T> =>
  invokeStore.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: requestId }, fn);
const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), "../..");

type Handler = (event: unknown, contextOrStream?: unknown, context?: unknown) => Promise<unknown>;
const STREAMING = Symbol.for("stepwise.local.streaming");
type StreamingHandler = Handler & { [STREAMING]?: true };

/**
 * The Lambda Node.js runtime's globals for response streaming (`awslambda.streamifyResponse`,
 * `awslambda.HttpResponseStream.from`), which middy calls when a streaming handler module loads.
 * Install before importing such a module.
 */
export function installStreamingShim(): void {
  const g = globalThis as typeof globalThis & { awslambda?: Record<string, unknown> };
  // The Lambda invoke store (above) has created `awslambda` already: add to it.
  g.awslambda = g.awslambda ?? {};
  Object.assign(g.awslambda, {
    streamifyResponse(handler: Handler) {
      (handler as StreamingHandler)[STREAMING] = true;
      return handler;
    },
    HttpResponseStream: {
      from(stream: LocalResponseStream, metadata: { statusCode?: number; headers?: Record<string, string> }) {
        stream.setMetadata(metadata);
        return stream;
      },
    },
  });
}

/**
 * What a streamed Lambda writes into, over a Node HTTP response. A closed socket ends it at once:
 * destroyed without an error, so the handler's pipeline ends as a premature close. (An error would
 * be an 'error' event, and a client that leaves before the handler has piped its body, while it
 * still checks the key or reads the run, would find no listener: the whole stack would crash.)
 */
class LocalResponseStream extends Writable {
  constructor(private readonly res: ServerResponse) {
    super();
    res.on("close", () => {
      if (!res.writableFinished) this.destroy();
    });
  }

  setMetadata(metadata: { statusCode?: number; headers?: Record<string, string> }) {
    this.res.writeHead(metadata.statusCode ?? 200, metadata.headers ?? {});
    this.res.flushHeaders();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void) {
    if (!this.res.headersSent) this.res.writeHead(200);
    this.res.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void) {
    this.res.end(callback);
  }
}

function lambdaContext(functionName: string, timeout = MAX_LAMBDA_MS) {
  const deadline = Date.now() + timeout;
  return {
    functionName,
    functionVersion: "$LATEST",
    awsRequestId: randomUUID(),
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: "1024",
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "local",
    callbackWaitsForEmptyEventLoop: false,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

/**
 * An entry's file: its TypeScript source, or the JavaScript compiled from it when the stack runs
 * compiled (the test suite compiles it once per run; this file is then .js too).
 */
function entryFile(entry: string): string {
  return path.join(root, entry).replace(/\.ts$/, path.extname(import.meta.url));
}

/** Loads a handler module once, as a Lambda container would. */
const modules = new Map<string, Promise<Handler>>();
export function loadHandler(entry: string): Promise<Handler> {
  let handler = modules.get(entry);
  if (!handler) {
    handler = import(pathToFileURL(entryFile(entry)).href).then((m) => m.handler as Handler);
    modules.set(entry, handler);
  }
  return handler;
}

/** Invokes the handler of an entry file (loaded once) as Lambda does: see `invokeHandler`. */
export async function invokeLambda(entry: string, event: unknown): Promise<unknown> {
  return invokeHandler(await loadHandler(entry), localFunctionName(entry), event, timeoutMs(entry));
}

/**
 * Invokes a handler as Lambda does for Step Functions: a thrown error becomes Error = its type and
 * Cause = the JSON `{errorType, errorMessage, trace}` that Lambda reports.
 */
export async function invokeHandler(handler: Handler, functionName: string, event: unknown, timeout?: number): Promise<unknown> {
  try {
    // Lambda passes JSON: the handler never shares objects with the state machine.
    const context = lambdaContext(functionName, timeout);
    const result = await inInvocation(context.awsRequestId, () => handler(structuredClone(event), context));
    return JSON.parse(JSON.stringify(result ?? null));
  } catch (error) {
    const err = error instanceof Error ? error : new Error(String(error));
    const failure = new Error(JSON.stringify({ errorType: err.name, errorMessage: err.message, trace: (err.stack ?? "").split("\n") }));
    failure.name = err.name;
    throw failure;
  }
}

export async function invokeStreaming(entry: string, event: unknown, res: ServerResponse): Promise<void> {
  const handler = await loadHandler(entry);
  if (!(handler as StreamingHandler)[STREAMING]) throw new Error(`${entry} is not a streaming handler`);
  const context = lambdaContext(localFunctionName(entry));
  await inInvocation(context.awsRequestId, () => handler(event, new LocalResponseStream(res), context));
}

/** "functions/steps/plan.ts" → "steps-plan": a readable function name for local log lines. */
function localFunctionName(entry: string): string {
  return entry
    .replace(/^functions\//, "")
    .replace(/\.ts$/, "")
    .replaceAll("/", "-");
}
