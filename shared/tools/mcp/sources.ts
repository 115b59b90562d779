import { type CreateToolSourceRequest, type SourceToolInfo, type ToolSourceRecord, toolSourceView } from "../../contracts/toolSources.js";
import { ConflictError, errorMessage, NotFoundError, UnprocessableError } from "../../errors.js";
import { assertDeliverableUrl, WebhookUrlError } from "../../net/ssrfGuard.js";
import type { Ports } from "../../ports/index.js";
import type { SecretCipher } from "../../ports/secretCipher.js";
import { headerContext } from "./catalog.js";
import { listMcpTools, type McpNetworkPolicy, toolSourceUrlError, withMcp } from "./client.js";
import { accessOf } from "./mcpTool.js";
import { exposedToolNames } from "./names.js";
import { redactor } from "./redact.js";

function networkPolicy(services: Pick<Ports, "settings">): McpNetworkPolicy {
  return services.settings.toolSources.policy;
}

/**
 * Registers a tenant's MCP server: the URL must pass the SSRF guard and the server must answer
 * tools/list now (422 with the reason otherwise); header values are sealed before they are stored.
 */
export async function registerToolSource(
  services: Pick<Ports, "settings" | "toolSources" | "tools"> & { secrets: SecretCipher },
  tenantId: string,
  request: CreateToolSourceRequest,
) {
  const policy = networkPolicy(services);
  await checkUrl(request.url, policy);
  if (await services.toolSources.get(tenantId, request.name))
    throw new ConflictError(`There is a tool source named ${request.name} already; delete it first.`);

  const headers = request.headers ?? {};
  const redact = redactor(Object.values(headers));
  const definitions = await withMcp({ url: request.url, headers }, policy, services.settings.toolSources.connectTimeoutMs, (client) =>
    listMcpTools(client, services.settings.toolSources.connectTimeoutMs),
  ).catch((error): never => {
    if (error instanceof WebhookUrlError) throw toolSourceUrlError(error);
    throw new UnprocessableError(
      `The MCP server at ${request.url} could not be reached or did not list its tools: ${redact(errorMessage(error)).slice(0, 500)}`,
      "tool_source_unreachable",
    );
  });
  const own = new Set(definitions.map((d) => d.name));
  const unknown = [...(request.tools ?? []), ...Object.keys(request.access ?? {})].filter((name) => !own.has(name));
  if (unknown.length) {
    throw new UnprocessableError(
      `The server has no tool named ${[...new Set(unknown)].join(", ")}. Its tools: ${[...own].join(", ") || "none"}.`,
      "unknown_tools",
      { unknown },
    );
  }
  const allowed = request.tools ? new Set(request.tools) : undefined;
  const offered = definitions.filter((d) => !allowed || allowed.has(d.name));
  const names = exposedToolNames(
    request.name,
    offered.map((d) => d.name),
  );
  const byOwnName = new Map(offered.map((d) => [d.name, d]));
  const discovered: SourceToolInfo[] = [...names].map(([name, tool]) => {
    const definition = byOwnName.get(tool);
    if (!definition) throw new Error(`exposedToolNames named ${tool}, which the server did not offer`);
    return {
      name,
      tool,
      description: redact(definition.description ?? definition.title ?? tool).slice(0, 1_024),
      access: accessOf(definition, request.access),
    };
  });

  const record: ToolSourceRecord = {
    schemaVersion: 1,
    tenantId,
    name: request.name,
    url: request.url,
    headerNames: Object.keys(headers),
    ...(Object.keys(headers).length
      ? { sealedHeaders: await services.secrets.seal(JSON.stringify(headers), headerContext(tenantId, request.name)) }
      : {}),
    ...(request.tools ? { tools: request.tools } : {}),
    ...(request.access ? { access: request.access } : {}),
    discovered,
    createdAt: new Date().toISOString(),
  };
  if (!(await services.toolSources.create(record)))
    throw new ConflictError(`There is a tool source named ${request.name} already; delete it first.`);
  services.tools.invalidate?.(tenantId);
  return toolSourceView(record);
}

export async function deleteToolSource(services: Pick<Ports, "toolSources" | "tools">, tenantId: string, name: string): Promise<void> {
  if (!(await services.toolSources.delete(tenantId, name))) throw new NotFoundError(`No tool source named ${name}.`);
  services.tools.invalidate?.(tenantId);
}

/** The SSRF guard, with answers that speak of tool sources: a forbidden target is 422. */
async function checkUrl(url: string, policy: McpNetworkPolicy): Promise<void> {
  try {
    await assertDeliverableUrl(url, policy);
  } catch (error) {
    throw error instanceof WebhookUrlError ? toolSourceUrlError(error) : error;
  }
}
