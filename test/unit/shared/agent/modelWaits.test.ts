import { describe, expect, it } from "vitest";
import type { ChatModel, ChatResponse } from "../../../../shared/llm/types.js";
import { agentTurn } from "../../../../shared/steps/agentTurn.js";
import { writeReport } from "../../../../shared/tools/writeReport.js";
import { eventTypes, withRun } from "../../../support/memoryRun.js";

/**
 * A model call made by a tool (write_report writing live) that is retried is reported as an
 * agent's own call is: a `model.retrying` event of the calling agent, the run's `modelWait` while
 * it waits, and one waiting spell on the notification queue for a subscription that hears of it.
 */

const retry = { attempt: 1, retries: 2, reason: "HTTP 429 (rate limited)", waitMs: 0 };
const reply = (content: string, calls: ChatResponse["toolCalls"] = []): ChatResponse => ({
  content,
  toolCalls: calls,
  finishReason: calls.length ? "tool_calls" : "stop",
  usage: { promptTokens: 1, completionTokens: 1 },
});

/** The agent asks for a report written from its notes, then answers; the writer's first reply breaks off and is retried. */
function agentAndWriter(): ChatModel {
  let agentCalls = 0;
  return {
    name: "scripted",
    async complete(request) {
      const writing = String(request.messages[0]?.content).startsWith("You are a report writer.");
      if (!writing) {
        return agentCalls++ === 0
          ? reply("Writing the report.", [
              {
                id: "call_1",
                name: "write_report",
                arguments: JSON.stringify({ title: "Sales", format: "markdown", task: "Review sales", material: ["notes.md"] }),
              },
            ])
          : reply("The report is saved as sales.md.");
      }
      request.onText?.("## Summary\n\nNorth le");
      request.onRetry?.(retry);
      request.onText?.("## Summary\n\nNorth leads with 220.\n");
      return reply("## Summary\n\nNorth leads with 220.\n");
    },
  };
}

async function reportTurn(webhook?: { url: string; events: string[] }) {
  const model = agentAndWriter();
  const setup = await withRun({ status: "running", ...(webhook ? { webhook } : {}) }, { model, tools: [writeReport] });
  await setup.ports.files.put(setup.runId, "notes.md", "north 220, south 180");
  const output = await agentTurn({ runId: setup.runId, mode: "react" }, setup.ports);
  expect(output.done).toBe(true);
  return setup;
}

describe("the report writer's model retries", () => {
  it("are told as the agent's own retries: a model.retrying event of the calling agent, the run's wait, one spell queued", async () => {
    const { fakes, runId, ports } = await reportTurn({ url: "https://hooks.example.com/stepwise", events: ["run.waiting_on_model"] });
    const types = eventTypes(fakes, runId);
    expect(types).toContain("report.withdrawn");
    const retrying = fakes.events.all(runId).filter((e) => e.type === "model.retrying");
    expect(retrying.map((e) => e.data)).toEqual([{ agent: "react", ...retry }]);
    const queued = fakes.notifyQueue.take().filter((m) => m.kind === "model_waiting");
    expect(queued).toEqual([expect.objectContaining({ runId, modelWait: expect.objectContaining({ agent: "react", ...retry }) })]);
    // The call answered: the run no longer waits for the model.
    expect((await ports.runs.get(runId))?.modelWait).toBeNull();
  });

  it("queue nothing for a run whose subscription does not hear of model waits; the event is still on the run", async () => {
    const { fakes, runId } = await reportTurn({ url: "https://hooks.example.com/stepwise", events: ["run.succeeded"] });
    expect(eventTypes(fakes, runId).filter((t) => t === "model.retrying")).toHaveLength(1);
    expect(fakes.notifyQueue.take().filter((m) => m.kind === "model_waiting")).toEqual([]);
  });
});
