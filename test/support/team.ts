import type { ChatRequest } from "../../shared/llm/types.js";
import { lastUserText, ScriptedModel, type ScriptedReply, systemText } from "../../shared/testing/scriptedModel.js";

/** The tool messages the agent has had back so far in this conversation. */
const toolResults = (request: ChatRequest) => request.messages.filter((m) => m.role === "tool").map((m) => String(m.content));

/**
 * A deterministic team of agents for the core's unit tests: each reply is a function of the
 * request alone (which agent asks, what it has seen), so a step that runs again after a crash gets
 * the same replies. The planner plans one step of two tasks (add with the calculator; write a
 * report file with write_artifact), then finishes; executors call their tool once and report its
 * output; the summarizer joins the results; a ReAct agent writes its file, then answers.
 */
export function teamModel(): ScriptedModel {
  return new ScriptedModel((request) => teamReply(request));
}

export function teamReply(request: ChatRequest): ScriptedReply {
  const system = systemText(request);
  const user = lastUserText(request);
  const results = toolResults(request);
  if (system.startsWith("You are the router"))
    return { calls: [{ id: "route_1", name: "choose_mode", args: { mode: "plan_solve", reason: "two parts" } }] };
  if (system.startsWith("You are the planner")) {
    if (user.includes("All steps are completed")) return { calls: [{ id: "finish_1", name: "planning", args: { command: "finish" } }] };
    if (user.includes("Results of step")) return { text: "The plan stands." };
    return {
      calls: [
        {
          id: "plan_1",
          name: "planning",
          args: {
            command: "create",
            title: "Sum and report",
            steps: [{ title: "Compute and write", tasks: ["Add 2 and 2 with the calculator", "Write the report file sum.md"] }],
          },
        },
      ],
    };
  }
  if (system.startsWith("You are an executor")) {
    if (results.length) return { text: `Done: ${results.join(" ")}` };
    if (user.includes("Your task: Add")) return { calls: [{ id: "calc_1", name: "calculator", args: { expression: "2+2" } }] };
    return { calls: [{ id: "write_1", name: "write_artifact", args: { filename: "sum.md", content: "# Sum\n2 + 2 = 4\n" } }] };
  }
  if (system.startsWith("You are the summarizer"))
    return { text: `Summary of the results:\n${user.split("Task results:")[1]?.trim() ?? ""}` };
  // A ReAct agent.
  if (results.length === 0)
    return { calls: [{ id: "write_1", name: "write_artifact", args: { filename: "answer-notes.md", content: "2 + 2 = 4" } }] };
  return { text: `2 + 2 = 4 (${results.join(" ")})` };
}
