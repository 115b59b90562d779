import * as z from "zod";
import type { RunRecord } from "../contracts/run.js";
import { errorMessage } from "../errors.js";
import { isGuardrailStop, TextGuard } from "../guardrails/textGuard.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import { ToolRegistry } from "../tools/registry.js";
import { defineTool } from "../tools/tool.js";

/** The router: one journaled model call, its usage on the run. */
export type RouterPorts = Pick<Ports, "model" | "journal" | "runs" | "events" | "tools" | "files" | "notifyQueue"> & SettingsOf<"budgets">;

import { type ChatMessage, parseOrUndefined } from "../llm/types.js";
import { ContextWindow } from "../memory/context.js";
import { ReplayDivergedError } from "../run/replayDivergence.js";
import { textStream } from "./deltas.js";
import { fileLines, routerPrompt, toolLines } from "./prompts.js";
import { ScopeJournal } from "./scopeJournal.js";

export type AgentMode = "react" | "plan_solve";
export type RouteDecision = { mode: AgentMode; reason: string } | { mode: "answer"; answer: string; reason: string };

/** The mode the request fixes by itself, or undefined when the router model must decide. */
export function fixedMode(run: Pick<RunRecord, "requestedMode" | "deepThink">): AgentMode | undefined {
  if (run.requestedMode !== "auto") return run.requestedMode;
  // JD Genie: deepThink = 0 → ReAct, otherwise Plan-Solve.
  if (run.deepThink !== undefined) return run.deepThink ? "plan_solve" : "react";
  return undefined;
}

const ChooseMode = z.object({
  mode: z.enum(["answer", "react", "plan_solve"]),
  answer: z.string().max(20_000).optional().describe("with mode answer: the answer to give the user"),
  reason: z.string().max(1000).optional(),
});

const chooseModeTool = defineTool({
  name: "choose_mode",
  description:
    "Choose how to handle the request: answer (directly, with the answer), react (one agent with tools) or plan_solve (planner and parallel executors).",
  access: "read",
  pure: true,
  parameters: ChooseMode,
  async run({ mode }) {
    return `mode: ${mode}`;
  },
});

/**
 * Asks the model which mode fits; ReAct when the model gives no usable answer. A direct answer is
 * the model's text (it streams to clients as agent.delta from the router); a choose_mode call with
 * mode "answer" and its answer is taken too.
 */
export async function chooseMode(
  run: { runId: string; ports: RouterPorts },
  record: Pick<RunRecord, "input" | "tenantId" | "instructions" | "guardrails" | "webhook">,
  history: ChatMessage[] = [],
): Promise<RouteDecision> {
  const { ports } = run;
  const [journal, team, files] = await Promise.all([
    ScopeJournal.load(ports.journal, run.runId, "route"),
    ports.tools.registryFor(record.tenantId, { runId: run.runId }),
    ports.files.list(run.runId),
  ]);
  const usage = { promptTokens: 0, completionTokens: 0, llmCalls: 0 };
  const guard = new TextGuard(ports, run.runId, record.guardrails, { agent: "router" }, usage);
  try {
    const tools = new ToolRegistry([chooseModeTool]).specs();
    const window = new ContextWindow({ model: ports.model.name, budgetTokens: ports.settings.budgets.contextTokens });
    const system = routerPrompt({ tools: toolLines(team), files: fileLines(files), instructions: record.instructions });
    const messages = window.build(system, [...history, { role: "user", content: record.input }], tools);
    const stream = textStream(
      ports,
      run.runId,
      { agent: "router" },
      { restore: (text) => window.restoreText(text), guard, webhook: record.webhook ?? null },
    );
    const { value, replayed, inherited } = await journal
      .once(0, "llm", "", () =>
        ports.model.complete({
          messages,
          tools,
          role: "router",
          onText: stream.onText,
          onReasoning: stream.onReasoning,
          onRetry: stream.onRetry,
        }),
      )
      .finally(stream.close);
    // An inherited reply (a replay's, a fork's) was paid for by the run it came from.
    if (!replayed && !inherited)
      await ports.runs.addUsage(run.runId, { ...value.usage, llmCalls: 1, fallbackCalls: value.fallback ? 1 : 0 });
    const call = value.toolCalls.find((c) => c.name === "choose_mode");
    const choice = call ? ChooseMode.safeParse(parseOrUndefined(call.arguments)) : undefined;
    if (choice?.success) {
      const { mode, answer, reason = "" } = choice.data;
      if (mode !== "answer") return { mode, reason };
      // "Answer" without an answer is no answer: let one agent handle it.
      if (!answer?.trim()) return { mode: "react", reason: "the router chose to answer but gave no answer" };
      const shown = await guard.shown(window.restoreText(answer));
      // An answer given as the tool's argument did not stream: it reaches clients as one delta.
      if (!replayed) await ports.events.append(run.runId, [{ type: "agent.delta", data: { agent: "router", text: shown } }]);
      return { mode, answer: shown, reason };
    }
    if (!call && value.content?.trim())
      return { mode: "answer", answer: await guard.shown(window.restoreText(value.content.trim())), reason: "It needs no tools." };
    return { mode: "react", reason: "the router gave no choice; ReAct is the default" };
  } catch (error) {
    // A guardrail's block (or a block check that cannot answer) is the run's, not the router's failure.
    if (isGuardrailStop(error)) throw error;
    if (error instanceof ReplayDivergedError) throw error; // a replay stops where it parts from its journal
    return { mode: "react", reason: `the router failed (${errorMessage(error)}); ReAct is the default` };
  } finally {
    if (usage.llmCalls) await ports.runs.addUsage(run.runId, usage);
  }
}
