import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { SQSBatchResponse } from "aws-lambda";
import { bodyTooLarge, eventTooLarge, LAMBDA_SYNC_EVENT_BYTES, MAX_JSON_BODY_BYTES } from "../../functions/bodyLimits.js";
import packageJson from "../../package.json" with { type: "json" };
import { stopSpare } from "../../shared/sandbox/runPython.js";
import type { StepName } from "../aws/handlers.js";
import { API_HANDLER, NOTIFY_HANDLER, SANDBOX_HANDLER, STEP_HANDLERS, STREAM_HANDLER } from "../aws/handlers.js";
import { ensureConsoleBuilt } from "../console/build.js";
import { startOfflineModel } from "../offlineModel/server.js";
import { LOCAL_ACCOUNT, LOCAL_REGION } from "./account.js";
import { LOCAL_CODE_INTERPRETER_ID, LocalCodeInterpreter } from "./codeInterpreter/endpoint.js";
import { cpythonMissing } from "./codeInterpreter/pythonSession.js";
import { LocalContainers } from "./containers.js";
import { localCredentials } from "./credentials.js";
import { localDefinition, type StateMachineSettings } from "./definitionCache.js";
import { ensureTable, startDynamo } from "./dynamo.js";
import { readBody, refuseBeforeBody, requestHead, sendResult, withBody } from "./httpApi.js";
import { LOCAL_KMS_KEY_ID, LocalKms } from "./kms.js";
import { installStreamingShim, invokeLambda, invokeStreaming, loadHandler } from "./lambda.js";
import { LocalLambdaApi } from "./lambdaApi.js";
import { type RecoveryReport, recoverRuns } from "./recovery.js";
import { LocalS3 } from "./s3.js";
import type { LocalCredentials } from "./sigv4.mjs";
import { LocalSqs } from "./sqs.js";
import { type ExecutionStatusChange, LocalStepFunctions } from "./stepFunctions.js";
import { LocalFunctionVersions } from "./versions.js";

const FILES_BUCKET = "stepwise-files";
const SANDBOX_FUNCTION = "stepwise-sandbox";

export interface LocalStackOptions {
  port?: number;
  /** Folder for dynalite's data; in memory when unset. */
  dataDir?: string;
  /** API keys to register: key → tenant. */
  apiKeys: Record<string, string>;
  /** Latency of the offline model per call, in ms. */
  modelLatencyMs?: number;
  /** State machine settings, as `cdk deploy` would take them (interrupt timeout, Map concurrency). */
  stateMachine?: StateMachineSettings;
  /** Told what is starting and, once it is up, how long it took. */
  progress?: (part: string, ms: number) => void;
  /**
   * Run the step functions in this many processes of their own ("containers", invoked in turn), as
   * each Lambda container on AWS is its own process; 0 or unset: in the stack's process.
   */
  containers?: number;
  /**
   * Answer API requests in this many processes of their own (invoked in turn), as API Gateway
   * spreads requests over Lambda containers; 0 or unset: in the stack's process.
   */
  apiContainers?: number;
  /**
   * Where `/mcp` goes: "stream" (default), the stream function, as at the stream URL on AWS
   * (progress and elicitation stream); "api", the API function, as at the HTTP API's URL on AWS
   * (buffered: a call answers within API Gateway's time limit, "still running" if the run is not done).
   */
  mcpRoute?: "stream" | "api";
  /** Told when a run's execution starts or ends (what EventBridge hears on AWS). */
  onExecution?: (change: ExecutionStatusChange) => void;
}

export interface LocalStack {
  url: string;
  /** Loopback endpoints of the emulated services, for tools and tests that speak AWS APIs. */
  endpoints: {
    region: string;
    dynamodb: string;
    tableName: string;
    sfn: string;
    stateMachineArn: string;
    /** The alias new runs start through (the API's STATE_MACHINE_ARN). */
    stateMachineAliasArn: string;
    sqs: string;
    notifyQueueUrl: string;
    deadLetterQueueUrl: string;
    s3: string;
    filesBucket: string;
    lambda: string;
    kms: string;
    /** The AgentCore Code Interpreter endpoint, when run_code runs there (SANDBOX_RUNTIME=agentcore). */
    agentCore?: string;
    /** run_code's runtime: "agentcore" (CPython in bubblewrap behind the emulated endpoint) or "pyodide". */
    sandboxRuntime: "agentcore" | "pyodide";
    /** What every endpoint above requires requests to be signed with. */
    credentials: LocalCredentials;
  };
  stepFunctions: LocalStepFunctions;
  /** The step functions' container processes (empty when they run in the stack's process). */
  containerPids: number[];
  /** The API's container processes (STEPWISE_LOCAL_API_CONTAINERS), empty when requests are answered in the stack's. */
  apiContainerPids: number[];
  model: { url: string; offline: boolean; name: string };
  /**
   * A deploy: publishes the next version of every step function (the project's handlers, or per
   * step a changed handler module, relative to the project root) and of the state machine, and
   * moves the alias to it. Runs already going stay on their versions. Returns the version's ARN.
   */
  deploy(changed?: Partial<Record<StepName, string>>): string;
  /** With a data folder: the runs that were in flight when the stack last stopped, and what became of them. */
  recovered: RecoveryReport;
  close(): Promise<void>;
}

/**
 * The whole stack on one machine: dynalite, the synthesized state machine behind a local Step
 * Functions endpoint, the API and stream handlers behind one HTTP server, and — when no
 * OpenAI-compatible endpoint is configured — the offline model. Handlers read their endpoints
 * from the same variables as on AWS; this function only sets those variables.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const parts = new StackParts(options.progress);
  // The SDK nags on Node 20 (the Lambda runtime is Node 22); the local stack runs on 20 by design.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  // Tracing is off outside Lambda (no X-Ray daemon): the X-Ray SDK under Powertools' Tracer starts in
  // manual mode, without the async hook its automatic mode puts on every promise (5 % of the CPU).
  process.env.AWS_XRAY_MANUAL_MODE ??= "true";
  try {
    if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
    const credentials = localCredentials(options.dataDir && path.join(options.dataDir, "local-credentials.json"));
    const dynamo = await parts.timed("database (dynalite)", () => startDynamo({ credentials, path: options.dataDir }));
    parts.onClose(dynamo.close);
    const model = await startModel(parts, options);
    // The step functions run in containers once those are started (they inherit the environment set below).
    const runners: StepRunners = {};
    const machine = await startStateMachine(parts, options, credentials, runners);
    const bus = await startNotifyBus(parts, credentials, machine.stepFunctions);
    const services = await startFileAndCodeServices(parts, options, credentials);
    const server = await listenBeforeReady(parts, options.port ?? 3000);
    const endpoints: LocalStack["endpoints"] = {
      region: LOCAL_REGION,
      dynamodb: dynamo.endpoint,
      tableName: TABLE_NAME,
      ...machine.endpoints,
      ...bus.endpoints,
      ...services,
      credentials,
    };
    Object.assign(process.env, handlerEnvironment(endpoints, model, await ensureConsoleBuilt(), process.env));
    await loadHandlers(parts, options, runners);
    bus.subscribe();
    server.ready(await apiRequests(options, runners.api));

    const recovered = options.dataDir
      ? await parts.timed("recovery of runs in flight", () => recoverRuns(machine.stepFunctions, TABLE_NAME))
      : { continued: [], started: [], handedOn: [] };
    return {
      recovered,
      url: server.url,
      endpoints,
      stepFunctions: machine.stepFunctions,
      deploy: (changed) => machine.stepFunctions.publishVersion(machine.versions.publish(changed)),
      containerPids: runners.steps?.pids ?? [],
      apiContainerPids: runners.api?.pids ?? [],
      model,
      close: () => parts.close(),
    };
  } catch (error) {
    await parts.close();
    throw error;
  }
}

const TABLE_NAME = "stepwise";

/** What the stack has started, closed in the reverse order; each part's start timed for `progress`. */
class StackParts {
  private readonly closers: (() => Promise<void>)[] = [];

  constructor(private readonly progress?: (part: string, ms: number) => void) {}

  onClose(closer: () => Promise<void>): void {
    this.closers.push(closer);
  }

  async timed<T>(part: string, work: () => T | Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await work();
    this.progress?.(part, performance.now() - started);
    return result;
  }

  async close(): Promise<void> {
    for (const closer of this.closers.reverse()) await closer().catch(() => undefined);
  }
}

/** The processes the step functions and the API run in, when not in the stack's own. */
interface StepRunners {
  steps?: LocalContainers;
  api?: LocalContainers;
}

/** The model: an OpenAI-compatible endpoint when one is configured, else the offline model. */
async function startModel(parts: StackParts, options: LocalStackOptions): Promise<LocalStack["model"]> {
  const offline = !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL;
  let url = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
  if (offline) {
    const server = await parts.timed("offline model", () => startOfflineModel({ latencyMs: options.modelLatencyMs ?? 150 }));
    parts.onClose(server.close);
    url = server.url;
  }
  return { url, offline, name: process.env.STEPWISE_MODEL ?? (offline ? "stepwise-offline" : "gpt-4o-mini") };
}

/** The state machine synthesized from the CDK app, its functions' versions, behind a local Step Functions endpoint. */
async function startStateMachine(parts: StackParts, options: LocalStackOptions, credentials: LocalCredentials, runners: StepRunners) {
  const synthStarted = performance.now();
  const { definition, functions, cached } = await localDefinition(options.stateMachine ?? {});
  // Within the banner's 36-character column, so its seconds line up with the other parts'; a synthesized one is cached for the next start.
  options.progress?.(`state machine (${cached ? "cached" : "synthesized"})`, performance.now() - synthStarted);
  // A slow start of the "Wait for …" function (a Lambda cold start), so tests can make a decision
  // arrive before the task token is stored — the race AwaitInterrupt must win on AWS too.
  const callbackDelayMs = Number(process.env.LOCAL_CALLBACK_START_DELAY_MS ?? 0);
  const versions = new LocalFunctionVersions(definition, functions);
  const stepFunctions = new LocalStepFunctions(
    "Stepwise",
    versions.publish(),
    async (arn, input) => {
      const version = versions.handler(arn);
      if (!version) throw new Error(`no local function for ${arn}`);
      if (version.step === "AwaitInterrupt" && callbackDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, callbackDelayMs));
      return runners.steps ? runners.steps.invoke(version.entry, input) : invokeLambda(version.entry, input);
    },
    // The definition cache keeps only validated definitions (version 1 is the cached text).
    { credentials, dataDir: options.dataDir ? path.join(options.dataDir, "stepfunctions") : undefined, validated: true },
  );
  const sfn = await stepFunctions.listen();
  parts.onClose(() => stepFunctions.close());
  if (options.onExecution) stepFunctions.on("status", options.onExecution);
  return {
    stepFunctions,
    versions,
    endpoints: { sfn, stateMachineArn: stepFunctions.stateMachineArn, stateMachineAliasArn: stepFunctions.aliasArn },
  };
}

/**
 * EventBridge → SQS → notifier: execution status changes reach the notify handler through a queue
 * (with its dead-letter queue). `subscribe` hands the queue to the notifier once it is loaded.
 */
async function startNotifyBus(parts: StackParts, credentials: LocalCredentials, stepFunctions: LocalStepFunctions) {
  const sqs = new LocalSqs(credentials);
  const endpoint = await sqs.listen();
  parts.onClose(() => sqs.close());
  const deadLetterQueueUrl = sqs.createQueue("stepwise-dead-letters");
  const notifyQueueUrl = sqs.createQueue("stepwise-notify", { queueUrl: deadLetterQueueUrl, maxReceiveCount: 5 });
  const eventBridge = new SQSClient({ endpoint, region: LOCAL_REGION, credentials });
  // EventBridge's rule: each status change onto the queue. One not sent (the stack stopping) is
  // announced again at the next start, as every unannounced end is.
  const announce = (change: ExecutionStatusChange) => {
    if (change.status === "RUNNING") return;
    eventBridge
      .send(new SendMessageCommand({ QueueUrl: notifyQueueUrl, MessageBody: JSON.stringify(statusChangeEvent(change)) }))
      .catch((error: unknown) => console.error(JSON.stringify({ msg: "status change not queued", error: String(error) })));
  };
  stepFunctions.on("status", announce);
  const subscribe = () => {
    // Closed before the parts the notifier calls (the state machine, the database, the handlers'
    // containers): no status change is sent to a queue that is closing, and no batch outlives them.
    parts.onClose(() => {
      stepFunctions.off("status", announce);
      return sqs.stopPolling();
    });
    sqs.subscribe(
      notifyQueueUrl,
      async (event) => {
        const response = (await invokeLambda(NOTIFY_HANDLER, event)) as SQSBatchResponse;
        // A handled status change is not announced again after a restart.
        const failed = new Set(response?.batchItemFailures?.map((f) => f.itemIdentifier));
        for (const record of event.Records) {
          const arn = failed.has(record.messageId) ? undefined : statusChangeArn(record.body);
          if (arn) stepFunctions.markNotified(arn);
        }
        return response;
      },
      { visibilityMs: 1_000 },
    );
  };
  return { endpoints: { sqs: endpoint, notifyQueueUrl, deadLetterQueueUrl }, subscribe };
}

/** The execution status change as EventBridge delivers it ("Step Functions Execution Status Change"). */
export function statusChangeEvent(change: ExecutionStatusChange) {
  return {
    version: "0",
    id: randomUUID(),
    "detail-type": "Step Functions Execution Status Change",
    source: "aws.states",
    account: LOCAL_ACCOUNT,
    time: new Date().toISOString(),
    region: LOCAL_REGION,
    resources: [change.executionArn],
    detail: { ...change, startDate: change.startDate.getTime(), stopDate: change.stopDate?.getTime() ?? null },
  };
}

/**
 * S3 for the files' bytes (uploads, reports, code outputs; presigned links work here too), Lambda's
 * Invoke API for the code sandbox, run_code's runtime, and KMS for sealed secrets (tool source headers).
 */
async function startFileAndCodeServices(parts: StackParts, options: LocalStackOptions, credentials: LocalCredentials) {
  const s3 = new LocalS3({ region: LOCAL_REGION, ...credentials, dataDir: options.dataDir && path.join(options.dataDir, "s3") });
  const s3Endpoint = await s3.listen();
  parts.onClose(() => s3.close());
  s3.createBucket(FILES_BUCKET);
  const lambdaApi = new LocalLambdaApi({ [SANDBOX_FUNCTION]: SANDBOX_HANDLER }, credentials);
  const lambda = await lambdaApi.listen();
  parts.onClose(() => lambdaApi.close());
  parts.onClose(() => stopSpare());
  // run_code's runtime: AgentCore Code Interpreter, emulated by CPython with the data libraries in
  // bubblewrap, where this machine has them (or SANDBOX_RUNTIME says so); else Pyodide in the sandbox function.
  const sandboxRuntime = localSandboxRuntime(process.env.SANDBOX_RUNTIME);
  let agentCore: string | undefined;
  if (sandboxRuntime === "agentcore") {
    const codeInterpreter = new LocalCodeInterpreter({ credentials });
    agentCore = await codeInterpreter.listen();
    parts.onClose(() => codeInterpreter.close());
  }
  // KMS's key lives beside the data, or in memory.
  const kms = new LocalKms(credentials, options.dataDir ? path.join(options.dataDir, "local-kms.key") : undefined);
  const kmsEndpoint = await kms.listen();
  parts.onClose(() => kms.close());
  return { s3: s3Endpoint, filesBucket: FILES_BUCKET, lambda, kms: kmsEndpoint, agentCore, sandboxRuntime };
}

/**
 * The stack's HTTP server, listening from the start: every request it accepts gets an answer, 503
 * with Retry-After until `ready` hands it the request handler. A port in use rejects here
 * (EADDRINUSE), so the parts started so far are closed.
 */
async function listenBeforeReady(parts: StackParts, port: number) {
  let serve: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  // Keep idle client connections longer than clients do (undici: 4 s), so a client never reuses a
  // socket the server is closing at that moment (ECONNRESET on a busy machine).
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => (serve ? serve(req, res) : answerStarting(req, res)));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  parts.onClose(() => closeServer(server));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Tests hold start-up here, the port accepting, until this file exists: what a slow start looks like.
  const hold = process.env.LOCAL_START_HOLD_FILE;
  while (hold && !existsSync(hold)) await new Promise((resolve) => setTimeout(resolve, 50));
  return {
    url,
    ready: (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
      serve = handler;
    },
  };
}

/**
 * The variables the handlers read, as on AWS, pointing at this stack's endpoints. Settings a person
 * may set (`env`) keep their value; local receivers and MCP servers on this machine are allowed
 * here by explicit configuration, never on AWS.
 */
export function handlerEnvironment(
  endpoints: LocalStack["endpoints"],
  model: LocalStack["model"],
  consoleAssetsDir: string,
  env: Record<string, string | undefined>,
): Record<string, string> {
  return {
    AWS_REGION: endpoints.region,
    AWS_ACCESS_KEY_ID: endpoints.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: endpoints.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SFN: endpoints.sfn,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    FILES_BUCKET: endpoints.filesBucket,
    AWS_ENDPOINT_URL_LAMBDA: endpoints.lambda,
    SANDBOX_FUNCTION_NAME: SANDBOX_FUNCTION,
    SANDBOX_RUNTIME: endpoints.sandboxRuntime,
    ...(endpoints.agentCore
      ? { AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: endpoints.agentCore, CODE_INTERPRETER_ID: LOCAL_CODE_INTERPRETER_ID }
      : {}),
    NOTIFY_QUEUE_URL: endpoints.notifyQueueUrl,
    DEAD_LETTER_QUEUE_URL: endpoints.deadLetterQueueUrl,
    WEBHOOK_ALLOW_LOOPBACK: env.WEBHOOK_ALLOW_LOOPBACK ?? "true",
    WEBHOOK_ALLOW_HTTP: env.WEBHOOK_ALLOW_HTTP ?? "true",
    WEBHOOK_RETRY_SCHEDULE: env.WEBHOOK_RETRY_SCHEDULE ?? "fast",
    AWS_ENDPOINT_URL_KMS: endpoints.kms,
    TOOL_SOURCES_KMS_KEY_ID: LOCAL_KMS_KEY_ID,
    TOOL_SOURCE_ALLOW_LOOPBACK: env.TOOL_SOURCE_ALLOW_LOOPBACK ?? "true",
    TOOL_SOURCE_ALLOW_HTTP: env.TOOL_SOURCE_ALLOW_HTTP ?? "true",
    TABLE_NAME: endpoints.tableName,
    STATE_MACHINE_ARN: endpoints.stateMachineAliasArn,
    // No STREAM_URL: the API and the stream share this server, so links follow the Host the client used.
    CONSOLE_ASSETS_DIR: consoleAssetsDir,
    STEPWISE_MODEL: model.name,
    ...(model.offline ? { OPENAI_BASE_URL: model.url } : {}),
  };
}

/**
 * The handlers: the table and the API keys first, then the step functions' and the API's containers
 * when asked for, then the API function in this process (its first step admits every request). The
 * others (stream, notifier, each step) load at their first invocation, as a Lambda function's cold
 * start does: a test or a session that never runs a step does not pay for loading them.
 */
async function loadHandlers(parts: StackParts, options: LocalStackOptions, runners: StepRunners): Promise<void> {
  await ensureTable(new DynamoDBClient({}), TABLE_NAME);
  installStreamingShim();
  const { wire } = await import("../../functions/wiring.js");
  const { apiKeys } = wire({ ports: ["apiKeys"] }, {});
  await Promise.all(Object.entries(options.apiKeys).map(([key, tenant]) => apiKeys.register(key, tenant)));
  const steps = Object.values(STEP_HANDLERS);
  if (options.containers) {
    const started = new LocalContainers(options.containers, steps);
    parts.onClose(() => started.close());
    await parts.timed(`step functions in ${options.containers} containers`, () => started.ready());
    runners.steps = started;
  }
  if (options.apiContainers) {
    const started = new LocalContainers(options.apiContainers, [API_HANDLER]);
    parts.onClose(() => started.close());
    await parts.timed(`API in ${options.apiContainers} containers`, () => started.ready());
    runners.api = started;
  }
  await parts.timed("handlers", () => loadHandler(API_HANDLER));
}

/**
 * Which handler answers a path: the stream function (a Function URL on AWS) for a run's stream,
 * A2A, AG-UI and, unless `mcpRoute` says "api", MCP; the API function for the rest. An A2A message
 * carries its files' bytes, so /a2a is admitted as the API's /a2a route is (key, its larger limit).
 */
export function routeOf(rawPath: string, mcpRoute: LocalStackOptions["mcpRoute"]): { handler: "stream" | "api"; admitAsApi: boolean } {
  const stream =
    /^\/v1\/runs\/[^/]+\/stream\/?$|^\/a2a\/?$|^\/v1\/ag-ui\/?$/.test(rawPath) || (mcpRoute !== "api" && /^\/mcp\/?$/.test(rawPath));
  return { handler: stream ? "stream" : "api", admitAsApi: !stream || /^\/a2a\/?$/.test(rawPath) };
}

/**
 * The stack's requests, as API Gateway and Function URLs pass them to Lambda. The API's own first
 * step (route, key, declared length) runs on a request's head, before any body is read, and
 * reading stops at the route's limit: a request without a key or over the limit costs this process
 * no memory (on AWS, API Gateway holds bodies, at most 10 MiB). The stream checks its own key or
 * token; its GETs take a JSON body's limit.
 */
async function apiRequests(options: LocalStackOptions, apiContainers: LocalContainers | undefined) {
  const { admitHead } = await import("../../functions/api/handler.js");
  const { errorResult } = await import("../../functions/http.js");
  const streamAdmission = { maxBodyBytes: MAX_JSON_BODY_BYTES, tooLarge: errorResult(bodyTooLarge(MAX_JSON_BODY_BYTES)) };
  // On AWS, Lambda refuses a larger event and API Gateway answers 500: here, the 413 it stands for.
  const eventTooLargeAnswer = errorResult(eventTooLarge());
  return async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const head = requestHead(req);
      // API Gateway and Function URLs tell the handler which scheme the client used.
      head.headers["x-forwarded-proto"] ??= "http";
      const route = routeOf(head.rawPath, options.mcpRoute);
      const admission = route.admitAsApi ? await admitHead(head) : streamAdmission;
      if ("denied" in admission) return refuseBeforeBody(req, res, admission.denied);
      const body = await readBody(req, admission.maxBodyBytes);
      if (!body) return refuseBeforeBody(req, res, admission.tooLarge);
      const event = withBody(head, body);
      if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_SYNC_EVENT_BYTES) return sendResult(res, eventTooLargeAnswer);
      if (route.handler === "stream") return await invokeStreaming(STREAM_HANDLER, event, res);
      const result = await (apiContainers ? apiContainers.invoke(API_HANDLER, event) : invokeLambda(API_HANDLER, event));
      sendResult(res, result as Parameters<typeof sendResult>[1]);
    } catch (error) {
      if (!res.headersSent)
        sendResult(res, { statusCode: 500, body: JSON.stringify({ error: { code: "internal_error", message: String(error) } }) });
      else res.destroy();
    }
  };
}

/**
 * run_code's runtime here: as configured (a runtime this machine cannot run stops the start with
 * the reason), else the local code interpreter where it can run, else Pyodide.
 */
function localSandboxRuntime(configured: string | undefined): "agentcore" | "pyodide" {
  if (configured === "pyodide") return "pyodide";
  if (configured && configured !== "agentcore")
    throw new Error(
      `SANDBOX_RUNTIME must be agentcore or pyodide (or unset: agentcore where this machine can run it), not "${configured}"`,
    );
  const missing = cpythonMissing();
  if (!missing) return "agentcore";
  if (configured === "agentcore") throw new Error(`SANDBOX_RUNTIME=agentcore: the local code interpreter cannot run here: ${missing}`);
  return "pyodide";
}

/** The execution ARN of an EventBridge status-change message, if the message is one. */
function statusChangeArn(body: string): string | undefined {
  try {
    const event = JSON.parse(body) as { source?: string; resources?: string[] };
    return event.source === "aws.states" ? event.resources?.[0] : undefined;
  } catch {
    return undefined;
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** Before the handlers are loaded: a clear 503 (health answers in its own shape), never silence. */
function answerStarting(req: IncomingMessage, res: ServerResponse) {
  req.resume();
  const health = /^\/health\/?(\?|$)/.test(req.url ?? "");
  const body = health
    ? { status: "unavailable", version: packageJson.version, checks: { stack: "starting" } }
    : { error: { code: "starting", message: "Stepwise is starting; retry in a moment." } };
  res.writeHead(503, { "content-type": "application/json; charset=utf-8", "retry-after": "1", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}
