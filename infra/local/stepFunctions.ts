import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { toHistoryEvent } from "./executionHistory.js";
import { LOCAL_ACCOUNT, LOCAL_REGION } from "./synth.js";

// aws-local-stepfunctions 3 calls Promise.withResolvers, which Node 20 lacks.
if (!(Promise as any).withResolvers) {
  (Promise as any).withResolvers = function withResolvers<T>() {
    let resolve!: (value: T) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };
}
const { StateMachine, ExecutionAbortedError, ExecutionTimeoutError } = await import("aws-local-stepfunctions");

export type ExecutionStatus = "RUNNING" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED";

/** Runs one Task state: the local stand-in for Lambda (input is the state's processed input). */
export type TaskInvoker = (functionArn: string, input: unknown) => Promise<unknown>;

interface Execution {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  status: ExecutionStatus;
  startDate: Date;
  stopDate?: Date;
  output?: string;
  error?: string;
  cause?: string;
  history: Record<string, unknown>[];
  abort: () => void;
}

export interface ExecutionStatusChange {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  status: ExecutionStatus;
  input: string;
  output?: string;
  error?: string;
  cause?: string;
  startDate: Date;
  stopDate?: Date;
}

/** What `$$.Task.Token` reads in the local runtime; each callback task swaps in a fresh token. */
const TOKEN_PLACEHOLDER = "LOCAL_TASK_TOKEN_PLACEHOLDER";

interface PendingCallback {
  executionArn: string;
  resolve: (output: unknown) => void;
  reject: (error: Error) => void;
}

/** A Step Functions API error as the AWS SDK decodes it (`__type` names the exception). */
class ApiError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A loopback endpoint that speaks the Step Functions JSON API (the actions Stepwise uses) and runs
 * the synthesized definition with aws-local-stepfunctions, invoking the real handlers in-process.
 * Emits "status" with an ExecutionStatusChange whenever an execution starts or ends, as EventBridge
 * does on AWS.
 */
export class LocalStepFunctions extends EventEmitter {
  readonly stateMachineArn: string;
  private readonly executions = new Map<string, Execution>();
  private readonly callbacks = new Map<string, PendingCallback>();
  private readonly machine: InstanceType<typeof StateMachine>;
  private server?: Server;

  constructor(
    readonly name: string,
    readonly definition: string,
    private readonly invoke: TaskInvoker,
  ) {
    super();
    this.stateMachineArn = `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stateMachine:${name}`;
    this.machine = new StateMachine(JSON.parse(definition), { validationOptions: { checkArn: true, checkPaths: true } });
  }

  async listen(port = 0): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const execution of this.executions.values()) if (execution.status === "RUNNING") execution.abort();
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise((resolve) => this.server!.close(resolve));
    }
  }

  /** Resolves when no execution is running (for orderly shutdown and tests). */
  get running(): number {
    return [...this.executions.values()].filter((e) => e.status === "RUNNING").length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers["x-amz-target"] ?? "");
    const action = target.startsWith("AWSStepFunctions.") ? target.slice("AWSStepFunctions.".length) : "";
    let status = 200;
    let body: unknown;
    try {
      const input = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
      body = await this.dispatch(action, input);
    } catch (error) {
      status = 400;
      body =
        error instanceof ApiError
          ? { __type: error.type, message: error.message }
          : { __type: "InvalidParameterValue", message: error instanceof Error ? error.message : String(error) };
    }
    res.writeHead(status, { "content-type": "application/x-amz-json-1.0" });
    res.end(JSON.stringify(body));
  }

  private async dispatch(action: string, input: any): Promise<unknown> {
    switch (action) {
      case "StartExecution":
        return this.startExecution(input);
      case "DescribeExecution":
        return this.describeExecution(input.executionArn);
      case "StopExecution":
        return this.stopExecution(input);
      case "GetExecutionHistory":
        return this.getExecutionHistory(input);
      case "DescribeStateMachine":
        return this.describeStateMachine(input.stateMachineArn);
      case "SendTaskSuccess": {
        const output = parseOutput(input.output);
        return this.completeCallback(input.taskToken, (cb) => cb.resolve(output));
      }
      case "SendTaskFailure":
        return this.completeCallback(input.taskToken, (cb) => cb.reject(taskFailure(input.error, input.cause)));
      case "SendTaskHeartbeat":
        this.callback(input.taskToken);
        return {};
      default:
        throw new ApiError("UnknownOperationException", `${action || "(no action)"} is not supported by the local Step Functions endpoint`);
    }
  }

  private startExecution(input: { stateMachineArn?: string; name?: string; input?: string }) {
    if (input.stateMachineArn !== this.stateMachineArn) throw new ApiError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${input.stateMachineArn}'`);
    const name = input.name ?? crypto.randomUUID();
    const executionArn = `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:execution:${this.name}:${name}`;
    const rawInput = input.input ?? "{}";
    const existing = this.executions.get(executionArn);
    if (existing) {
      // Standard workflows: the same name and input while running is idempotent.
      if (existing.status === "RUNNING" && existing.input === rawInput) return { executionArn, startDate: seconds(existing.startDate) };
      throw new ApiError("ExecutionAlreadyExists", `Execution Already Exists: '${executionArn}'`);
    }
    const startDate = new Date();
    const run = this.machine.run(JSON.parse(rawInput), {
      overrides: { taskResourceLocalHandlers: this.taskHandlers(executionArn) },
      context: {
        Execution: { Id: executionArn, Name: name, Input: JSON.parse(rawInput), StartTime: startDate.toISOString(), RoleArn: "" },
        Task: { Token: TOKEN_PLACEHOLDER },
      },
    });
    const execution: Execution = {
      executionArn,
      stateMachineArn: this.stateMachineArn,
      name,
      input: rawInput,
      status: "RUNNING",
      startDate,
      history: [],
      abort: run.abort,
    };
    this.executions.set(executionArn, execution);
    void this.record(execution, run.eventLogs);
    run.result.then(
      (output) => this.finish(execution, "SUCCEEDED", { output: JSON.stringify(output) }),
      (error: unknown) => {
        if (error instanceof ExecutionAbortedError) return this.finish(execution, "ABORTED", {});
        if (error instanceof ExecutionTimeoutError) return this.finish(execution, "TIMED_OUT", { error: "States.Timeout" });
        const failure = error as { name?: string; message?: string; cause?: unknown };
        const cause = (failure as any).cause;
        this.finish(execution, "FAILED", {
          error: cause?.name ?? failure.name ?? "Error",
          cause: cause?.message ?? failure.message ?? String(error),
        });
      },
    );
    this.emit("status", change(execution));
    return { executionArn, startDate: seconds(startDate) };
  }

  private finish(execution: Execution, status: ExecutionStatus, result: { output?: string; error?: string; cause?: string }) {
    if (execution.status !== "RUNNING") return;
    Object.assign(execution, { status, stopDate: new Date() }, result);
    // Tokens of an ended execution are dead, as on AWS.
    for (const [token, callback] of this.callbacks) if (callback.executionArn === execution.executionArn) this.callbacks.delete(token);
    this.emit("status", change(execution));
  }

  /**
   * Every Task state (also inside Map) runs its Lambda in-process. A `.waitForTaskToken` task gets a
   * fresh token, invokes its function with it, and waits for SendTaskSuccess / SendTaskFailure.
   */
  private taskHandlers(executionArn: string): Record<string, (input: any) => Promise<any>> {
    const handlers: Record<string, (input: any) => Promise<any>> = {};
    const visit = (states: Record<string, any>) => {
      for (const [name, state] of Object.entries(states)) {
        if (state.Type !== "Task") {
          // not a task
        } else if (String(state.Resource).endsWith(".waitForTaskToken")) {
          handlers[name] = (input) => this.waitForCallback(executionArn, input);
        } else {
          handlers[name] = (input) => this.invoke(state.Resource, input) as Promise<any>;
        }
        const inner = state.ItemProcessor ?? state.Iterator;
        if (inner) visit(inner.States);
        for (const branch of state.Branches ?? []) visit(branch.States);
      }
    };
    visit(JSON.parse(this.definition).States);
    return handlers;
  }

  private async waitForCallback(executionArn: string, input: { FunctionName: string; Payload: unknown }): Promise<any> {
    const token = `AQ${randomBytes(96).toString("base64url")}`;
    const payload = JSON.parse(JSON.stringify(input.Payload).replaceAll(TOKEN_PLACEHOLDER, token));
    const result = new Promise((resolve, reject) => this.callbacks.set(token, { executionArn, resolve, reject }));
    try {
      await this.invoke(input.FunctionName, payload);
    } catch (error) {
      this.callbacks.delete(token);
      throw error;
    }
    return result;
  }

  private callback(token: unknown): PendingCallback {
    if (typeof token !== "string" || !token.startsWith("AQ")) throw new ApiError("InvalidToken", "Invalid Token: the task token is malformed");
    const callback = this.callbacks.get(token);
    if (!callback) throw new ApiError("TaskTimedOut", "Task Timed Out: 'Provided task does not exist anymore'");
    return callback;
  }

  private completeCallback(token: unknown, settle: (callback: PendingCallback) => void) {
    const callback = this.callback(token);
    this.callbacks.delete(token as string);
    settle(callback);
    return {};
  }

  private async record(execution: Execution, logs: AsyncGenerator<any>) {
    try {
      for await (const log of logs) execution.history.push(toHistoryEvent(log, execution.history.length + 1));
    } catch {
      // the generator ends with the execution
    }
  }

  private get(executionArn: string): Execution {
    const execution = this.executions.get(executionArn);
    if (!execution) throw new ApiError("ExecutionDoesNotExist", `Execution Does Not Exist: '${executionArn}'`);
    return execution;
  }

  private describeExecution(executionArn: string) {
    const e = this.get(executionArn);
    return {
      executionArn: e.executionArn,
      stateMachineArn: e.stateMachineArn,
      name: e.name,
      status: e.status,
      startDate: seconds(e.startDate),
      stopDate: e.stopDate ? seconds(e.stopDate) : undefined,
      input: e.input,
      output: e.output,
      error: e.error,
      cause: e.cause,
    };
  }

  private stopExecution(input: { executionArn: string; error?: string; cause?: string }) {
    const execution = this.get(input.executionArn);
    if (execution.status === "RUNNING") {
      execution.abort();
      this.finish(execution, "ABORTED", { error: input.error, cause: input.cause });
    }
    return { stopDate: seconds(execution.stopDate ?? new Date()) };
  }

  private getExecutionHistory(input: { executionArn: string; maxResults?: number; nextToken?: string; reverseOrder?: boolean }) {
    const events = [...this.get(input.executionArn).history];
    if (input.reverseOrder) events.reverse();
    const start = input.nextToken ? Number(input.nextToken) : 0;
    const size = input.maxResults || 1000;
    const page = events.slice(start, start + size);
    return { events: page, nextToken: start + size < events.length ? String(start + size) : undefined };
  }

  private describeStateMachine(stateMachineArn: string) {
    if (stateMachineArn !== this.stateMachineArn) throw new ApiError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${stateMachineArn}'`);
    return {
      stateMachineArn,
      name: this.name,
      status: "ACTIVE",
      definition: this.definition,
      roleArn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/local`,
      type: "STANDARD",
      creationDate: seconds(new Date(0)),
    };
  }
}

const seconds = (date: Date) => date.getTime() / 1000;

function parseOutput(output: unknown): unknown {
  if (typeof output !== "string") throw new ApiError("InvalidOutput", "Invalid Output: output must be a JSON string");
  try {
    return JSON.parse(output);
  } catch {
    throw new ApiError("InvalidOutput", "Invalid Output: output is not valid JSON");
  }
}

function taskFailure(error?: string, cause?: string): Error {
  const failure = new Error(cause ?? "");
  failure.name = error ?? "States.TaskFailed";
  return failure;
}

function change(e: Execution): ExecutionStatusChange {
  const { executionArn, stateMachineArn, name, status, input, output, error, cause, startDate, stopDate } = e;
  return { executionArn, stateMachineArn, name, status, input, output, error, cause, startDate, stopDate };
}
