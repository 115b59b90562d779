import type { ToolCatalog } from "../ports/toolCatalog.js";
import type { Tool } from "../ports/tools.js";
import { readArtifact, writeArtifact } from "./artifacts.js";
import { askUser } from "./askUser.js";
import { calculator } from "./calculator.js";
import { ToolRegistry } from "./registry.js";
import { textStats } from "./textStats.js";

/** The tools every executor and ReAct agent has. They do real work and need no network. */
export const builtinTools: readonly Tool[] = [calculator, textStats, writeArtifact, readArtifact];

/** Executors may ask the user too: their Map item waits alone, as for a tool approval. */
export const agentTools = () => new ToolRegistry([...builtinTools, askUser]);

/** ReAct agents talk to the user directly, so they may also ask them. */
export const reactTools = () => new ToolRegistry([...builtinTools, askUser]);

/**
 * A catalog with tools built from services (the code sandbox, the web, reports) added to what the
 * inner catalog gives (built-ins and the tenant's tool sources); a name the inner catalog already
 * has wins.
 */
export function catalogWith(inner: ToolCatalog, extra: readonly Tool[]): ToolCatalog {
  return {
    async registryFor(tenantId, audience, ...rest) {
      const registry = await inner.registryFor(tenantId, audience, ...rest);
      const known = new Set(registry.names);
      return new ToolRegistry([...registry.tools, ...extra.filter((tool) => !known.has(tool.name))]);
    },
    // A source added or removed is seen at once: pass the inner catalog's cache reset through.
    invalidate: (tenantId) => inner.invalidate?.(tenantId),
  };
}
