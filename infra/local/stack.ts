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
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const closer of closers.reverse()) await closer().catch(() => undefined);
  };
  // The SDK nags on Node 20 (the Lambda runtime is Node 22); the local stack runs on 20 by design.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  // Tracing is off outside Lambda (no X-Ray daemon): the X-Ray SDK under Powertools' Tracer starts in
  // manual mode, without the async hook its automatic mode puts on every promise (5 % of the CPU).
  process.env.AWS_XRAY_MANUAL_MODE ??= "true";
  const timed = async <T>(part: string, work: () => T | Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await work();
    options.progress?.(part, performance.now() - started);
    return result;
  };
  try {
    if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
    const credentials = localCredentials(options.dataDir && path.join(options.dataDir, "local-credentials.json"));
    const dynamo = await timed("database (dynalite)", () => startDynamo({ credentials, path: options.dataDir }));
    closers.push(dynamo.close);

    const useOffline = !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL;
    let modelUrl = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
    if (useOffline) {
      const offline = await timed("offline model", () => startOfflineModel({ latencyMs: options.modelLatencyMs ?? 150 }));
      closers.push(offline.close);
      modelUrl = offline.url;
    }

    const synthStarted = performance.now();
    const { definition, functions, cached } = await localDefinition(options.stateMachine ?? {});
    options.progress?.(`state machine (${cached ? "cached" : "synthesized, now cached"})`, performance.now() - synthStarted);
    // A slow start of the "Wait for …" function (a Lambda cold start), so tests can make a decision
    // arrive before the task token is stored — the race AwaitInterrupt must win on AWS too.
    const callbackDelayMs = Number(process.env.LOCAL_CALLBACK_START_DELAY_MS ?? 0);
    // Started once the environment below is set (the containers inherit it).
    let containers: LocalContainers | undefined;
    const versions = new LocalFunctionVersions(definition, functions);
    const stepFunctions = new LocalStepFunctions(
      "Stepwise",
      versions.publish(),
      async (arn, input) => {
        const version = versions.handler(arn);
        if (!version) throw new Error(`no local function for ${arn}`);
        if (version.step === "AwaitInterrupt" && callbackDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, callbackDelayMs));
        return containers ? containers.invoke(version.entry, input) : invokeLambda(version.entry, input);
      },
      { credentials, dataDir: options.dataDir ? path.join(options.dataDir, "stepfunctions") : undefined },
    );
    const sfnEndpoint = await stepFunctions.listen();
    closers.push(() => stepFunctions.close());

    // EventBridge → SQS → notifier: execution status changes reach the notify handler through a queue.
    const sqs = new LocalSqs(credentials);
    const sqsEndpoint = await sqs.listen();
    closers.push(() => sqs.close());
    const deadLetterQueueUrl = sqs.createQueue("stepwise-dead-letters");
    const notifyQueueUrl = sqs.createQueue("stepwise-notify", { queueUrl: deadLetterQueueUrl, maxReceiveCount: 5 });
    const eventBridge = new SQSClient({ endpoint: sqsEndpoint, region: LOCAL_REGION, credentials });
    if (options.onExecution) stepFunctions.on("status", options.onExecution);
    stepFunctions.on("status", (change: ExecutionStatusChange) => {
      if (change.status === "RUNNING") return;
      const event = {
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
      void eventBridge.send(new SendMessageCommand({ QueueUrl: notifyQueueUrl, MessageBody: JSON.stringify(event) }));
    });

    // S3: the files' bytes (tools: uploads, reports, code outputs); presigned links work here too.
    const s3 = new LocalS3({ region: LOCAL_REGION, ...credentials, dataDir: options.dataDir && path.join(options.dataDir, "s3") });
    const s3Endpoint = await s3.listen();
    closers.push(() => s3.close());
    s3.createBucket(FILES_BUCKET);
    // Lambda's Invoke API for the functions the agents call directly: the code sandbox.
    const lambdaApi = new LocalLambdaApi({ [SANDBOX_FUNCTION]: SANDBOX_HANDLER }, credentials);
    const lambdaEndpoint = await lambdaApi.listen();
    closers.push(() => lambdaApi.close());
    closers.push(() => stopSpare());
    // run_code's runtime: AgentCore Code Interpreter, emulated by CPython with the data libraries in
    // bubblewrap, where this machine has them (or SANDBOX_RUNTIME says so); else Pyodide in the sandbox function.
    const sandboxRuntime = localSandboxRuntime(process.env.SANDBOX_RUNTIME);
    let agentCoreEndpoint: string | undefined;
    let codeInterpreter: LocalCodeInterpreter | undefined;
    if (sandboxRuntime === "agentcore") {
      codeInterpreter = new LocalCodeInterpreter({ credentials });
      agentCoreEndpoint = await codeInterpreter.listen();
      const started = codeInterpreter;
      closers.push(() => started.close());
    }
    // KMS for sealed secrets (tool source headers); its key lives beside the data, or in memory.
    const kms = new LocalKms(credentials, options.dataDir ? path.join(options.dataDir, "local-kms.key") : undefined);
    const kmsEndpoint = await kms.listen();
    closers.push(() => kms.close());

    // Keep idle client connections longer than clients do (undici: 4 s), so a client never reuses a
    // socket the server is closing at that moment (ECONNRESET on a busy machine).
    // Every request the server accepts gets an answer: 503 with Retry-After until the stack is ready.
    let serve: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
    const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => (serve ? serve(req, res) : answerStarting(req, res)));
    // A port in use rejects here (EADDRINUSE), so the parts started so far are closed below.
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 3000, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    closers.push(() => closeServer(server));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Tests hold start-up here, the port accepting, until this file exists: what a slow start looks like.
    const hold = process.env.LOCAL_START_HOLD_FILE;
    while (hold && !existsSync(hold)) await new Promise((resolve) => setTimeout(resolve, 50));

    const modelName = process.env.STEPWISE_MODEL ?? (useOffline ? "stepwise-offline" : "gpt-4o-mini");
    Object.assign(process.env, {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SFN: sfnEndpoint,
      AWS_ENDPOINT_URL_SQS: sqsEndpoint,
      AWS_ENDPOINT_URL_S3: s3Endpoint,
      FILES_BUCKET,
      AWS_ENDPOINT_URL_LAMBDA: lambdaEndpoint,
      SANDBOX_FUNCTION_NAME: SANDBOX_FUNCTION,
      SANDBOX_RUNTIME: sandboxRuntime,
      ...(agentCoreEndpoint
        ? { AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: agentCoreEndpoint, CODE_INTERPRETER_ID: LOCAL_CODE_INTERPRETER_ID }
        : {}),
      NOTIFY_QUEUE_URL: notifyQueueUrl,
      DEAD_LETTER_QUEUE_URL: deadLetterQueueUrl,
      // Local receivers live on this machine: allowed here by explicit configuration, never on AWS.
      WEBHOOK_ALLOW_LOOPBACK: process.env.WEBHOOK_ALLOW_LOOPBACK ?? "true",
      WEBHOOK_ALLOW_HTTP: process.env.WEBHOOK_ALLOW_HTTP ?? "true",
      WEBHOOK_RETRY_SCHEDULE: process.env.WEBHOOK_RETRY_SCHEDULE ?? "fast",
      AWS_ENDPOINT_URL_KMS: kmsEndpoint,
      TOOL_SOURCES_KMS_KEY_ID: LOCAL_KMS_KEY_ID,
      // MCP servers of the walk-through and the tests run on this machine: allowed here only.
      TOOL_SOURCE_ALLOW_LOOPBACK: process.env.TOOL_SOURCE_ALLOW_LOOPBACK ?? "true",
      TOOL_SOURCE_ALLOW_HTTP: process.env.TOOL_SOURCE_ALLOW_HTTP ?? "true",
      TABLE_NAME: "stepwise",
      STATE_MACHINE_ARN: stepFunctions.aliasArn,
      // No STREAM_URL: the API and the stream share this server, so links follow the Host the client used.
      CONSOLE_ASSETS_DIR: await ensureConsoleBuilt(),
      STEPWISE_MODEL: modelName,
      ...(useOffline ? { OPENAI_BASE_URL: modelUrl } : {}),
    });

    const client = new DynamoDBClient({});
    await ensureTable(client, "stepwise");
    installStreamingShim();
    const { wire } = await import("../../functions/wiring.js");
    const { apiKeys } = wire({ ports: ["apiKeys"] }, {});
    await Promise.all(Object.entries(options.apiKeys).map(([key, tenant]) => apiKeys.register(key, tenant)));
    // Load the handlers now, so the first request does not pay for it.
    const steps = Object.values(STEP_HANDLERS);
    if (options.containers) {
      const started = new LocalContainers(options.containers, steps);
      closers.push(() => started.close());
      await timed(`step functions in ${options.containers} containers`, () => started.ready());
      containers = started;
    }
    let apiContainers: LocalContainers | undefined;
    if (options.apiContainers) {
      const started = new LocalContainers(options.apiContainers, [API_HANDLER]);
      closers.push(() => started.close());
      await timed(`API in ${options.apiContainers} containers`, () => started.ready());
      apiContainers = started;
    }
    await timed("handlers", () =>
      Promise.all([API_HANDLER, STREAM_HANDLER, NOTIFY_HANDLER, ...(containers ? [] : steps)].map(loadHandler)),
    );
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

    // The API's own first step (route, key, declared length) runs on a request's head, before any
    // body is read, and reading stops at the route's limit: a request without a key or over the
    // limit costs this process no memory (on AWS, API Gateway holds bodies, at most 10 MiB). The
    // stream (a Function URL on AWS) checks its own key or token; its GETs take a JSON body's limit.
    const { admitHead } = await import("../../functions/api/handler.js");
    const { errorResult } = await import("../../functions/http.js");
    const streamAdmission = { maxBodyBytes: MAX_JSON_BODY_BYTES, tooLarge: errorResult(bodyTooLarge(MAX_JSON_BODY_BYTES)) };
    // On AWS, Lambda refuses a larger event and API Gateway answers 500: here, the 413 it stands for.
    const eventTooLargeAnswer = errorResult(eventTooLarge());
    serve = async (req, res) => {
      try {
        const head = requestHead(req);
        // API Gateway and Function URLs tell the handler which scheme the client used.
        head.headers["x-forwarded-proto"] ??= "http";
        const stream =
          /^\/v1\/runs\/[^/]+\/stream\/?$|^\/a2a\/?$|^\/v1\/ag-ui\/?$/.test(head.rawPath) ||
          (options.mcpRoute !== "api" && /^\/mcp\/?$/.test(head.rawPath));
        // An A2A message carries its files' bytes: /a2a is admitted as the API's /a2a route is (key, its larger limit).
        const admission = stream && !/^\/a2a\/?$/.test(head.rawPath) ? streamAdmission : await admitHead(head);
        if ("denied" in admission) return refuseBeforeBody(req, res, admission.denied);
        const body = await readBody(req, admission.maxBodyBytes);
        if (!body) return refuseBeforeBody(req, res, admission.tooLarge);
        const event = withBody(head, body);
        if (Buffer.byteLength(JSON.stringify(event)) > LAMBDA_SYNC_EVENT_BYTES) return sendResult(res, eventTooLargeAnswer);
        if (stream) {
          await invokeStreaming(STREAM_HANDLER, event, res);
        } else {
          sendResult(
            res,
            (await (apiContainers ? apiContainers.invoke(API_HANDLER, event) : invokeLambda(API_HANDLER, event))) as Parameters<
              typeof sendResult
            >[1],
          );
        }
      } catch (error) {
        if (!res.headersSent)
          sendResult(res, { statusCode: 500, body: JSON.stringify({ error: { code: "internal_error", message: String(error) } }) });
        else res.destroy();
      }
    };

    const recovered = options.dataDir
      ? await timed("recovery of runs in flight", () => recoverRuns(stepFunctions, "stepwise"))
      : { continued: [], started: [], handedOn: [] };

    return {
      recovered,
      url,
      endpoints: {
        region: LOCAL_REGION,
        dynamodb: dynamo.endpoint,
        tableName: "stepwise",
        sfn: sfnEndpoint,
        stateMachineArn: stepFunctions.stateMachineArn,
        stateMachineAliasArn: stepFunctions.aliasArn,
        sqs: sqsEndpoint,
        notifyQueueUrl,
        deadLetterQueueUrl,
        s3: s3Endpoint,
        filesBucket: FILES_BUCKET,
        lambda: lambdaEndpoint,
        kms: kmsEndpoint,
        agentCore: agentCoreEndpoint,
        sandboxRuntime,
        credentials,
      },
      stepFunctions,
      deploy: (changed) => stepFunctions.publishVersion(versions.publish(changed)),
      containerPids: containers?.pids ?? [],
      apiContainerPids: apiContainers?.pids ?? [],
      model: { url: modelUrl, offline: useOffline, name: modelName },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
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
