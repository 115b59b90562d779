import { StepError, StepErrorCode } from "../errors.js";
import { logger } from "../observability.js";
import { type RoleSettings, settingsFor } from "./roleSettings.js";
import type { ChatModel, ChatRequest, ChatResponse } from "./types.js";

/**
 * The model as agents see it: each request generated with its role's settings (model,
 * temperature, output limit, reasoning effort), and, when the first model stays unavailable after
 * its retries, answered by the fallback model (the response says so, and the run's usage counts it).
 */
export class RoleModel implements ChatModel {
  readonly name: string;

  constructor(
    private readonly primary: ChatModel,
    private readonly options: { roles?: RoleSettings; fallback?: ChatModel } = {},
  ) {
    this.name = primary.name;
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const settings = { ...settingsFor(request.role, this.options.roles), ...request.settings };
    try {
      return await this.primary.complete({ ...request, settings });
    } catch (error) {
      const { fallback } = this.options;
      const unavailable = error instanceof StepError && error.code === StepErrorCode.ModelUnavailable;
      if (!fallback || !unavailable || request.signal?.aborted) throw error;
      logger.warn("the model stayed unavailable; the fallback model answers", {
        model: settings.model ?? this.name,
        fallback: fallback.name,
        error: error.message,
      });
      // The role's own model is the first model's choice: the fallback answers as itself.
      const response = await fallback.complete({ ...request, settings: { ...settings, model: undefined } });
      return { ...response, model: fallback.name, fallback: true };
    }
  }
}
