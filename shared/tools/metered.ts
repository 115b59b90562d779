import { countMetric } from "../observability.js";
import type { ToolCatalog } from "../ports/toolCatalog.js";
import type { Tool } from "../ports/tools.js";
import { ToolRegistry } from "./registry.js";

/** The catalog, with every tool call and tool error counted by tool name. */
export function meteredCatalog(catalog: ToolCatalog): ToolCatalog {
  return {
    async registryFor(tenantId, run) {
      const registry = await catalog.registryFor(tenantId, run);
      return new ToolRegistry(registry.tools.map((tool) => meteredTool(tool)));
    },
    invalidate: (tenantId) => catalog.invalidate?.(tenantId),
  };
}

function meteredTool(tool: Tool): Tool {
  // A view of the tool (its prototype keeps any getters) whose run is counted.
  return Object.assign(Object.create(tool) as Tool, {
    async run(args: unknown, context: Parameters<Tool["run"]>[1]) {
      try {
        const output = await tool.run(args, context);
        countMetric("ToolCalls", 1, { tool: tool.name });
        return output;
      } catch (error) {
        countMetric("ToolErrors", 1, { tool: tool.name });
        throw error;
      }
    },
  });
}
