import type { ExecutionState, Executions } from "../ports/executions.js";

const MACHINE = "arn:aws:states:us-east-1:000000000000:stateMachine:Stepwise";

/**
 * The executions port in memory: executions by ARN with their status, and the task tokens that
 * are waiting. A test plays Step Functions: it moves statuses (`setStatus`) and sees what the core asked.
 */
export class MemoryExecutions implements Executions {
  /** `transitions`: the states it entered, as its history would count them (set by a test). */
  readonly executions = new Map<
    string,
    { runId: string; status: ExecutionState; redrives: number; transitions?: number; historyLength?: number }
  >();
  /** Live task tokens and what completed them. */
  readonly tokens = new Map<string, { output?: unknown }>();
  readonly calls: { action: string; target: string }[] = [];

  constructor(private readonly stateMachineArn = MACHINE) {}

  arnFor(runId: string): string {
    return `${this.stateMachineArn.replace(":stateMachine:", ":execution:")}:${runId}`;
  }

  async start(runId: string): Promise<boolean> {
    this.calls.push({ action: "start", target: runId });
    const arn = this.arnFor(runId);
    const existing = this.executions.get(arn);
    // Starting again with the same name and input while it runs is allowed, as in Step Functions.
    if (existing) return existing.status === "RUNNING";
    this.executions.set(arn, { runId, status: "RUNNING", redrives: 0 });
    return true;
  }

  async startContinuation(_from: string, executionArn: string, input: string): Promise<boolean> {
    this.calls.push({ action: "startContinuation", target: executionArn });
    const existing = this.executions.get(executionArn);
    if (existing) return existing.status === "RUNNING";
    this.executions.set(executionArn, { runId: JSON.parse(input).runId, status: "RUNNING", redrives: 0 });
    return true;
  }

  async historyLength(executionArn: string): Promise<number> {
    this.calls.push({ action: "historyLength", target: executionArn });
    return this.executions.get(executionArn)?.historyLength ?? 0;
  }

  async stop(executionArn: string): Promise<boolean> {
    this.calls.push({ action: "stop", target: executionArn });
    const execution = this.executions.get(executionArn);
    if (!execution) return false;
    if (execution.status === "RUNNING") execution.status = "ABORTED";
    return true;
  }

  async describe(executionArn: string): Promise<ExecutionState> {
    return this.executions.get(executionArn)?.status ?? "missing";
  }

  async redrive(executionArn: string): Promise<boolean> {
    this.calls.push({ action: "redrive", target: executionArn });
    const execution = this.executions.get(executionArn);
    if (!execution || !["FAILED", "TIMED_OUT", "ABORTED"].includes(execution.status)) return false;
    execution.status = "RUNNING";
    execution.redrives++;
    return true;
  }

  async sendTaskSuccess(taskToken: string, output: unknown): Promise<boolean> {
    this.calls.push({ action: "sendTaskSuccess", target: taskToken });
    const token = this.tokens.get(taskToken);
    if (!token || token.output !== undefined) return false;
    token.output = structuredClone(output);
    return true;
  }

  async stateTransitions(executionArn: string): Promise<{ count: number; final: boolean }> {
    const execution = this.executions.get(executionArn);
    const status = execution?.status;
    return { count: execution?.transitions ?? 0, final: status !== undefined && status !== "RUNNING" && status !== "PENDING_REDRIVE" };
  }

  /** A callback state is waiting with this token (what Step Functions hands "Wait for …"). */
  issueToken(token: string): string {
    this.tokens.set(token, {});
    return token;
  }

  setStatus(runId: string, status: ExecutionState): void {
    const arn = this.arnFor(runId);
    if (status === "missing") this.executions.delete(arn);
    else this.executions.set(arn, { runId, redrives: 0, ...this.executions.get(arn), status });
  }
}
