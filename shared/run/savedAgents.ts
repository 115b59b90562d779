import type { SaveAgentRequest, SavedAgent } from "../contracts/agents.js";
import { BadRequestError } from "../errors.js";
import type { Ports, SettingsOf } from "../ports/index.js";
import type { Settings } from "../settings.js";

export type SaveAgentPorts = Pick<Ports, "savedAgents" | "tools"> & SettingsOf<"model" | "prices">;

/**
 * Saves a new version of a tenant's agent once it holds only what the tenant has: every tool of
 * its allow-list is in the tenant's catalogue now, and every model it names is one the deployment
 * allows. A refused save writes nothing.
 */
export async function saveAgent(ports: SaveAgentPorts, tenantId: string, name: string, config: SaveAgentRequest): Promise<SavedAgent> {
  if (config.tools) {
    const catalogue = new Set((await ports.tools.registryFor(tenantId)).names);
    const unknown = config.tools.filter((tool) => !catalogue.has(tool));
    if (unknown.length)
      throw new BadRequestError(
        `The tool allow-list names ${unknown.length === 1 ? "a tool" : "tools"} this tenant does not have: ${unknown.join(", ")} (GET /v1/tools lists the catalogue).`,
        { tools: unknown },
        "unknown_tool",
      );
  }
  const allowed = allowedModels(ports.settings);
  const models = Object.entries(config.roles ?? {}).flatMap(([role, s]) =>
    s?.model && !allowed.has(s.model) ? [`${role}: ${s.model}`] : [],
  );
  if (models.length)
    throw new BadRequestError(
      `The deployment does not offer ${models.join(", ")}; a saved agent may name ${[...allowed].join(", ")}.`,
      { models },
      "model_not_allowed",
    );
  return ports.savedAgents.save(tenantId, name, config);
}

/** The models a saved agent may name: those the deployment's settings name (its model, fallback, role models, price table). */
export function allowedModels(settings: Pick<Settings, "model" | "prices">): Set<string> {
  const { model } = settings;
  return new Set(
    [
      model.name,
      model.fallback,
      ...Object.values(model.roles ?? {}).map((role) => role?.model),
      ...Object.keys(settings.prices.table),
    ].filter((m): m is string => Boolean(m)),
  );
}
