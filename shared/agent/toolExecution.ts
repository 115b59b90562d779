import type { AgentRole, EventBody } from "../contracts/events.js";
import type { ApprovalPolicy, Resolution, ToolFailures } from "../contracts/interrupts.js";
import type { ToolCall } from "../llm/types.js";
import { limitToolOutput } from "../memory/toolOutput.js";
import { filesOfTask } from "../ports/files.js";
import type { Ports } from "../ports/index.js";
import type { OutputChecks, ToolContext, ToolOutcome, ToolSet } from "../ports/tools.js";
import { MAX_OBSERVE_CHARS } from "../tools/registry.js";
import { type InterruptPorts, interruptIdFor, openInterrupt } from "./interrupts.js";
import { type KnownWebhook, ModelWaits } from "./modelWaits.js";
import type { ScopeJournal } from "./scopeJournal.js";
import { applyDecision, pauseKindOf, pauseRequest } from "./toolApproval.js";
import { deniedByPolicy, type ToolPolicyGate } from "./toolPolicy.js";

export interface ToolRound {
  runId: string;
  scope: string;
  round: number;
  agent: AgentRole;
  taskId?: string;
  /** The run's tenant, as the step read it from the run: tools bound per tenant read nothing more. */
  tenant?: ToolContext["tenant"];
  /** The run's subscription, when the step read the run: a tool's model waits are reported as the agent's (modelWaits.ts). */
  webhook?: KnownWebhook;
  tools: ToolSet;
  /** Appends events in the background, in order (the loop's own writer, awaited with its last writes). */
  emit: (events: EventBody[]) => void;
  journal: ScopeJournal;
  ports: Pick<Ports, "files" | "model"> & InterruptPorts;
  approval?: ApprovalPolicy["tools"];
  /** `report`: a failure a person could fix is handed to the model as any failed call, with no pause. */
  toolFailures?: ToolFailures;
  /** The tenant's tool policies (toolPolicy.ts); none: every call is allowed. */
  policy?: ToolPolicyGate;
  /** The run's output checks, for tools that show people what they write (a live report). */
  output?: OutputChecks;
  concurrency: number;
}

/** What holds for a call before it runs: a person's decision, or a policy's denial. */
export type CallDecision = Resolution | { decision: "policy_denied"; reason: string };

/**
 * Calls that need a person (toolApproval.ts) come first: the first one not yet decided stops the
 * round and the run waits for it (an interrupt). Returns the decisions already made, by call id.
 */
export async function decisionsOn(
  round: ToolRound,
  calls: ToolCall[],
): Promise<{ waitingFor?: string; decisions: Map<string, CallDecision> }> {
  const { ports, runId } = round;
  const decisions = new Map<string, CallDecision>();
  for (const call of calls) {
    if (round.journal.has(round.round, "tool", call.id)) continue;
    const tool = round.tools.get(call.name);
    const policy =
      tool && round.policy ? await round.policy.decide(call, tool, round.tools, { ...round, source: sourceOf(round) }) : undefined;
    if (policy?.verdict === "deny") {
      decisions.set(call.id, { decision: "policy_denied", reason: policy.reason ?? "" });
      continue;
    }
    const byPolicy = policy?.verdict === "require_approval" && !tool?.asksUser;
    const kind = byPolicy ? "tool_approval" : pauseKindOf(tool, round.approval);
    if (!kind) continue;
    const interruptId = interruptIdFor(runId, round.scope, round.round, call.id);
    const args = parseArguments(call.arguments) as { question?: unknown } | undefined;
    const interrupt =
      (await ports.interrupts.get(runId, interruptId)) ??
      (await openInterrupt(ports, {
        interruptId,
        runId,
        kind,
        taskId: round.taskId,
        toolName: call.name,
        callId: call.id,
        arguments: args,
        ...pauseRequest(kind, call, args, byPolicy ? policy?.reason : undefined),
      }));
    if (interrupt.status === "pending") return { waitingFor: interruptId, decisions };
    decisions.set(call.id, interrupt.resolution ?? { decision: "reject", message: `the request ${interrupt.status}`, resolvedAt: "" });
  }
  return { decisions };
}

/**
 * Runs the round's tool calls, at most `concurrency` at once, each once (journaled: a replay returns
 * the recorded result). Results keep the calls' order; `ended` hears of each call run now (not
 * replayed) as soon as it ends, so a fast call is seen before a slow one. An output too long for
 * the model is cut, and the whole of it is kept as an artifact the model can read.
 */
export async function runToolCalls(
  round: ToolRound,
  calls: ToolCall[],
  decisions: Map<string, CallDecision>,
  ended: (call: ToolCall, outcome: ToolOutcome) => void = () => undefined,
) {
  const execute = async (call: ToolCall): Promise<ToolOutcome> => {
    const context: ToolContext = {
      runId: round.runId,
      scope: round.scope,
      idempotencyKey: idempotencyKeyOf(round, call),
      // What an executor's tools write is its task's (file.created and task.completed name it).
      files: round.taskId ? filesOfTask(round.ports.files, round.taskId) : round.ports.files,
      model: round.ports.model,
      // A tool's model calls (the report writer's) tell their retries as the agent's own calls do.
      modelWaits: () => new ModelWaits(round.ports, round.runId, sourceOf(round), round.webhook),
      ...(round.tenant ? { tenant: round.tenant } : {}),
      ...(round.output ? { output: round.output } : {}),
      progress: (event) =>
        round.emit([
          {
            type: event.type,
            data: { agent: round.agent, ...(round.taskId ? { taskId: round.taskId } : {}), callId: call.id, ...event.data },
          } as EventBody,
        ]),
    };
    const decision = decisions.get(call.id);
    const outcome =
      decision?.decision === "policy_denied"
        ? deniedByPolicy(decision.reason)
        : decision
          ? await applyDecision(call, decision, round.tools, context)
          : await round.tools.execute(call, context);
    // Reported, not paused on: the model reads the error, as it reads any failed call's.
    const { fixable: _reported, ...reported } = outcome;
    return keepWholeOutput(round, call, round.toolFailures === "report" ? reported : outcome);
  };
  // Results are kept in memory and written with the next round's records (see runAgentLoop).
  return mapLimited(calls, round.concurrency, async (call) => {
    const result = round.tools.get(call.name)?.pure
      ? { value: await execute(call), replayed: false }
      : await round.journal.once<ToolOutcome>(round.round, "tool", call.id, () => execute(call), {
          defer: round.tools.get(call.name)?.access !== "write",
          // A failure a person can fix is no outcome: the call waits for them (toolFailure.ts) and runs again.
          keep: (outcome) => !outcome.fixable,
        });
    if (!result.replayed && !result.value.fixable) ended(call, result.value);
    return result;
  });
}

function sourceOf(round: ToolRound): { agent: AgentRole; taskId?: string } {
  return { agent: round.agent, ...(round.taskId ? { taskId: round.taskId } : {}) };
}

async function keepWholeOutput(round: ToolRound, call: ToolCall, outcome: ToolOutcome): Promise<ToolOutcome> {
  if (outcome.output.length <= MAX_OBSERVE_CHARS) return outcome;
  // Scope and round in the name: call ids are only unique within one agent's conversation.
  const name = `tool-output-${`${round.scope}-${round.round}-${call.id}`.replace(/[^\w.-]/g, "_")}.txt`;
  await round.ports.files.put(round.runId, name, outcome.output.slice(0, 300_000), {
    description: `Whole output of ${call.name}`,
    idempotencyKey: idempotencyKeyOf(round, call),
  });
  return { ...outcome, output: limitToolOutput(outcome.output, MAX_OBSERVE_CHARS, name).forModel };
}

/** The same for every attempt of one call: run, scope, round and call id. */
export function idempotencyKeyOf(round: Pick<ToolRound, "runId" | "scope" | "round">, call: ToolCall): string {
  return `${round.runId}:${round.scope}:${round.round}:${call.id}`;
}

/** A call's arguments as JSON, or the text as it came when it is not JSON (shown to people as written). */
export function parseArguments(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** Runs `fn` over items with at most `limit` in flight; results keep the items' order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
