import type * as z from "zod";
import type { ToolProgress, UndoneCall } from "../contracts/events.js";
import type { ToolGrant } from "../contracts/toolGrants.js";
import type { ChatModel, ModelRetry, ToolCall, ToolSpec } from "../llm/types.js";
import type { FileStore } from "./files.js";

/** What a tool may use while it runs. Passed by the registry, never by the agent by hand. */
export interface ToolContext {
  runId: string;
  /** The calling agent's journal scope ("react", "task#1#t2"). */
  scope: string;
  /**
   * The same for every attempt of this one call (run, scope, round, call id): a write tool hands
   * it to whatever it changes, so a retry after a crash does not repeat the side effect.
   */
  idempotencyKey: string;
  /** The run's files: read the ones the run has, write results and reports. */
  files: FileStore;
  signal?: AbortSignal;
  /**
   * Shows the call's progress to the run's watchers (the code it runs, a report as it is written,
   * a search's stages), in order and before the call's result; best effort, never awaited.
   */
  progress?: (event: ToolProgress) => void;
  /** The run's tenant and its own limits as the run recorded them (run_code's bound on sandboxes reads them here, not from the table). */
  tenant?: { tenantId: string; maxSandboxes?: number };
  /** The run's model, for a tool that writes with it (write_report from a task). */
  model?: ChatModel;
  /**
   * Reports one call of `model`'s retries as an agent's own model calls' are (a `model.retrying`
   * event, the run's wait, the waiting spell for its subscribers): a tool starts one per call.
   */
  modelWaits?: () => ModelCallWaits;
  /** The run's output guardrails, for a tool that shows people text it writes (a live report); none: no checks. */
  output?: OutputChecks;
}

/** One model call's retries, told as they happen (shared/agent/modelWaits.ts). */
export interface ModelCallWaits {
  /** A retry, told once `before` (the last retry's or the broken reply's writes) is done; resolves when it is. */
  retried(retry: ModelRetry, options?: { before?: Promise<unknown> }): Promise<unknown>;
  /** The call ended (answered or failed): the run no longer waits for it. */
  close(): Promise<void>;
}

/** The run's output checks (shared/guardrails/textGuard.ts), as a tool sees them. */
export interface OutputChecks {
  /**
   * Streamed text through the hold-back window into `release` (push its parts, close at its end;
   * discard what is held when the reply it came from is void); undefined without output checks.
   */
  holdBack(release: (text: string) => void): { push(text: string): void; close(): void; discard(): void } | undefined;
  /** A whole text as people may see it (redacted); throws when a check blocks it. */
  shown(text: string): Promise<string>;
}

/** A tool the model can call: JSON-schema parameters (from zod), and whether it changes anything. */
export interface Tool<Args = unknown> {
  readonly name: string;
  readonly description: string;
  /** `write` tools change something outside the run and may need a person's approval. */
  readonly access: "read" | "write";
  readonly parameters: z.ZodType<Args>;
  /** The JSON schema as the tool's source gave it (MCP tools); built-ins derive it from `parameters`. */
  readonly inputSchema?: Record<string, unknown>;
  /** The tool source it comes from (MCP); built-ins have none. */
  readonly source?: string;
  /** The job title shown beside a call when the model gives none ("digital employee"). */
  readonly persona?: string;
  /** Changes nothing but the agent's own working state (the plan): re-run on replay, not journaled. */
  readonly pure?: boolean;
  /** The call is a question for a person: the run waits for the answer (ask_user). */
  readonly asksUser?: boolean;
  /**
   * Running it twice does what running it once does (a write tool that deduplicates by the call's
   * idempotency key, or an MCP tool marked idempotentHint): a start that left no outcome is run
   * again without asking a person (shared/agent/toolFailure.ts).
   */
  readonly idempotent?: boolean;
  /** What it needs from AWS beyond the table (shared/contracts/toolGrants.ts); the stack grants it. */
  readonly grants?: readonly ToolGrant[];
  /** The agent of this scope is done: release what the tool keeps for it (run_code's interpreter session). */
  endScope?(runId: string, scope: string): Promise<void>;
  run(args: Args, context: ToolContext): Promise<string | ToolReply>;
}

export interface ToolOutcome {
  ok: boolean;
  /** What the model reads (it may carry instructions for the model after the facts). */
  output: string;
  /** What clients see in events when it differs from `output`: the facts, in the user's own words. */
  shown?: string;
  /** A person declined the call (rejected or skipped it): it did not run, and its task is not done as planned. */
  undone?: UndoneCall;
  /** Tools this call makes callable in the agent's following rounds (find_tools); journaled with the outcome. */
  loads?: string[];
  /** Run files of the images the call returned (an MCP tool's): shown to a model that sees images; journaled with the outcome. */
  images?: string[];
  /** The call failed for a reason a person can fix (FixableToolError): the task pauses instead of the model reading the error. */
  fixable?: FixableFailure;
}

/** Why a tool call failed in a way a person can fix: a key, a permission, a quota, a server down. */
export type FixableReason = "unauthorized" | "forbidden" | "rate_limited" | "unavailable";

export interface FixableFailure {
  reason: FixableReason;
  /** The HTTP status the tool's service answered, when it answered. */
  status?: number;
}

/**
 * Thrown by a tool (or a tool source) whose call failed for a reason a person can fix, not the
 * model: the run pauses with a `tool_failure` interrupt (retry, edit, skip, fail) instead of
 * handing the model an error to improvise around.
 */
export class FixableToolError extends Error {
  readonly reason: FixableReason;
  readonly status?: number;

  constructor(message: string, failure: FixableFailure, cause?: unknown) {
    super(message, { cause });
    this.name = "FixableToolError";
    this.reason = failure.reason;
    this.status = failure.status;
  }
}

/** The fixable failure an HTTP status means: 401, 403, 429 and 5xx are for a person to fix (a key, a grant, a quota, a server). */
export function fixableStatus(status: number | undefined): FixableFailure | undefined {
  if (status === 401) return { reason: "unauthorized", status };
  if (status === 403) return { reason: "forbidden", status };
  if (status === 429) return { reason: "rate_limited", status };
  if (status !== undefined && status >= 500 && status <= 599) return { reason: "unavailable", status };
  return undefined;
}

/** A service that could not be reached at all (refused, no route, no such host): nothing ran there, a person may bring it back. */
export function unreachable(error: unknown): FixableFailure | undefined {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (/^(ECONNREFUSED|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN)$/.test(String((cause as { code?: unknown }).code)))
      return { reason: "unavailable" };
  }
  return undefined;
}

/** A tool's answer when it has more than text: the images it returned, saved as run files. */
export interface ToolReply {
  output: string;
  images?: string[];
}

/** Tells every tool of the set that the agent of `scope` is done; best effort (a session also times out). */
export async function endToolScope(tools: ToolSet, runId: string, scope: string): Promise<void> {
  await Promise.all(tools.tools.map((tool) => tool.endScope?.(runId, scope).catch(() => undefined)));
}

/** The tools one agent may use (ToolRegistry): their specs for the model, and a call run safely. */
export interface ToolSet {
  readonly names: string[];
  /** Every tool, in the order of `names`. */
  readonly tools: Tool[];
  get(name: string): Tool | undefined;
  /** The tool's JSON schema (as its source gave it, or from its zod schema). */
  schemaOf(tool: Tool): Record<string, unknown>;
  /** What the model is offered. */
  specs(): ToolSpec[];
  /** Runs a call; bad arguments and tool failures come back as error text, never as a throw. */
  execute(call: ToolCall, context: ToolContext): Promise<ToolOutcome>;
  /**
   * When not every tool fits in a request (shared/tools/toolSearch.ts): what a prompt lists (the
   * tools always offered) and how many more find_tools reaches.
   */
  readonly listed?: { tools: Tool[]; searchable: number };
  /** Offers these tools from the next request on (what find_tools found). */
  load?(names: readonly string[]): void;
}
