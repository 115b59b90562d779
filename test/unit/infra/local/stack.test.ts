import { describe, expect, it } from "vitest";
import { handlerEnvironment, routeOf, statusChangeEvent } from "../../../../infra/local/stack.js";
import { ExecutionStatusEvent } from "../../../../shared/contracts/notify.js";

/** The local stack's decisions, without starting it: where a request goes, what the handlers read, what the notifier hears. */

describe("routeOf", () => {
  it("a run's stream, A2A, AG-UI and MCP go to the stream function; every other path to the API", () => {
    expect(routeOf("/v1/runs/run_1/stream", undefined).handler).toBe("stream");
    expect(routeOf("/v1/ag-ui/", undefined).handler).toBe("stream");
    expect(routeOf("/a2a", undefined).handler).toBe("stream");
    expect(routeOf("/mcp", undefined).handler).toBe("stream");
    for (const path of ["/v1/runs", "/v1/runs/run_1", "/v1/runs/run_1/stream/x", "/health", "/", "/mcp/x"]) {
      expect(routeOf(path, undefined)).toEqual({ handler: "api", admitAsApi: true });
    }
  });

  it("MCP goes to the API function when the stack is told so (the HTTP API's URL on AWS)", () => {
    expect(routeOf("/mcp", "api")).toEqual({ handler: "api", admitAsApi: true });
    expect(routeOf("/mcp", "stream")).toEqual({ handler: "stream", admitAsApi: false });
  });

  it("the stream function checks its own key, except A2A, admitted as the API's route (its files make it larger)", () => {
    expect(routeOf("/v1/runs/run_1/stream", undefined).admitAsApi).toBe(false);
    expect(routeOf("/a2a/", undefined)).toEqual({ handler: "stream", admitAsApi: true });
  });
});

describe("handlerEnvironment", () => {
  const endpoints = {
    region: "us-east-1",
    dynamodb: "http://127.0.0.1:1001",
    tableName: "stepwise",
    sfn: "http://127.0.0.1:1002",
    stateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:Stepwise",
    stateMachineAliasArn: "arn:aws:states:us-east-1:000000000000:stateMachine:Stepwise:live",
    sqs: "http://127.0.0.1:1003",
    notifyQueueUrl: "http://127.0.0.1:1003/q/notify",
    deadLetterQueueUrl: "http://127.0.0.1:1003/q/dead",
    s3: "http://127.0.0.1:1004",
    filesBucket: "stepwise-files",
    lambda: "http://127.0.0.1:1005",
    kms: "http://127.0.0.1:1006",
    sandboxRuntime: "pyodide" as const,
    credentials: { accessKeyId: "stepwise-local", secretAccessKey: "secret" },
  };
  const offline = { url: "http://127.0.0.1:1007/v1", offline: true, name: "stepwise-offline" };

  it("points every handler at this stack's endpoints, signed with its credentials, new runs through the alias", () => {
    const env = handlerEnvironment(endpoints, offline, "/assets", {});
    expect(env).toMatchObject({
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_SFN: endpoints.sfn,
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      AWS_ENDPOINT_URL_S3: endpoints.s3,
      AWS_ENDPOINT_URL_LAMBDA: endpoints.lambda,
      AWS_ENDPOINT_URL_KMS: endpoints.kms,
      AWS_ACCESS_KEY_ID: "stepwise-local",
      AWS_SECRET_ACCESS_KEY: "secret",
      STATE_MACHINE_ARN: endpoints.stateMachineAliasArn,
      NOTIFY_QUEUE_URL: endpoints.notifyQueueUrl,
      DEAD_LETTER_QUEUE_URL: endpoints.deadLetterQueueUrl,
      CONSOLE_ASSETS_DIR: "/assets",
      OPENAI_BASE_URL: offline.url,
      STEPWISE_MODEL: "stepwise-offline",
      SANDBOX_RUNTIME: "pyodide",
    });
    expect(env).not.toHaveProperty("STREAM_URL");
    expect(env).not.toHaveProperty("AWS_ENDPOINT_URL_BEDROCK_AGENTCORE");
  });

  it("the code interpreter's endpoint only when run_code runs there; a configured model keeps its own base URL", () => {
    const env = handlerEnvironment(
      { ...endpoints, sandboxRuntime: "agentcore", agentCore: "http://127.0.0.1:1008" },
      { url: "https://api.openai.com/v1", offline: false, name: "gpt-4o-mini" },
      "/assets",
      {},
    );
    expect(env).toMatchObject({ SANDBOX_RUNTIME: "agentcore", AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: "http://127.0.0.1:1008" });
    expect(env.CODE_INTERPRETER_ID).toBeTruthy();
    expect(env).not.toHaveProperty("OPENAI_BASE_URL");
  });

  it("loopback receivers and MCP servers are allowed by default on one machine, and a person's own setting wins", () => {
    expect(handlerEnvironment(endpoints, offline, "/assets", {})).toMatchObject({
      WEBHOOK_ALLOW_LOOPBACK: "true",
      TOOL_SOURCE_ALLOW_LOOPBACK: "true",
      WEBHOOK_RETRY_SCHEDULE: "fast",
    });
    const strict = handlerEnvironment(endpoints, offline, "/assets", {
      WEBHOOK_ALLOW_LOOPBACK: "false",
      TOOL_SOURCE_ALLOW_HTTP: "false",
      WEBHOOK_RETRY_SCHEDULE: "standard",
    });
    expect(strict).toMatchObject({ WEBHOOK_ALLOW_LOOPBACK: "false", TOOL_SOURCE_ALLOW_HTTP: "false", WEBHOOK_RETRY_SCHEDULE: "standard" });
  });
});

describe("statusChangeEvent", () => {
  it("is the EventBridge event the notifier reads, with its dates as epoch milliseconds", () => {
    const change = {
      executionArn: "arn:aws:states:us-east-1:000000000000:execution:Stepwise:run_1",
      stateMachineArn: "arn:aws:states:us-east-1:000000000000:stateMachine:Stepwise",
      name: "run_1",
      status: "FAILED" as const,
      input: "{}",
      redriveCount: 0,
      error: "States.TaskFailed",
      startDate: new Date("2026-11-27T10:00:00Z"),
      stopDate: new Date("2026-11-27T10:01:00Z"),
    };
    const event = statusChangeEvent(change);
    expect(ExecutionStatusEvent.parse(event).detail).toMatchObject({
      executionArn: change.executionArn,
      status: "FAILED",
      error: "States.TaskFailed",
    });
    expect(event.resources).toEqual([change.executionArn]);
    expect(event.detail).toMatchObject({ startDate: Date.parse("2026-11-27T10:00:00Z"), stopDate: Date.parse("2026-11-27T10:01:00Z") });
    expect(statusChangeEvent({ ...change, status: "RUNNING", stopDate: undefined }).detail.stopDate).toBeNull();
  });
});
