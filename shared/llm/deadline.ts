import { StepError, StepErrorCode } from "../errors.js";
import { type ChatModel, type ChatRequest, type ChatResponse, moderationOf } from "./types.js";

/**
 * The model, with every call aborted when the Lambda's time is up (`deadlineAt`, epoch ms): the step
 * then fails with Stepwise.OutOfTime, which the state machine retries, instead of Lambda killing it
 * mid-write. The journal makes the next attempt pick up after the last recorded call.
 */
export function withDeadline(model: ChatModel, deadlineAt: number): ChatModel {
  return {
    name: model.name,
    ...moderationOf(model),
    async complete(request: ChatRequest): Promise<ChatResponse> {
      const outOfTime = new StepError(StepErrorCode.OutOfTime, `The step's time ran out during a call to ${model.name}.`);
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(outOfTime), Math.max(0, deadlineAt - Date.now()));
      try {
        return await model.complete({
          ...request,
          signal: request.signal ? AbortSignal.any([request.signal, controller.signal]) : controller.signal,
        });
      } catch (error) {
        throw controller.signal.aborted ? outOfTime : error;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
