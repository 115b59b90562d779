import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type McpHttpServer, serveMcpOverHttp } from "../../../../../infra/local/mcpHttp.js";
import type { EventBody } from "../../../../../shared/contracts/events.js";
import type { ToolSourceRecord } from "../../../../../shared/contracts/toolSources.js";
import type { SecretCipher } from "../../../../../shared/ports/secretCipher.js";
import type { ToolSources } from "../../../../../shared/ports/toolSources.js";
import type { EventLog } from "../../../../../shared/store/events.js";
import { testToolContext } from "../../../../../shared/testing/toolContext.js";
import { McpToolCatalog } from "../../../../../shared/tools/mcp/catalog.js";

/** The catalog over in-memory sources: built-ins plus live MCP tools, the 5 s cache, unavailable sources reported once per run. */

let server: McpHttpServer;
/** Whether a call of the slow tool was cancelled on the server. */
let slowCancelled = false;
beforeAll(async () => {
  server = await serveMcpOverHttp(() => {
    const mcp = new McpServer({ name: "t", version: "1.0.0" });
    mcp.registerTool("ping", { description: "Pong.", inputSchema: {}, annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: "text", text: "pong" }],
    }));
    // Answers after a minute, or when the call is cancelled.
    mcp.registerTool("slow", { description: "Slow.", inputSchema: {}, annotations: { readOnlyHint: true } }, (_args, extra) => {
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ content: [{ type: "text", text: "late" }] }), 60_000);
        extra.signal.addEventListener("abort", () => {
          slowCancelled = true;
          clearTimeout(timer);
          resolve({ content: [] });
        });
      });
    });
    return mcp;
  });
});
afterAll(() => server?.close());
afterEach(() => vi.useRealTimers());

function harness(sources: ToolSourceRecord[], callTimeoutMs = 5_000) {
  const listed: string[] = [];
  const marked = new Set<string>();
  const events: { runId: string; body: EventBody }[] = [];
  const store = {
    list: async (tenantId: string) => {
      listed.push(tenantId);
      return sources.filter((s) => s.tenantId === tenantId);
    },
    markUnavailableOnce: async (runId: string, source: string) => !marked.has(`${runId}/${source}`) && !!marked.add(`${runId}/${source}`),
  } as unknown as ToolSources;
  const catalog = new McpToolCatalog({
    sources: store,
    cipher: {} as SecretCipher,
    events: {
      append: async (runId: string, bodies: EventBody[]) => void events.push(...bodies.map((body) => ({ runId, body }))),
    } as unknown as EventLog,
    policy: { allowLoopback: true, allowHttp: true },
    callTimeoutMs,
    connectTimeoutMs: 5_000,
    cacheMs: 5_000,
  });
  return { catalog, listed, events };
}

const source = (name: string, url: string): ToolSourceRecord => ({
  schemaVersion: 1,
  tenantId: "acme",
  name,
  url,
  headerNames: [],
  discovered: [],
  createdAt: "",
});

describe("McpToolCatalog", () => {
  it("gives built-ins plus the tenant's MCP tools, and reuses the list for at most 5 s", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { catalog, listed } = harness([source("t", server.url)]);
    const acme = await catalog.registryFor("acme");
    expect(acme.names).toEqual(expect.arrayContaining(["calculator", "text_stats", "ask_user", "t__ping"]));
    expect((await catalog.registryFor("other")).names).not.toContain("t__ping");
    expect(listed).toEqual(["acme", "other"]);
    vi.advanceTimersByTime(4_900);
    await catalog.registryFor("acme");
    expect(listed).toEqual(["acme", "other"]);
    vi.advanceTimersByTime(200);
    await catalog.registryFor("acme");
    expect(listed).toEqual(["acme", "other", "acme"]);
    catalog.invalidate("acme");
    await catalog.registryFor("acme");
    expect(listed).toEqual(["acme", "other", "acme", "acme"]);
  });

  it("a call the server does not answer within the per-call timeout (MCP_CALL_TIMEOUT_MS) fails saying so, not fixable, and is cancelled on the server", async () => {
    const { catalog } = harness([source("t", server.url)], 300);
    const registry = await catalog.registryFor("acme");
    const outcome = await registry.execute({ id: "c1", name: "t__slow", arguments: "{}" }, testToolContext());
    expect(outcome).toMatchObject({ ok: false, output: expect.stringContaining("no answer within 300 ms (the per-call timeout)") });
    expect(outcome.fixable).toBeUndefined();
    await vi.waitFor(() => expect(slowCancelled).toBe(true), { timeout: 5_000 });
  });

  it("leaves out a source it cannot reach and tells each run once", async () => {
    const { catalog, events } = harness([source("t", server.url), source("gone", "http://127.0.0.1:9/mcp")]);
    const names = (await catalog.registryFor("acme", { runId: "run_1" })).names;
    expect(names).toContain("t__ping");
    expect(names.some((n) => n.startsWith("gone__"))).toBe(false);
    await catalog.registryFor("acme", { runId: "run_1" });
    await catalog.registryFor("acme", { runId: "run_2" });
    await catalog.registryFor("acme");
    expect(events.map((e) => [e.runId, e.body.type, (e.body.data as { source: string }).source])).toEqual([
      ["run_1", "tool_source.unavailable", "gone"],
      ["run_2", "tool_source.unavailable", "gone"],
    ]);
  });

  it("a source whose address the network policy refuses is left out with a reason about the tool source, not a webhook", async () => {
    const { catalog, events } = harness([source("inside", "http://10.0.0.1/mcp")]);
    expect((await catalog.registryFor("acme", { runId: "run_1" })).names.some((n) => n.startsWith("inside__"))).toBe(false);
    const reason = (events[0]?.body.data as { reason?: string } | undefined)?.reason;
    expect(reason).toContain("tool source URL points to 10.0.0.1");
    expect(reason).not.toMatch(/webhook/i);
  });
});
