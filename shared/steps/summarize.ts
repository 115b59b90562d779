import { summarize as writeAnswer, type SummarizerPorts } from "../agent/summarizer.js";
import type { StepPorts } from "../ports/index.js";

export type SummarizePorts = StepPorts<keyof SummarizerPorts>;

/** "Summarize": the answer from the task results; "Finalize" then ends the run. */
export async function summarize(input: { runId: string }, ports: SummarizePorts): Promise<{ runId: string; files: string[] }> {
  const { files } = await writeAnswer({ runId: input.runId, ports });
  return { runId: input.runId, files };
}
