import type { AgentRole, EventBody } from "../contracts/events.js";
import type { ApprovalPolicy } from "../contracts/interrupts.js";
import { TERMINAL_STATUSES } from "../contracts/run.js";
import type { ChatMessage, ChatResponse } from "../llm/types.js";
import { ContextWindow } from "../memory/context.js";
import { withRequestContext } from "../requestContext.js";
import type { Services } from "../services.js";
import type { ScopeJournal } from "../store/journal.js";
import type { ToolRegistry } from "../tools/registry.js";
import { personaOf, withoutPersona } from "../tools/persona.js";
import { DeltaCoalescer } from "./deltas.js";
import { gateOnPeople, parseArguments, runToolCalls } from "./toolExecution.js";

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
  /** The system prompt, built fresh for every model call (date, files, plan). */
  system: () => string | Promise<string>;
  /** Earlier turns (session memory) and the current user message. */
  conversation: ChatMessage[];
  tools: ToolRegistry;
  maxRounds: number;
  /** Parallel tool calls of one turn run at most this many at once. */
  toolConcurrency?: number;
  /** Which tool calls wait for a person's approval first. */
  toolApproval?: ApprovalPolicy["tools"];
  /** The scope's journal, when the caller has loaded it already. */
  journal?: ScopeJournal;
}

export type LoopOutcome =
  | { kind: "answer"; text: string; rounds: number }
  | { kind: "paused"; rounds: number }
  | { kind: "interrupted"; interruptId: string; rounds: number }
  | { kind: "budget"; text: string; rounds: number }
  /** The run ended meanwhile (cancelled, timed out): stop without doing anything more. */
  | { kind: "ended"; rounds: number };

const OUTPUT_PREVIEW = 2_000;

/**
 * The think/act loop every agent runs: ask the model, run the tools it calls, feed the results
 * back, until it answers. Each model response and tool result is journaled, so a retried step
 * replays them (no repeated side effects, no repeated cost) and a later turn resumes here.
 */
export function runAgentLoop(run: RunScope, options: LoopOptions): Promise<LoopOutcome> {
  return withRequestContext({ runId: run.runId, scope: options.scope }, () => loop(run, options));
}

async function loop(run: RunScope, options: LoopOptions): Promise<LoopOutcome> {
  const { services } = run;
  const journal = options.journal ?? (await services.journal.load(run.runId, options.scope));
  const conversation = [...options.conversation];
  const specs = options.tools.specs();
  const window = new ContextWindow({ model: services.model.name, budgetTokens: services.config.CONTEXT_BUDGET_TOKENS });
  const source = { agent: options.role, ...(options.taskId ? { taskId: options.taskId } : {}) };
  let lastText = "";

  for (let round = 0; round < options.maxRounds; round++) {
    if (run.deadline && Date.now() > run.deadline && !journal.has(round, "llm")) return { kind: "paused", rounds: round };
    if (await hasEnded(run)) return { kind: "ended", rounds: round };

    // Built on replay too: the URL placeholders of a recorded response must map the same way.
    const prompt = window.build(await options.system(), conversation, specs);
    const { value: response, replayed } = await journal.once<ChatResponse>(round, "llm", "", async () => {
      const deltas = new DeltaCoalescer(source, (events) => services.events.append(run.runId, events));
      try {
        return await services.model.complete({ messages: prompt, tools: specs, onText: deltas.push });
      } finally {
        await deltas.close();
      }
    });
    const calls = response.toolCalls.map((call) => window.restoreArguments(call));
    if (!replayed) {
      await Promise.all([
        services.runs.addUsage(run.runId, { ...response.usage, llmCalls: 1, toolCalls: calls.length }),
        services.events.append(run.runId, [
          ...(response.content?.trim() ? [{ type: "agent.thought", data: { ...source, text: response.content } } as const] : []),
          ...calls.map((call) => {
            const args = parseArguments(call.arguments);
            const persona = personaOf(args, options.tools.get(call.name), call.name);
            return { type: "tool.called", data: { ...source, callId: call.id, tool: call.name, arguments: withoutPersona(args), persona } } as const;
          }),
        ]),
      ]);
    }
    conversation.push(assistantMessage(response));
    if (response.content) lastText = response.content;
    if (calls.length === 0) return { kind: "answer", text: response.content ?? "", rounds: round + 1 };

    const toolRound = {
      runId: run.runId,
      scope: options.scope,
      round,
      taskId: options.taskId,
      tools: options.tools,
      journal,
      services,
      approval: options.toolApproval,
      concurrency: options.toolConcurrency ?? services.config.TOOL_CONCURRENCY,
    };
    // A cancel may have come while the model was thinking: no side effects after it.
    if (await hasEnded(run)) return { kind: "ended", rounds: round };
    const gate = await gateOnPeople(toolRound, calls);
    if (gate.waitingFor) return { kind: "interrupted", interruptId: gate.waitingFor, rounds: round };
    const outcomes = await runToolCalls(toolRound, calls, gate.decisions);
    const fresh: EventBody[] = [];
    calls.forEach((call, i) => {
      const { value, replayed: wasReplayed } = outcomes[i]!;
      conversation.push({ role: "tool", tool_call_id: call.id, content: value.output });
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

async function hasEnded(run: RunScope): Promise<boolean> {
  const record = await run.services.runs.get(run.runId);
  return !record || TERMINAL_STATUSES.has(record.status);
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
