import type { RunEvent } from "../../shared/contracts/events.js";

/** A short plan-and-solve run's events, as the stream sends them: started, one calculator call and its result, the answer. */
export function calculatorRunEvents(result = "17*23 = 391"): RunEvent[] {
  return [
    { type: "run.started", data: { mode: "plan_solve", input: "Compute 17*23" }, seq: 1, at: "2026-01-01T00:00:00.000Z" },
    {
      type: "tool.called",
      data: { agent: "executor", taskId: "t1", callId: "c1", tool: "calculator", arguments: { expression: "17*23" } },
      seq: 2,
      at: "2026-01-01T00:00:01.000Z",
    },
    {
      type: "tool.result",
      data: { agent: "executor", taskId: "t1", callId: "c1", tool: "calculator", ok: true, output: "17*23 = 391" },
      seq: 3,
      at: "2026-01-01T00:00:02.000Z",
    },
    { type: "run.succeeded", data: { result, files: [] }, seq: 4, at: "2026-01-01T00:00:03.000Z" },
  ];
}
