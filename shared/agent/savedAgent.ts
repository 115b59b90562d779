import type { RunAgent } from "../contracts/run.js";
import { type ChatModel, type GenerationSettings, moderationOf } from "../llm/types.js";
import type { ToolCatalog } from "../ports/toolCatalog.js";
import { ToolRegistry } from "../tools/registry.js";

/**
 * The ports a run's agents use, as the saved agent it named set them: only its allow-listed tools
 * are offered (and listed in prompts), and each role's model settings are its own. A run that named
 * none gets the ports as they are.
 */
export function portsForAgent<P extends { tools?: ToolCatalog; model: ChatModel }>(ports: P, agent: RunAgent | undefined): P {
  if (!agent) return ports;
  return {
    ...ports,
    ...(agent.tools && ports.tools ? { tools: allowListed(ports.tools, agent.tools) } : {}),
    ...(agent.roles ? { model: withRoleSettings(ports.model, agent.roles) } : {}),
  };
}

/** The catalogue with only the named tools, in the catalogue's order. */
function allowListed(catalog: ToolCatalog, names: readonly string[]): ToolCatalog {
  const allowed = new Set(names);
  return {
    async registryFor(tenantId, run) {
      const registry = await catalog.registryFor(tenantId, run);
      return new ToolRegistry(registry.tools.filter((tool) => allowed.has(tool.name)));
    },
    invalidate: (tenantId) => catalog.invalidate?.(tenantId),
  };
}

/** The model with the agent's settings for each role over the deployment's (`null` leaves a setting unsent). */
function withRoleSettings(model: ChatModel, roles: NonNullable<RunAgent["roles"]>): ChatModel {
  return {
    name: model.name,
    ...moderationOf(model),
    complete(request) {
      const own = request.role ? roles[request.role] : undefined;
      if (!own) return model.complete(request);
      const settings = Object.fromEntries(Object.entries(own).map(([key, value]) => [key, value ?? undefined])) as GenerationSettings;
      return model.complete({ ...request, settings: { ...settings, ...request.settings } });
    },
  };
}
