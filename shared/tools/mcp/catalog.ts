import type { ToolSourceRecord } from "../../contracts/toolSources.js";
import { errorMessage } from "../../errors.js";
import type { RunEvents } from "../../ports/events.js";
import type { SecretCipher } from "../../ports/secretCipher.js";
import type { ToolCatalog } from "../../ports/toolCatalog.js";
import type { Tool } from "../../ports/tools.js";
import type { ToolSourceStore } from "../../store/toolSources.js";
import { agentTools } from "../builtins.js";
import { ToolRegistry } from "../registry.js";
import { listMcpTools, type McpNetworkPolicy, withMcp } from "./client.js";
import { mcpTool } from "./mcpTool.js";
import { exposedToolNames } from "./names.js";
import { redactor } from "./redact.js";

export interface McpCatalogOptions {
  sources: ToolSourceStore;
  cipher: SecretCipher;
  events: Pick<RunEvents, "append">;
  policy: McpNetworkPolicy;
  callTimeoutMs: number;
  connectTimeoutMs: number;
  /** How long a tenant's tool list is reused (≤ 5 s). */
  cacheMs: number;
}

/** A source whose tools could not be listed, and why (secrets masked). */
export interface UnavailableSource {
  source: string;
  reason: string;
}

interface TenantTools {
  tools: Tool[];
  unavailable: UnavailableSource[];
}

/** The encryption context of a source's headers: they open only for this tenant and source. */
export const headerContext = (tenantId: string, source: string) => ({ purpose: "tool-source-headers", tenantId, source });

/**
 * The tools a tenant's agents get: the built-ins plus every tool of the tenant's MCP sources,
 * listed live and kept for at most `cacheMs` per warm container, so a source added or removed is
 * seen within seconds with no redeploy. A source that cannot be reached is left out, and the run
 * that needed it gets one `tool_source.unavailable` event saying why.
 */
export class McpToolCatalog implements ToolCatalog {
  private readonly cache = new Map<string, { until: number; tools: Promise<TenantTools> }>();
  /** Opened header values by sealed value: KMS is asked once per container and source version. */
  private readonly openedHeaders = new Map<string, Promise<Record<string, string>>>();

  constructor(private readonly options: McpCatalogOptions) {}

  async registryFor(tenantId: string, run?: { runId: string }): Promise<ToolRegistry> {
    const base = agentTools();
    const { tools, unavailable } = await this.tenantTools(tenantId);
    if (run) await this.reportUnavailable(run.runId, unavailable);
    const builtinNames = new Set(base.names);
    return new ToolRegistry([...base.tools, ...tools.filter((tool) => !builtinNames.has(tool.name))]);
  }

  /** Forget a tenant's list (after this container changed its sources). */
  invalidate(tenantId: string): void {
    this.cache.delete(tenantId);
  }

  private tenantTools(tenantId: string): Promise<TenantTools> {
    const cached = this.cache.get(tenantId);
    if (cached && cached.until > Date.now()) return cached.tools;
    const tools = this.load(tenantId);
    this.cache.set(tenantId, { until: Date.now() + this.options.cacheMs, tools });
    tools.catch(() => this.cache.delete(tenantId));
    return tools;
  }

  private async load(tenantId: string): Promise<TenantTools> {
    const sources = await this.options.sources.list(tenantId);
    const loaded = await Promise.all(sources.map((source) => this.loadSource(source)));
    return {
      tools: loaded.flatMap((l) => ("tools" in l ? l.tools : [])),
      unavailable: loaded.flatMap((l) => ("reason" in l ? [l] : [])),
    };
  }

  private async loadSource(source: ToolSourceRecord): Promise<{ tools: Tool[] } | UnavailableSource> {
    let redact = (text: string) => text;
    try {
      const headers = await this.headersOf(source);
      redact = redactor(Object.values(headers));
      const endpoint = { url: source.url, headers };
      const definitions = await withMcp(endpoint, this.options.policy, this.options.connectTimeoutMs, (client) =>
        listMcpTools(client, this.options.connectTimeoutMs),
      );
      const allowed = source.tools ? new Set(source.tools) : undefined;
      const offered = definitions.filter((d) => !allowed || allowed.has(d.name));
      const names = exposedToolNames(
        source.name,
        offered.map((d) => d.name),
      );
      const byOwnName = new Map(offered.map((d) => [d.name, d]));
      const runtime = {
        name: source.name,
        endpoint,
        policy: this.options.policy,
        callTimeoutMs: this.options.callTimeoutMs,
        access: source.access,
        redact,
      };
      const tools = await Promise.all(
        [...names].map(([exposed, own]) => {
          const definition = byOwnName.get(own);
          if (!definition) throw new Error(`exposedToolNames named ${own}, which ${source.name} does not list`);
          return mcpTool(definition, exposed, runtime);
        }),
      );
      return { tools };
    } catch (error) {
      return { source: source.name, reason: redact(errorMessage(error)).slice(0, 500) };
    }
  }

  private headersOf(source: ToolSourceRecord): Promise<Record<string, string>> {
    const sealed = source.sealedHeaders;
    if (!sealed) return Promise.resolve({});
    const cacheKey = `${sealed.encryptedKey}:${sealed.ciphertext}`;
    let opened = this.openedHeaders.get(cacheKey);
    if (!opened) {
      opened = this.options.cipher
        .open(sealed, headerContext(source.tenantId, source.name))
        .then((json) => JSON.parse(json) as Record<string, string>);
      opened.catch(() => this.openedHeaders.delete(cacheKey));
      this.openedHeaders.set(cacheKey, opened);
    }
    return opened;
  }

  private async reportUnavailable(runId: string, unavailable: UnavailableSource[]): Promise<void> {
    for (const { source, reason } of unavailable) {
      if (!(await this.options.sources.markUnavailableOnce(runId, source))) continue;
      await this.options.events.append(runId, [
        { type: "tool_source.unavailable", data: { source, reason: `Its tools are left out of this run: ${reason}` } },
      ]);
    }
  }
}
