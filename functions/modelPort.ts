import type { ChatModel } from "../shared/llm/types.js";
import type { PortBuilder } from "./wiring.js";

/**
 * The model port of a handler that calls the model: the OpenAI client and its settings are loaded
 * on the first call (functions/modelClient.ts), not when the handler's code is imported.
 */
export const modelPort: PortBuilder<"model"> = ({ settings }) => {
  let model: Promise<ChatModel> | undefined;
  const loaded = () => {
    model ??= import("./modelClient.js").then((client) => client.modelFor(settings.model, settings.region));
    return model;
  };
  return {
    name: settings.model.name,
    complete: async (request) => (await loaded()).complete(request),
    // The endpoint's /v1/moderations, for the guardrails' moderation checks.
    moderate: async (input, options) => {
      const model = await loaded();
      if (!model.moderate) throw new Error(`The model ${model.name} has no moderation endpoint.`);
      return model.moderate(input, options);
    },
  };
};
