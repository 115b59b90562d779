import { z } from "zod";
import type { RunRecord } from "../contracts/run.js";
import { errorMessage } from "../errors.js";
import { defineTool } from "../tools/tool.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Ports } from "../ports/index.js";

/** The router: one journaled model call, its usage on the run. */
export type RouterPorts = Pick<Ports, "config" | "model" | "journal" | "runs">;
import type { ChatMessage } from "../llm/types.js";
import { ContextWindow } from "../memory/context.js";
import { routerPrompt } from "./prompts.js";

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
  description: "Choose how to handle the request: answer (directly, with the answer), react (one agent with tools) or plan_solve (planner and parallel executors).",
  access: "read",
  pure: true,
  parameters: ChooseMode,
  async run({ mode }) {
    return `mode: ${mode}`;
  },
});

/** Asks the model which mode fits; ReAct when the model gives no usable answer. */
export async function chooseMode(run: { runId: string; ports: RouterPorts }, input: string, history: ChatMessage[] = []): Promise<RouteDecision> {
  const { ports } = run;
  const journal = await ports.journal.load(run.runId, "route");
  try {
    const tools = new ToolRegistry([chooseModeTool]).specs();
    const window = new ContextWindow({ model: ports.model.name, budgetTokens: ports.config.CONTEXT_BUDGET_TOKENS });
    const { value, replayed } = await journal.once(0, "llm", "", () =>
      ports.model.complete({ messages: window.build(routerPrompt(), [...history, { role: "user", content: input }], tools), tools }),
    );
    if (!replayed) await ports.runs.addUsage(run.runId, { ...value.usage, llmCalls: 1 });
    const call = value.toolCalls.find((c) => c.name === "choose_mode");
    const choice = call ? ChooseMode.safeParse(JSON.parse(call.arguments)) : undefined;
    if (choice?.success) {
      const { mode, answer, reason = "" } = choice.data;
      if (mode !== "answer") return { mode, reason };
      // "Answer" without an answer is no answer: let one agent handle it.
      return answer?.trim() ? { mode, answer, reason } : { mode: "react", reason: "the router chose to answer but gave no answer" };
    }
    return { mode: "react", reason: "the router gave no choice; ReAct is the default" };
  } catch (error) {
    return { mode: "react", reason: `the router failed (${errorMessage(error)}); ReAct is the default` };
  }
}
