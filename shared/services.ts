import type { BaseServices } from "./baseServices.js";
import type { Ports } from "./ports/index.js";
import type { SecretCipher } from "./ports/secretCipher.js";
import type { ToolSourceStore } from "./store/toolSources.js";

/**
 * Everything a handler that runs agents or lists their tools needs: the base services
 * (shared/baseServices.ts), the model, the tool catalog and the tool sources (functions/services.ts
 * wires them once per container; tests inject their own).
 */
export interface Services extends BaseServices, Pick<Ports, "model" | "tools"> {
  toolSources: ToolSourceStore;
  /** Seals and opens secrets at rest (tool source headers) with the stack's KMS key. */
  secrets: SecretCipher;
}
