import type { AgentRole, EventBody } from "../contracts/events.js";
import type { ChatMessage, ChatResponse } from "../llm/types.js";
import type { Services } from "../services.js";
import type { ApprovalPolicy, Resolution } from "../contracts/interrupts.js";
import type { ToolCall } from "../llm/types.js";
import type { ToolOutcome, ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/tool.js";
import { interruptIdFor, openInterrupt } from "./interrupts.js";
import { MAX_OBSERVE_CHARS } from "../tools/registry.js";

export interface RunScope {
  runId: string;
  services: Services;
  /** Epoch ms after which a turn should hand back to the state machine rather than start a round. */
  deadline?: number;
}

export interface LoopOptions {
  /** Journal scope: one per agent instance ("react", "plan#2", "task#1#t3"). */
  scope: string;
  role: AgentRole;
  taskId?: string;
  messages: ChatMessage[];
  tools: ToolRegistry;
  maxRounds: number;
  /** Parallel tool calls of one turn run at most this many at once. */
  toolConcurrency?: number;
  /** Which tool calls wait for a person's approval first. */
  toolApproval?: ApprovalPolicy["tools"];
}

export type LoopOutcome =
  | { kind: "answer"; text: string; rounds: number }
  | { kind: "paused"; rounds: number }
  | { kind: "interrupted"; interruptId: string; rounds: number }
  | { kind: "budget"; text: string; rounds: number };

const OUTPUT_PREVIEW = 2_000;

/**
 * The think/act loop every agent runs: ask the model, run the tools it calls, feed the results
 * back, until it answers. Each model response and tool result is journaled, so a retried step
 * replays them (no repeated side effects, no repeated cost) and a later turn resumes here.
 */
export async function runAgentLoop(run: RunScope, options: LoopOptions): Promise<LoopOutcome> {
  const { services } = run;
  const journal = await services.journal.load(run.runId, options.scope);
  const messages = [...options.messages];
  const specs = options.tools.specs();
  const source = { agent: options.role, ...(options.taskId ? { taskId: options.taskId } : {}) };
  let lastText = "";

  for (let round = 0; round < options.maxRounds; round++) {
    if (run.deadline && Date.now() > run.deadline && !journal.has(round, "llm")) return { kind: "paused", rounds: round };

    const { value: response, replayed } = await journal.once<ChatResponse>(round, "llm", "", () =>
      services.model.complete({ messages, tools: specs }),
    );
    if (!replayed) {
      await Promise.all([
        services.runs.addUsage(run.runId, { ...response.usage, llmCalls: 1, toolCalls: response.toolCalls.length }),
        services.events.append(run.runId, [
          ...(response.content?.trim() ? [{ type: "agent.thought", data: { ...source, text: response.content } } as const] : []),
          ...response.toolCalls.map(
            (call) =>
              ({ type: "tool.called", data: { ...source, callId: call.id, tool: call.name, arguments: parseForDisplay(call.arguments) } }) as const,
          ),
        ]),
      ]);
    }
    messages.push(assistantMessage(response));
    if (response.content) lastText = response.content;
    if (response.toolCalls.length === 0) return { kind: "answer", text: response.content ?? "", rounds: round + 1 };

    // Calls that need a person: stop at the first one not yet decided; the run waits for it.
    const decisions = new Map<string, Resolution>();
    for (const call of response.toolCalls) {
      const tool = options.tools.get(call.name);
      const kind = tool?.asksUser ? "ask_user" : tool && needsApproval(tool, options.toolApproval) ? "tool_approval" : undefined;
      if (!kind || journal.has(round, "tool", call.id)) continue;
      const interruptId = interruptIdFor(run.runId, options.scope, round, call.id);
      const args = parseForDisplay(call.arguments);
      const interrupt =
        (await services.interrupts.get(run.runId, interruptId)) ??
        (await openInterrupt(services, {
          interruptId,
          runId: run.runId,
          kind,
          taskId: options.taskId,
          toolName: call.name,
          arguments: args,
          question: kind === "ask_user" ? String((args as { question?: unknown })?.question ?? "") : undefined,
          summary: kind === "ask_user" ? `The agent asks: ${(args as { question?: unknown })?.question ?? ""}` : `Run ${call.name} with ${JSON.stringify(args).slice(0, 300)}`,
        }));
      if (interrupt.status === "pending") return { kind: "interrupted", interruptId, rounds: round };
      decisions.set(call.id, interrupt.resolution ?? { decision: "reject", message: `the request ${interrupt.status}`, resolvedAt: "" });
    }

    const context = { runId: run.runId, artifacts: services.artifacts };
    const runCall = (call: ToolCall): Promise<ToolOutcome> => {
      const decision = decisions.get(call.id);
      return decision ? applyDecision(call, decision, options.tools, context) : options.tools.execute(call, context);
    };
    const outcomes = await mapLimited(response.toolCalls, options.toolConcurrency ?? 2, async (call) =>
      options.tools.get(call.name)?.pure
        ? { value: await options.tools.execute(call, context), replayed }
        : journal.once<ToolOutcome>(round, "tool", call.id, () => runCall(call)),
    );
    const fresh: EventBody[] = [];
    response.toolCalls.forEach((call, i) => {
      const { value, replayed: wasReplayed } = outcomes[i]!;
      messages.push({ role: "tool", tool_call_id: call.id, content: observe(value.output) });
      if (!wasReplayed) {
        fresh.push({ type: "tool.result", data: { ...source, callId: call.id, tool: call.name, ok: value.ok, output: value.output.slice(0, OUTPUT_PREVIEW) } });
      }
    });
    await services.events.append(run.runId, fresh);
  }
  return {
    kind: "budget",
    rounds: options.maxRounds,
    text: `Stopped after ${options.maxRounds} rounds, the round budget. Last progress: ${lastText || "none"}`,
  };
}

function needsApproval(tool: Tool, policy: ApprovalPolicy["tools"] = "none"): boolean {
  return policy === "all" || (policy === "write" && tool.access === "write");
}

/** What a person decided becomes the tool's result, so the model sees it and adapts. */
async function applyDecision(
  call: ToolCall,
  resolution: Resolution,
  tools: ToolRegistry,
  context: Parameters<ToolRegistry["execute"]>[1],
): Promise<ToolOutcome> {
  switch (resolution.decision) {
    case "approve":
      return tools.execute(call, context);
    case "edit": {
      const outcome = await tools.execute({ ...call, arguments: JSON.stringify(resolution.arguments ?? {}) }, context);
      return { ...outcome, output: `The user changed the arguments to ${JSON.stringify(resolution.arguments)}. ${outcome.output}` };
    }
    case "answer":
      return { ok: true, output: `The user answered: ${resolution.message ?? ""}` };
    case "reject":
      return {
        ok: false,
        output: `Rejected by the user${resolution.message ? `: ${resolution.message}` : ""}. Do not repeat this call; continue without it or choose another way.`,
      };
  }
}

function assistantMessage(response: ChatResponse): ChatMessage {
  return {
    role: "assistant",
    content: response.content,
    ...(response.toolCalls.length
      ? { tool_calls: response.toolCalls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } })) }
      : {}),
  };
}

/** What the model sees of a tool output (JD Genie's max_observe). */
function observe(output: string): string {
  return output.length > MAX_OBSERVE_CHARS ? `${output.slice(0, MAX_OBSERVE_CHARS)}\n[output cut at ${MAX_OBSERVE_CHARS} characters]` : output;
}

function parseForDisplay(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

/** Runs `fn` over items with at most `limit` in flight; results keep the items' order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
