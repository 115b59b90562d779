import { countMetric, MetricUnit } from "../observability.js";
import { type ChatModel, type ChatRequest, type ChatResponse, moderationOf } from "./types.js";

/** The model, with each call's latency, tokens and failures as metrics. */
export function withMetrics(model: ChatModel): ChatModel {
  return {
    name: model.name,
    ...moderationOf(model),
    async complete(request: ChatRequest): Promise<ChatResponse> {
      const started = Date.now();
      try {
        const response = await model.complete(request);
        countMetric("ModelLatency", Date.now() - started, {}, MetricUnit.Milliseconds);
        countMetric("ModelPromptTokens", response.usage.promptTokens);
        countMetric("ModelCompletionTokens", response.usage.completionTokens);
        return response;
      } catch (error) {
        countMetric("ModelErrors", 1, { errorType: (error as Error)?.name ?? "Error" });
        throw error;
      }
    },
  };
}
