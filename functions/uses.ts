import type { PortName } from "../shared/handlerPorts.js";

/**
 * What each Lambda handler uses, in one place: the ports its wiring builds (functions/wiring.ts)
 * and, from the same list, the environment and the IAM grants the stack gives its function
 * (infra/aws/stepwise.ts): a port on the table gets the table, `files` the bucket, `notifyQueue`
 * the queue, `executions` the state machine actions named, `tools` the key that opens tool source
 * headers, `secrets` the key that seals them, `model` the model's API key. The IAM-coverage test
 * checks that every AWS call a handler's code can make is granted, and no grant goes unused.
 */
export interface HandlerUses {
  /** The ports its wiring builds (each on first use). */
  readonly ports: readonly PortName[];
  /** What it asks of the runs' executions (with the `executions` port). */
  readonly executions?: readonly ExecutionAction[];
  /** It runs the agents' tools, not only lists them: the code sandbox or interpreter, the search API's key. */
  readonly runsTools?: boolean;
  /** With `files`: it only lists a run's files (their records in the table), never reads or writes their bytes. */
  readonly fileRecordsOnly?: boolean;
  /** It moves what cannot be delivered to the dead-letter queue (the notifier). */
  readonly deadLetters?: boolean;
  /** With `secrets`: it only opens sealed secrets (KMS Decrypt), never seals one. */
  readonly opensSecretsOnly?: boolean;
}

/**
 * The state machine's executions, by what is done to them: start (a run, through the alias),
 * continue (a run's next execution, on the version its last one runs), describe, stop, redrive (a
 * failed run resumed), resume (a waiting task's token answered), history (its length and state transitions).
 */
export type ExecutionAction = "start" | "continue" | "describe" | "stop" | "redrive" | "resume" | "history";

/** The ports every step that runs an agent loop reads and writes. */
const LOOP = [
  "model",
  "journal",
  "events",
  "runs",
  "files",
  "interrupts",
  "notifyQueue",
  "policies",
  "spend",
] as const satisfies readonly PortName[];
/** What run_code reads beside the tools: its tenant's limit and the leases on its sandboxes (shared/sandbox/sandboxBound.ts). */
const RUN_CODE = ["tenantSettings", "tenantLeases"] as const satisfies readonly PortName[];
/** Ending a run: its record, its event, its slot among the tenant's active runs, its open questions; the session it frees. */
const END_RUN = ["runs", "events", "activeRuns", "interrupts", "sessions"] as const satisfies readonly PortName[];

/** The ports of the doors: REST, MCP, A2A, AG-UI and the stream start, decide, cancel and show runs. */
const DOOR = [
  "runs",
  "events",
  "journal",
  "tasks",
  "interrupts",
  "files",
  "transfers",
  "tools",
  "executions",
  "notifyQueue",
  "activeRuns",
  "sessions",
  "webhooks",
  "idempotency",
  "savedAgents",
  "snapshots",
  "apiKeys",
  "listings",
  "streamTokens",
  // Streams and calls that follow a run hold a lease among the tenant's open streams.
  "tenantLeases",
  "tenantSettings",
  "toolSources",
  "policies",
  "spend",
  // A2A push configs' tokens and credentials are sealed when set and opened when read back.
  "secrets",
] as const satisfies readonly PortName[];

export const HANDLER_USES = {
  // It checks the run's input (guardrails: moderation and judge through the model) and ends a blocked run.
  StartRun: { ports: ["runs", "events", "activeRuns", "interrupts", "model"] },
  // The router reads the tools' names to choose a mode; it runs none. A model call that waits is told on the queue (notifyQueue), as in every step that calls the model.
  RouteRequest: { ports: ["model", "journal", "runs", "events", "tools", "files", "sessions", "notifyQueue"] },
  AgentTurn: { ports: [...LOOP, "tools", ...RUN_CODE, "sessions", "executions"], executions: ["history"], runsTools: true },
  Plan: { ports: [...LOOP, "tasks", "sessions", "tools", ...RUN_CODE, "executions"], executions: ["history"], runsTools: true },
  ExecuteTask: { ports: [...LOOP, "tasks", "tools", ...RUN_CODE, "executions"], executions: ["history"], runsTools: true },
  RecordTaskFailure: { ports: ["tasks", "files", "events"] },
  Summarize: { ports: ["model", "journal", "runs", "tasks", "files", "sessions", "events", "spend", "notifyQueue"] },
  // It titles the session after its first answered turn (shared/steps/sessionTitle.ts).
  Finalize: { ports: [...END_RUN, "model"] },
  RecordFailure: { ports: END_RUN },
  AwaitInterrupt: { ports: ["interrupts", "executions"], executions: ["resume"] },
  RecordTimeout: { ports: END_RUN },
  ContinueRun: { ports: ["runs", "executions"], executions: ["continue", "describe"] },
  /** The HTTP API: every door's ports, and `table` for the health probe; it sets up tool sources (`secrets`). */
  Api: {
    ports: [...DOOR, "table"],
    executions: ["start", "describe", "stop", "redrive", "resume", "history"],
  },
  /** The stream function: events as SSE, and the MCP, A2A and AG-UI doors where they stream. */
  Stream: { ports: DOOR, executions: ["start", "describe", "stop", "redrive", "resume"] },
  /** The notification queue's consumer: webhooks, a run's end, the session's next run. */
  Notify: {
    ports: [
      "runs",
      "events",
      "tasks",
      "interrupts",
      "files",
      "webhooks",
      // An A2A push's token or credentials are opened to send it.
      "secrets",
      "sessions",
      "activeRuns",
      "notifyQueue",
      "executions",
      "listings",
      // Online evals: the tenant's judges score a sampled run after it ended, within a daily cost cap.
      "tenantSettings",
      "evalSpend",
      "model",
      // An ended run's GenAI spans go to X-Ray (the daemon active tracing runs sends them with the function's role).
      "traces",
    ],
    // A run's end hands its session to the next waiting run: a new one starts, a failed run resumed in the queue is redriven.
    executions: ["start", "redrive", "history"],
    // A webhook's A2A task names the run's files.
    fileRecordsOnly: true,
    deadLetters: true,
    opensSecretsOnly: true,
  },
} as const satisfies Record<string, HandlerUses>;

export type HandlerName = keyof typeof HANDLER_USES;
