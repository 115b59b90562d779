import { finishTask } from "../../shared/agent/executor.js";
import { RecordTaskFailureInput } from "../../shared/contracts/steps.js";
import { describeCause } from "../../shared/run/lifecycle.js";
import { stepHandler } from "./stepHandler.js";

/** The executor crashed or timed out: the task fails, the run goes on and the planner sees it. */
export const handler = stepHandler("RecordTaskFailure", RecordTaskFailureInput, (run, { error, ...input }) =>
  finishTask(run, input, "failed", `The executor stopped: ${describeCause(error)}`),
);
