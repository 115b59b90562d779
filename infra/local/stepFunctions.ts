import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { RunOptions } from "aws-local-stepfunctions";
import { LIVE_ALIAS } from "../../shared/store/stepFunctions.js";
import { LOCAL_ACCOUNT, LOCAL_REGION } from "./account.js";
import { toHistoryEvent } from "./executionHistory.js";
import { type ExecutionRecord, type ExecutionStatus, ExecutionStore, type ResumePoint } from "./executionStore.js";
import { type LocalCredentials, refuseUnsigned } from "./sigv4.mjs";

// aws-local-stepfunctions 3 calls Promise.withResolvers, which Node 20 lacks.
const promiseStatics = Promise as unknown as { withResolvers?: unknown };
promiseStatics.withResolvers ??= <T>() => {
  const resolvers: { resolve?: (value: T) => void; reject?: (reason?: unknown) => void } = {};
  const promise = new Promise<T>((resolve, reject) => Object.assign(resolvers, { resolve, reject }));
  return { promise, ...resolvers };
};
const { StateMachine, ExecutionAbortedError, ExecutionTimeoutError } = await import("aws-local-stepfunctions");

/** The parts of an Amazon States Language state read here. */
interface AslState {
  Type: string;
  Resource?: string;
  Retry?: unknown[];
  ItemProcessor?: { States: Record<string, AslState> };
  Iterator?: { States: Record<string, AslState> };
  Branches?: { States: Record<string, AslState> }[];
}

/** The library's local stand-ins for Task states, by state name. */
type TaskHandlers = NonNullable<NonNullable<RunOptions["overrides"]>["taskResourceLocalHandlers"]>;
type TaskOutput = Awaited<ReturnType<TaskHandlers[string]>>;
/** What the library logs while an execution runs. */
export type EventLog = ReturnType<InstanceType<typeof StateMachine>["run"]>["eventLogs"] extends AsyncGenerator<infer E> ? E : never;

/** Runs one Task state: the local stand-in for Lambda (input is the state's processed input). */
export type TaskInvoker = (functionArn: string, input: unknown) => Promise<unknown>;

interface Execution extends ExecutionRecord {
  /** In memory while the execution runs (or for the last few ended ones when nothing is kept on disk). */
  history?: Record<string, unknown>[];
  historyLength: number;
  abort?: () => void;
}

export interface ExecutionStatusChange {
  executionArn: string;
  stateMachineArn: string;
  stateMachineVersionArn?: string;
  stateMachineAliasArn?: string;
  name: string;
  status: ExecutionStatus;
  input: string;
  output?: string;
  error?: string;
  cause?: string;
  startDate: Date;
  stopDate?: Date;
  redriveCount: number;
}

/** Without a data folder, the histories of this many ended executions stay readable. */
const ENDED_HISTORIES_KEPT = 200;

/** What `$$.Task.Token` reads in the local runtime; each callback task swaps in a fresh token. */
const TOKEN_PLACEHOLDER = "LOCAL_TASK_TOKEN_PLACEHOLDER";

interface PendingCallback {
  executionArn: string;
  resolve: (output: unknown) => void;
  reject: (error: Error) => void;
}

/** One published version of the state machine: its definition, started at any top-level state on demand. */
interface MachineVersion {
  number: number;
  arn: string;
  created: Date;
  definition: string;
  states: Record<string, AslState>;
  /** The definition as written. */
  start: InstanceType<typeof StateMachine>;
  /** The definition by start state, started elsewhere to resume. */
  machines: Map<string, InstanceType<typeof StateMachine>>;
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
 *
 * With a folder, executions outlive the process: each is kept with the last top-level state it
 * entered, and `continueInFlight()` (at start) continues those that were running from that state,
 * as RedriveExecution continues a failed one. Every step is journaled, so running a state again
 * replays what it had done; a "Wait for …" state run again stores a fresh task token.
 */
export class LocalStepFunctions extends EventEmitter {
  readonly stateMachineArn: string;
  /** The alias new runs start through (the API's STATE_MACHINE_ARN, as on AWS). */
  readonly aliasArn: string;
  private readonly versions: MachineVersion[] = [];
  private readonly executions = new Map<string, Execution>();
  private readonly callbacks = new Map<string, PendingCallback>();
  private readonly store: ExecutionStore;
  private readonly ended: string[] = [];
  private closing = false;
  private server?: Server;
  private readonly credentials: LocalCredentials;
  private readonly retryDelayMs?: number;
  /**
   * API requests answered, by action: what the account's Step Functions API quotas would see
   * (GetExecutionHistory has the smallest, 20 calls/s), for tests and benchmarks to count.
   */
  readonly requests = new Map<string, number>();

  /**
   * `retryDelayMs`: every Retry waits this long instead of its interval with backoff and jitter
   * (seconds), for tests that crash many attempts; the local stack keeps the definition's.
   * `validated`: the definition has passed validation already (the definition cache validates what
   * it keeps), so the first version is published without compiling the ASL schemas again.
   */
  constructor(
    readonly name: string,
    definition: string,
    private readonly invoke: TaskInvoker,
    options: { credentials: LocalCredentials; dataDir?: string; retryDelayMs?: number; validated?: boolean },
  ) {
    super();
    this.credentials = options.credentials;
    this.retryDelayMs = options.retryDelayMs;
    this.stateMachineArn = `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stateMachine:${name}`;
    this.aliasArn = `${this.stateMachineArn}:${LIVE_ALIAS}`;
    this.publishVersion(definition, options.validated);
    this.store = new ExecutionStore(options.dataDir);
    for (const record of this.store.all()) this.executions.set(record.executionArn, { ...record, historyLength: 0 });
  }

  /**
   * A deploy: publishes this definition as the next version and moves the alias to it. Executions
   * already running keep their version; new ones started through the alias run this one.
   * Returns the version's ARN.
   */
  publishVersion(definition: string, validated = false): string {
    const parsed = JSON.parse(definition);
    const number = this.versions.length + 1;
    const machine = new StateMachine(parsed, {
      validationOptions: validated ? { noValidate: true } : { checkArn: true, checkPaths: true },
    });
    const version: MachineVersion = {
      number,
      arn: `${this.stateMachineArn}:${number}`,
      created: new Date(),
      definition,
      states: parsed.States,
      start: machine,
      machines: new Map([[parsed.StartAt, machine]]),
    };
    this.versions.push(version);
    return version.arn;
  }

  /** The version the alias points at: the last one published. */
  get liveVersion(): MachineVersion {
    const live = this.versions.at(-1);
    if (!live) throw new Error("No version of the state machine is published yet.");
    return live;
  }

  /** The definition new runs get (the live version's). */
  get definition(): string {
    return this.liveVersion.definition;
  }

  async listen(port = 0): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * Continues the kept executions that were running when the process stopped, each from the last
   * top-level state it entered, and announces again the ended ones whose status change was not
   * yet handled. Returns the names of the executions continued.
   */
  continueInFlight(): string[] {
    const continued: string[] = [];
    for (const execution of this.executions.values()) {
      if (execution.status === "RUNNING" && !execution.abort) {
        this.launch(execution, execution.resumeFrom);
        continued.push(execution.name);
      } else if (execution.status !== "RUNNING" && this.store.persistent && !execution.notified) {
        this.emit("status", change(execution));
      }
    }
    return continued;
  }

  /** The status change of this ended execution was handled (kept, so a restart does not repeat it). */
  markNotified(executionArn: string): void {
    const execution = this.executions.get(executionArn);
    if (!execution || execution.status === "RUNNING" || execution.notified) return;
    execution.notified = true;
    this.store.save(recordOf(execution));
  }

  async close(): Promise<void> {
    // Stopping the process is not stopping the runs: kept executions stay RUNNING on disk and continue at the next start.
    this.closing = true;
    for (const execution of this.executions.values()) if (execution.status === "RUNNING") execution.abort?.();
    const { server } = this;
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  /** How many executions are running (for orderly shutdown and tests). */
  get running(): number {
    return [...this.executions.values()].filter((e) => e.status === "RUNNING").length;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (await refuseUnsigned(req, Buffer.concat(chunks), this.credentials, res)) return;
    const target = String(req.headers["x-amz-target"] ?? "");
    const action = target.startsWith("AWSStepFunctions.") ? target.slice("AWSStepFunctions.".length) : "";
    this.requests.set(action, (this.requests.get(action) ?? 0) + 1);
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

  // biome-ignore lint/suspicious/noExplicitAny: the request's JSON body, whose fields depend on the action (each case reads the ones the AWS API defines for it)
  private async dispatch(action: string, input: any): Promise<unknown> {
    switch (action) {
      case "StartExecution":
        return this.startExecution(input);
      case "DescribeExecution":
        return this.describeExecution(input.executionArn);
      case "StopExecution":
        return this.stopExecution(input);
      case "RedriveExecution":
        return this.redriveExecution(input);
      case "GetExecutionHistory":
        return this.getExecutionHistory(input);
      case "DescribeStateMachine":
        return this.describeStateMachine(input.stateMachineArn);
      case "ListStateMachineVersions":
        return this.listVersions(input);
      case "ListExecutions":
        return this.listExecutions(input);
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

  /** The published versions, newest first (as AWS lists them), a page at a time. */
  private listVersions(input: { stateMachineArn?: string; maxResults?: number; nextToken?: string }) {
    if (input.stateMachineArn !== this.stateMachineArn)
      throw new ApiError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${input.stateMachineArn}'`);
    const all = [...this.versions].reverse().map((v) => ({ stateMachineVersionArn: v.arn, creationDate: v.created.getTime() / 1000 }));
    const { items, nextToken } = pageOf(all, input);
    return { stateMachineVersions: items, ...(nextToken ? { nextToken } : {}) };
  }

  /**
   * The executions of the state machine, of one of its versions or of its alias (the ARN given says
   * which), newest first, optionally of one status, a page at a time.
   */
  private listExecutions(input: { stateMachineArn?: string; statusFilter?: string; maxResults?: number; nextToken?: string }) {
    const arn = input.stateMachineArn;
    const of = (e: Execution) =>
      arn === this.stateMachineArn || arn === e.stateMachineVersionArn || (arn !== undefined && arn === e.stateMachineAliasArn);
    if (arn !== this.stateMachineArn && arn !== this.aliasArn && !this.versions.some((v) => v.arn === arn))
      throw new ApiError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${arn}'`);
    const all = [...this.executions.values()]
      .filter((e) => of(e) && (!input.statusFilter || e.status === input.statusFilter))
      .sort((a, b) => b.startDate - a.startDate)
      .map((e) => ({
        executionArn: e.executionArn,
        stateMachineArn: e.stateMachineArn,
        ...(e.stateMachineVersionArn ? { stateMachineVersionArn: e.stateMachineVersionArn } : {}),
        ...(e.stateMachineAliasArn ? { stateMachineAliasArn: e.stateMachineAliasArn } : {}),
        name: e.name,
        status: e.status,
        startDate: e.startDate / 1000,
        ...(e.stopDate ? { stopDate: e.stopDate / 1000 } : {}),
        redriveCount: e.redriveCount,
      }));
    const { items, nextToken } = pageOf(all, input);
    return { executions: items, ...(nextToken ? { nextToken } : {}) };
  }

  private startExecution(input: { stateMachineArn?: string; name?: string; input?: string }) {
    const target = this.startTarget(input.stateMachineArn);
    const name = input.name ?? crypto.randomUUID();
    const executionArn = `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:execution:${this.name}:${name}`;
    const rawInput = input.input ?? "{}";
    const existing = this.executions.get(executionArn);
    if (existing) {
      // Standard workflows: the same name and input while running is idempotent.
      if (existing.status === "RUNNING" && existing.input === rawInput) return { executionArn, startDate: existing.startDate / 1000 };
      throw new ApiError("ExecutionAlreadyExists", `Execution Already Exists: '${executionArn}'`);
    }
    const execution: Execution = {
      executionArn,
      stateMachineArn: this.stateMachineArn,
      ...target,
      name,
      input: rawInput,
      status: "RUNNING",
      startDate: Date.now(),
      redriveCount: 0,
      historyLength: 0,
    };
    this.executions.set(executionArn, execution);
    this.launch(execution);
    this.emit("status", change(execution));
    return { executionArn, startDate: execution.startDate / 1000 };
  }

  /**
   * What StartExecution runs: through the alias, its version; a version ARN, that version; the
   * state machine's own ARN, its latest definition (as on AWS, with no version recorded).
   */
  private startTarget(arn: string | undefined): { stateMachineVersionArn?: string; stateMachineAliasArn?: string } {
    if (arn === this.stateMachineArn) return {};
    if (arn === this.aliasArn) return { stateMachineAliasArn: arn, stateMachineVersionArn: this.liveVersion.arn };
    const version = this.versions.find((v) => v.arn === arn);
    if (version) return { stateMachineVersionArn: version.arn };
    throw new ApiError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${arn}'`);
  }

  /**
   * The version an execution runs. Versions live as long as the process: an execution kept on disk
   * from an earlier start (whose versions are gone) continues on the live one.
   */
  private versionOf(execution: Execution): MachineVersion {
    return this.versions.find((v) => v.arn === execution.stateMachineVersionArn) ?? this.liveVersion;
  }

  /** Runs the execution from its start, or from a state it had reached (resuming after a restart or a redrive). */
  private launch(execution: Execution, from?: ResumePoint) {
    const { executionArn, name } = execution;
    const version = this.versionOf(execution);
    const machine = from ? this.machineFrom(version, from.state) : version.start;
    const originalInput = JSON.parse(execution.input);
    execution.history ??= this.store.history(name);
    execution.historyLength = execution.history.length;
    this.store.save(recordOf(execution));
    const run = machine.run(from ? from.input : originalInput, {
      overrides: {
        taskResourceLocalHandlers: this.taskHandlers(executionArn, version.states),
        retryIntervalOverrides: this.retryIntervals(version.states),
      },
      context: {
        Execution: {
          Id: executionArn,
          Name: name,
          Input: originalInput,
          StartTime: new Date(execution.startDate).toISOString(),
          RoleArn: "",
        },
        Task: { Token: TOKEN_PLACEHOLDER },
      },
    });
    execution.abort = run.abort;
    void this.record(execution, execution.history, run.eventLogs);
    run.result.then(
      (output) => this.finish(execution, "SUCCEEDED", { output: JSON.stringify(output) }),
      (error: unknown) => {
        if (error instanceof ExecutionAbortedError) return this.finish(execution, "ABORTED", {});
        if (error instanceof ExecutionTimeoutError) return this.finish(execution, "TIMED_OUT", { error: "States.Timeout" });
        const failure = error as { name?: string; message?: string; cause?: { name?: string; message?: string } };
        const { cause } = failure;
        this.finish(execution, "FAILED", {
          error: cause?.name ?? failure.name ?? "Error",
          cause: cause?.message ?? failure.message ?? String(error),
        });
      },
    );
  }

  /** The definition started at another of its top-level states (already validated as a whole). */
  private machineFrom(version: MachineVersion, state: string) {
    let machine = version.machines.get(state);
    if (!machine) {
      machine = new StateMachine({ ...JSON.parse(version.definition), StartAt: state }, { validationOptions: { noValidate: true } });
      version.machines.set(state, machine);
    }
    return machine;
  }

  private finish(execution: Execution, status: ExecutionStatus, result: { output?: string; error?: string; cause?: string }) {
    if (execution.status !== "RUNNING" || this.closing) return;
    Object.assign(execution, { status, stopDate: Date.now(), output: undefined, error: undefined, cause: undefined }, result);
    execution.abort = undefined;
    // Tokens of an ended execution are dead, as on AWS.
    for (const [token, callback] of this.callbacks) if (callback.executionArn === execution.executionArn) this.callbacks.delete(token);
    this.store.save(recordOf(execution));
    this.forgetHistory(execution);
    this.emit("status", change(execution));
  }

  /** Ended executions do not keep their history in memory: it is on disk, or only the last few keep it. */
  private forgetHistory(execution: Execution) {
    if (this.store.persistent) {
      // The history logger may still be writing the last events: let it finish first.
      setImmediate(() => {
        if (execution.status !== "RUNNING") execution.history = undefined;
      });
      return;
    }
    this.ended.push(execution.executionArn);
    for (const arn of this.ended.splice(0, Math.max(0, this.ended.length - ENDED_HISTORIES_KEPT))) {
      const old = this.executions.get(arn);
      if (old && old.status !== "RUNNING") old.history = undefined;
    }
  }

  /**
   * Every Task state (also inside Map) runs its Lambda in-process. A `.waitForTaskToken` task gets a
   * fresh token, invokes its function with it, and waits for SendTaskSuccess / SendTaskFailure.
   */
  private taskHandlers(executionArn: string, states: Record<string, AslState>): TaskHandlers {
    const handlers: TaskHandlers = {};
    for (const [name, state] of allStates(states)) {
      if (state.Type !== "Task") continue;
      handlers[name] = String(state.Resource).endsWith(".waitForTaskToken")
        ? (input) => this.waitForCallback(executionArn, input as { FunctionName: string; Payload: unknown })
        : (input) => this.invoke(String(state.Resource), input) as Promise<TaskOutput>;
    }
    return handlers;
  }

  /** With `retryDelayMs`, the wait of every state's Retry (none: the definition's). */
  private retryIntervals(states: Record<string, AslState>): Record<string, number> | undefined {
    const delayMs = this.retryDelayMs;
    if (delayMs === undefined) return undefined;
    return Object.fromEntries([...allStates(states)].filter(([, state]) => state.Retry).map(([name]) => [name, delayMs]));
  }

  private async waitForCallback(executionArn: string, input: { FunctionName: string; Payload: unknown }): Promise<TaskOutput> {
    const token = `AQ${randomBytes(96).toString("base64url")}`;
    const payload = JSON.parse(JSON.stringify(input.Payload).replaceAll(TOKEN_PLACEHOLDER, token));
    const result = new Promise<TaskOutput>(
      (resolve, reject) => this.callbacks.set(token, { executionArn, resolve: (output) => resolve(output as TaskOutput), reject }), // JSON from SendTaskSuccess
    );
    try {
      await this.invoke(input.FunctionName, payload);
    } catch (error) {
      this.callbacks.delete(token);
      throw error;
    }
    return result;
  }

  private callback(token: unknown): PendingCallback {
    if (typeof token !== "string" || !token.startsWith("AQ"))
      throw new ApiError("InvalidToken", "Invalid Token: the task token is malformed");
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

  private async record(execution: Execution, history: NonNullable<Execution["history"]>, logs: AsyncGenerator<EventLog>) {
    try {
      for await (const log of logs) {
        const event = toHistoryEvent(log, execution.historyLength + 1);
        if (event) {
          execution.historyLength += 1;
          history.push(event);
          this.store.appendHistory(execution.name, event);
        }
        // A top-level state (not a Map iteration's) that work can continue from.
        if (log.type === "StateEntered" && log.index === undefined && log.state?.name in this.versionOf(execution).states) {
          execution.resumeFrom = { state: log.state.name, input: log.state.input };
          this.store.save(recordOf(execution));
        }
      }
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
      stateMachineVersionArn: e.stateMachineVersionArn,
      stateMachineAliasArn: e.stateMachineAliasArn,
      name: e.name,
      status: e.status,
      startDate: e.startDate / 1000,
      stopDate: e.stopDate ? e.stopDate / 1000 : undefined,
      input: e.input,
      output: e.output,
      error: e.error,
      cause: e.cause,
      redriveCount: e.redriveCount,
      redriveDate: e.redriveDate ? e.redriveDate / 1000 : undefined,
      redriveStatus: e.status === "SUCCEEDED" || e.status === "RUNNING" ? "NOT_REDRIVABLE" : "REDRIVABLE",
      redriveStatusReason:
        e.status === "SUCCEEDED"
          ? "Execution is SUCCEEDED and cannot be redriven"
          : e.status === "RUNNING"
            ? "Execution is RUNNING and cannot be redriven"
            : undefined,
    };
  }

  private stopExecution(input: { executionArn: string; error?: string; cause?: string }) {
    const execution = this.get(input.executionArn);
    if (execution.status === "RUNNING") {
      execution.abort?.();
      this.finish(execution, "ABORTED", { error: input.error, cause: input.cause });
    }
    return { stopDate: (execution.stopDate ?? Date.now()) / 1000 };
  }

  /**
   * RedriveExecution: a failed, aborted or timed-out execution continues from the state that did
   * not succeed (the last top-level state it entered; after a caught error, that is where the catch
   * led, as on AWS), with the same ARN and input.
   */
  private redriveExecution(input: { executionArn: string; clientToken?: string }) {
    const execution = this.get(input.executionArn);
    if (execution.status === "RUNNING" || execution.status === "SUCCEEDED") {
      throw new ApiError("ExecutionNotRedrivable", `Execution is ${execution.status} and cannot be redriven: '${execution.executionArn}'`);
    }
    Object.assign(execution, {
      status: "RUNNING",
      stopDate: undefined,
      output: undefined,
      error: undefined,
      cause: undefined,
      notified: undefined,
    });
    execution.redriveCount += 1;
    execution.redriveDate = Date.now();
    this.launch(execution, execution.resumeFrom);
    this.emit("status", change(execution));
    return { redriveDate: execution.redriveDate / 1000 };
  }

  private getExecutionHistory(input: { executionArn: string; maxResults?: number; nextToken?: string; reverseOrder?: boolean }) {
    const execution = this.get(input.executionArn);
    const events = [...(execution.history ?? this.store.history(execution.name))];
    if (input.reverseOrder) events.reverse();
    const start = input.nextToken ? Number(input.nextToken) : 0;
    const size = input.maxResults || 1000;
    const page = events.slice(start, start + size);
    return { events: page, nextToken: start + size < events.length ? String(start + size) : undefined };
  }

  /** The state machine (its latest definition) or one of its versions. */
  private describeStateMachine(stateMachineArn: string) {
    const version = stateMachineArn === this.stateMachineArn ? this.liveVersion : this.versions.find((v) => v.arn === stateMachineArn);
    if (!version) throw new ApiError("StateMachineDoesNotExist", `State Machine Does Not Exist: '${stateMachineArn}'`);
    return {
      stateMachineArn,
      name: this.name,
      status: "ACTIVE",
      definition: version.definition,
      roleArn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/local`,
      type: "STANDARD",
      creationDate: 0,
    };
  }
}

/** Every state of a definition's States, also those inside Map and Parallel states. */
function* allStates(states: Record<string, AslState>): Generator<[string, AslState]> {
  for (const [name, state] of Object.entries(states)) {
    yield [name, state];
    const inner = state.ItemProcessor ?? state.Iterator;
    if (inner) yield* allStates(inner.States);
    for (const branch of state.Branches ?? []) yield* allStates(branch.States);
  }
}

/**
 * The top-level states entered only on the way out after an error (Catch targets and what follows
 * them) and the end states: resuming there would only end the run again.
 */
function recordOf(e: Execution): ExecutionRecord {
  const { history: _history, historyLength: _length, abort: _abort, ...record } = e;
  return record;
}

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
  const {
    executionArn,
    stateMachineArn,
    stateMachineVersionArn,
    stateMachineAliasArn,
    name,
    status,
    input,
    output,
    error,
    cause,
    redriveCount,
  } = e;
  return {
    executionArn,
    stateMachineArn,
    stateMachineVersionArn,
    stateMachineAliasArn,
    name,
    status,
    input,
    output,
    error,
    cause,
    redriveCount,
    startDate: new Date(e.startDate),
    stopDate: e.stopDate ? new Date(e.stopDate) : undefined,
  };
}

/** One page of a list (AWS's maxResults, 100 by default, at most 1,000) and the token of the next. */
function pageOf<T>(all: T[], input: { maxResults?: number; nextToken?: string }): { items: T[]; nextToken?: string } {
  const size = Math.min(input.maxResults || 100, 1_000);
  const from = input.nextToken ? Number(input.nextToken) : 0;
  if (!Number.isInteger(from) || from < 0) throw new ApiError("InvalidToken", "Invalid Token");
  const items = all.slice(from, from + size);
  return { items, ...(from + size < all.length ? { nextToken: String(from + size) } : {}) };
}
