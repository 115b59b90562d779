import type { ToolCatalog } from "../ports/toolCatalog.js";
import type { Tool } from "../ports/tools.js";
import { readArtifact, writeArtifact } from "./artifacts.js";
import { askUser } from "./askUser.js";
import { calculator } from "./calculator.js";
import { ToolRegistry } from "./registry.js";
import { textStats } from "./textStats.js";

/** The tools every executor and ReAct agent has. They do real work and need no network. */
export const builtinTools: readonly Tool[] = [calculator, textStats, writeArtifact, readArtifact];

/**
 * Every agent may also ask the user: an executor's Map item waits alone, as for a tool approval,
 * and a ReAct agent talks to the user directly.
 */
export const agentTools = () => new ToolRegistry([...builtinTools, askUser]);

/**
 * A catalog with tools built from services (the code sandbox, the web, reports) added to what the
 * inner catalog gives (built-ins and the tenant's tool sources); a name the inner catalog already
 * has wins.
 */
export function catalogWith(inner: ToolCatalog, extra: readonly Tool[]): ToolCatalog {
  return {
    async registryFor(tenantId, ...rest) {
      const registry = await inner.registryFor(tenantId, ...rest);
      const known = new Set(registry.names);
      return new ToolRegistry([...registry.tools, ...extra.filter((tool) => !known.has(tool.name))]);
    },
    // A source added or removed is seen at once: pass the inner catalog's cache reset through.
    invalidate: (tenantId) => inner.invalidate?.(tenantId),
  };
}
