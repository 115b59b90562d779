import { ANSWERED } from "../contracts/answers.js";
import type { ApprovalPolicy, Interrupt, Resolution, ResolveInterruptRequest } from "../contracts/interrupts.js";
import { AgentError, BadRequestError } from "../errors.js";
import type { ToolCall } from "../llm/types.js";
import type { Tool, ToolContext, ToolOutcome, ToolSet } from "../ports/tools.js";

/**
 * Tool approval, whole: which tool calls wait for a person, what the person is asked, how an edit
 * is checked, and what the decision does to the call. The wait itself is an interrupt
 * (interrupts.ts opens and decides it; toolExecution.ts stops the round at the first open one).
 */

/** The run's policy reads the tool's access, never its name: "write" stops write tools, "all" every tool. */
export function needsApproval(tool: Tool, policy: ApprovalPolicy["tools"] = "none"): boolean {
  return policy === "all" || (policy === "write" && tool.access === "write");
}

/** Whom a call waits for: an answer (a tool that asks the user), an approval, or nobody. */
export function pauseKindOf(tool: Tool | undefined, policy: ApprovalPolicy["tools"] | undefined): "ask_user" | "tool_approval" | undefined {
  return tool?.asksUser ? "ask_user" : tool && needsApproval(tool, policy) ? "tool_approval" : undefined;
}

/** What the person is shown: the agent's question, or the call with its arguments. */
export function pauseRequest(
  kind: "ask_user" | "tool_approval",
  call: ToolCall,
  args: { question?: unknown } | undefined,
  /** A tool policy asks for the approval: its reason leads the summary. */
  reason?: string,
): { question?: string; summary: string; reason?: string } {
  const run = `Run ${call.name} with ${JSON.stringify(args).slice(0, 300)}`;
  return {
    question: kind === "ask_user" ? String(args?.question ?? "") : undefined,
    summary: kind === "ask_user" ? `The agent asks: ${args?.question ?? ""}` : reason ? `${reason}\n${run}` : run,
    ...(reason ? { reason } : {}),
  };
}

/** An edit must carry arguments that fit the tool's schema; no other decision carries arguments. */
export function checkEditedArguments(
  interrupt: Interrupt,
  request: ResolveInterruptRequest,
  findTool: (name: string) => Tool | undefined,
): void {
  if (request.decision === "edit") {
    if (!request.arguments) throw new BadRequestError("An edit needs the new 'arguments' for the tool.");
    const tool = interrupt.toolName ? findTool(interrupt.toolName) : undefined;
    const parsed = tool?.parameters.safeParse(request.arguments);
    if (parsed && !parsed.success) {
      const details = parsed.error.issues.map((i) => ({ path: ["arguments", ...i.path.map(String)].join("."), message: i.message }));
      throw new BadRequestError(
        `The edited arguments do not fit ${interrupt.toolName}: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`,
        details,
        "validation_failed",
      );
    }
  } else if (request.arguments) {
    throw new BadRequestError("'arguments' go only with the edit decision.");
  }
}

/** What a person decided becomes the tool's result, so the model sees it and adapts. */
export async function applyDecision(call: ToolCall, resolution: Resolution, tools: ToolSet, context: ToolContext): Promise<ToolOutcome> {
  switch (resolution.decision) {
    case "approve":
      return tools.execute(call, context);
    case "edit": {
      const outcome = await tools.execute({ ...call, arguments: JSON.stringify(resolution.arguments ?? {}) }, context);
      return { ...outcome, output: `The user changed the arguments to ${JSON.stringify(resolution.arguments)}. ${outcome.output}` };
    }
    case "answer":
      return { ok: true, output: `${ANSWERED}${resolution.message ?? ""}` };
    case "reject": {
      // The user's words are the fact; the instruction after them is for the model only.
      const shown = `Rejected by the user${resolution.message ? `: ${resolution.message}` : ""}.`;
      return { ok: false, shown, output: `${shown}\n${MODEL_INSTRUCTION_ON_REJECT}`, undone: { tool: call.name, decision: "reject" } };
    }
    // A failed call (toolFailure.ts): run it once more, or put the person's message in its place.
    case "retry":
      return tools.execute(call, context);
    case "skip": {
      const shown = `Skipped by the user${resolution.message ? `: ${resolution.message}` : "."}`;
      return { ok: false, shown, output: `${shown}\n${MODEL_INSTRUCTION_ON_SKIP}`, undone: { tool: call.name, decision: "skip" } };
    }
    case "fail":
      throw failedByPerson(call, resolution);
  }
}

/** A person chose to fail the task rather than go on without a failed call. */
export function failedByPerson(call: ToolCall, resolution: Resolution): AgentError {
  return new AgentError(
    `${call.name} failed and the user chose to stop${resolution.message ? `: ${resolution.message}` : "."}`,
    "tool_failed",
  );
}

/** Said to the model after a rejection; never shown to clients. */
const MODEL_INSTRUCTION_ON_REJECT = "(Instruction: do not repeat this call; continue without it or choose another way.)";

/** Said to the model after a failed call was skipped; never shown to clients. */
const MODEL_INSTRUCTION_ON_SKIP = "(Instruction: this call did not run; continue without it.)";
