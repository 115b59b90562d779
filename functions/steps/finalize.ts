import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { FinalizeOutput, RunRef } from "../../shared/contracts/steps.js";
import { withMetrics } from "../../shared/llm/metered.js";
import type { ChatModel } from "../../shared/llm/types.js";
import { type FinalizePorts, finalize } from "../../shared/steps/finalize.js";
import { getBaseServices } from "../baseServices.js";
import { modelFor } from "../services.js";
import { stepHandlerWith } from "./stepHandler.js";

export const step = { state: "Finalize", input: RunRef, output: FinalizeOutput, run: finalize };

let model: ChatModel | undefined;

/** The base services and the model (no tools): once the run has ended, its session's first answered turn is titled. */
export function finalizePorts(): FinalizePorts {
  const base = getBaseServices();
  model ??= withMetrics(modelFor(base.settings.model, new SecretsManagerClient({ region: base.settings.region })));
  return { ...base, model };
}

export const handler = stepHandlerWith(step, finalizePorts);
