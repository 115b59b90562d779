import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { API_HANDLER, STEP_HANDLERS, STREAM_HANDLER } from "../handlers.js";
import { ensureTable, startDynamo } from "./dynamo.js";
import { toApiGatewayEvent, sendResult } from "./httpApi.js";
import { installStreamingShim, invokeLambda, invokeStreaming, loadHandler } from "./lambda.js";
import { startOfflineModel } from "./offlineModel/server.js";
import { LocalStepFunctions } from "./stepFunctions.js";
import { LOCAL_REGION, stateMachineDefinition, synthesizeStack } from "./synth.js";
import type { StepwiseStackProps } from "../stack.js";

export interface LocalStackOptions {
  port?: number;
  /** Folder for dynalite's data; in memory when unset. */
  dataDir?: string;
  /** API keys to register: key → tenant. */
  apiKeys: Record<string, string>;
  /** Latency of the offline model per call, in ms. */
  modelLatencyMs?: number;
  /** Stack settings, as `cdk deploy` would take them (interrupt timeout, Map concurrency). */
  stackProps?: StepwiseStackProps;
}

export interface LocalStack {
  url: string;
  stepFunctions: LocalStepFunctions;
  model: { url: string; offline: boolean; name: string };
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
  try {
    if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
    const dynamo = await startDynamo({ path: options.dataDir });
    closers.push(dynamo.close);

    const useOffline = !process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL;
    let modelUrl = process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
    if (useOffline) {
      const offline = await startOfflineModel({ latencyMs: options.modelLatencyMs ?? 150 });
      closers.push(offline.close);
      modelUrl = offline.url;
    }

    const synthesized = synthesizeStack(options.stackProps);
    const { definition, functions } = stateMachineDefinition(synthesized);
    const stepFunctions = new LocalStepFunctions("Stepwise", definition, (arn, input) => {
      const step = functions.get(arn);
      if (!step) throw new Error(`no local function for ${arn}`);
      return invokeLambda(STEP_HANDLERS[step], input);
    });
    const sfnEndpoint = await stepFunctions.listen();
    closers.push(() => stepFunctions.close());

    const server = createServer();
    await new Promise<void>((resolve) => server.listen(options.port ?? 3000, "127.0.0.1", resolve));
    closers.push(() => closeServer(server));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    Object.assign(process.env, {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SFN: sfnEndpoint,
      TABLE_NAME: "stepwise",
      STATE_MACHINE_ARN: stepFunctions.stateMachineArn,
      STREAM_URL: url,
      STEPWISE_MODEL: process.env.STEPWISE_MODEL ?? (useOffline ? "stepwise-offline" : "gpt-4o-mini"),
      ...(useOffline ? { OPENAI_BASE_URL: modelUrl } : {}),
    });

    const client = new DynamoDBClient({});
    await ensureTable(client, "stepwise");
    installStreamingShim();
    const { getServices } = await import("../../functions/services.js");
    await Promise.all(Object.entries(options.apiKeys).map(([key, tenant]) => getServices().apiKeys.register(key, tenant)));
    // Load the handlers now, so the first request does not pay for it.
    await Promise.all([API_HANDLER, STREAM_HANDLER, ...Object.values(STEP_HANDLERS)].map(loadHandler));

    server.on("request", async (req, res) => {
      try {
        const event = await toApiGatewayEvent(req);
        // API Gateway and Function URLs tell the handler which scheme the client used.
        event.headers["x-forwarded-proto"] ??= "http";
        if (/^\/v1\/runs\/[^/]+\/stream\/?$/.test(event.rawPath)) {
          await invokeStreaming(STREAM_HANDLER, event, res);
        } else {
          sendResult(res, (await invokeLambda(API_HANDLER, event)) as any);
        }
      } catch (error) {
        if (!res.headersSent) sendResult(res, { statusCode: 500, body: JSON.stringify({ error: { code: "internal_error", message: String(error) } }) });
        else res.destroy();
      }
    });

    return { url, stepFunctions, model: { url: modelUrl, offline: useOffline, name: process.env.STEPWISE_MODEL! }, close };
  } catch (error) {
    await close();
    throw error;
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
