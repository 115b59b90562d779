import { summarize } from "../../shared/agent/summarizer.js";
import { RunState } from "../../shared/contracts/steps.js";
import { stepHandler } from "./stepHandler.js";

export const handler = stepHandler("Summarize", RunState.pick({ runId: true }), async (run) => {
  const { files } = await summarize(run);
  return { runId: run.runId, files };
});
