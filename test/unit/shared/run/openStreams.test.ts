import { afterEach, describe, expect, it, vi } from "vitest";
import { assertLowersOnly } from "../../../../shared/contracts/tenantCeilings.js";
import { handleA2A } from "../../../../shared/protocols/a2aServer.js";
import type { ProtocolContext } from "../../../../shared/protocols/context.js";
import { handleMcp } from "../../../../shared/protocols/mcp.js";
import { LEASE_MS, openStream, TooManyStreamsError } from "../../../../shared/run/openStreams.js";
import { withRun } from "../../../support/memoryRun.js";

/** The cap on a tenant's open streams over in-memory ports: the use case, then each JSON-RPC door that follows a run. */

const CAP = { limits: { maxOpenStreamsPerTenant: 2 } };

describe("openStream", () => {
  it("takes places up to the cap, then refuses with 429 too_many_streams and Retry-After; a release frees one; other tenants are apart", async () => {
    const { ports, fakes } = await withRun({}, { settings: CAP });
    const first = await openStream(ports, "tenant_a");
    await openStream(ports, "tenant_a");
    const refused = await openStream(ports, "tenant_a").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TooManyStreamsError);
    expect(refused).toMatchObject({ statusCode: 429, code: "too_many_streams", retryAfterSeconds: 5, details: { limit: 2 } });
    expect(await fakes.tenantLeases.held("stream", "tenant_b")).toBe(0);
    await openStream(ports, "tenant_b");

    await first.release();
    await first.release();
    expect(await fakes.tenantLeases.held("stream", "tenant_a")).toBe(1);
    await openStream(ports, "tenant_a");
    await expect(openStream(ports, "tenant_a")).rejects.toThrow(TooManyStreamsError);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("a live stream's lease is renewed, so it still counts after a lease's time; once released it is renewed no more", async () => {
    vi.useFakeTimers();
    const { ports, fakes } = await withRun({}, { settings: CAP });
    const renew = vi.spyOn(fakes.tenantLeases, "renew");
    const stream = await openStream(ports, "tenant_a");
    await vi.advanceTimersByTimeAsync(LEASE_MS * 3);
    expect(await fakes.tenantLeases.held("stream", "tenant_a")).toBe(1);
    // Every 20 s: a lease lapses only after two renewals in a row failed.
    expect(renew).toHaveBeenCalledTimes(9);
    await stream.release();
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    expect(renew).toHaveBeenCalledTimes(9);
    expect(await fakes.tenantLeases.held("stream", "tenant_a")).toBe(0);
  });

  it("a tenant's maxOpenStreams lowers its cap; one over the deployment's is refused (400)", async () => {
    const { ports } = await withRun({}, { settings: CAP });
    await ports.tenantSettings.put("tenant_a", { maxOpenStreams: 1 });
    await openStream(ports, "tenant_a");
    await expect(openStream(ports, "tenant_a")).rejects.toMatchObject({ code: "too_many_streams", details: { limit: 1 } });
    const ceilings = { maxSandboxes: 4, maxOpenStreams: CAP.limits.maxOpenStreamsPerTenant };
    expect(() => assertLowersOnly({ maxOpenStreams: 3 }, ceilings)).toThrow(/lower this deployment's cap on open streams, 2/);
    expect(() => assertLowersOnly({ maxOpenStreams: 2 }, ceilings)).not.toThrow();
  });
});

/** The JSON-RPC doors, as the run's tenant, with the tenant's places all taken. */
async function fullTenant() {
  const fixture = await withRun({ status: "running" }, { settings: CAP });
  const { ports, run } = fixture;
  const held = [await openStream(ports, run.tenantId), await openStream(ports, run.tenantId)];
  const context: ProtocolContext = {
    services: ports,
    tenantId: run.tenantId,
    links: { api: "http://api.test", stream: "http://stream.test", console: false },
    streaming: true,
    waitMs: 0,
    version: "test",
  };
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    new Request(`http://stream.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const a2a = (method: string, params: Record<string, unknown>) =>
    handleA2A(post("/a2a", { jsonrpc: "2.0", id: 7, method, params }, { "a2a-version": "1.0" }), context);
  const mcp = (name: string, args: Record<string, unknown>) =>
    handleMcp(
      post(
        "/mcp",
        { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } },
        { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      ),
      context,
    );
  return { ...fixture, held, a2a, mcp };
}

const message = { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "Say hello." }] } };

describe("the JSON-RPC doors at the cap", () => {
  it.each([
    ["SendStreamingMessage", () => message],
    ["SendMessage", () => message],
    ["SubscribeToTask", (runId: string) => ({ id: runId })],
  ])("A2A %s: HTTP 429 with Retry-After and the JSON-RPC error naming the limit; no run is started", async (method, params) => {
    const { a2a, run, fakes } = await fullTenant();
    const response = await a2a(method, params(run.runId));
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("5");
    const body = (await response.json()) as { id: number; error: { code: number; message: string; data: unknown } };
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32004);
    expect(body.error.message).toMatch(/2 streams open/);
    expect(JSON.stringify(body.error.data)).toContain("too_many_streams");
    expect(fakes.executions.calls.filter((c) => c.action === "start")).toHaveLength(1);
  });

  it("A2A: a place is given back when the call ends, also when it is refused for another reason", async () => {
    const { a2a, held, fakes, run } = await fullTenant();
    await held[0].release();
    const refused = await a2a("SendStreamingMessage", { message: { messageId: "m1", role: "ROLE_USER", parts: [] } });
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/no parts/);
    expect(await fakes.tenantLeases.held("stream", run.tenantId)).toBe(1);
    const sent = await a2a("SendMessage", message);
    expect(sent.status).toBe(200);
    expect(await fakes.tenantLeases.held("stream", run.tenantId)).toBe(1);
  });

  it.each([
    ["run_task", () => ({ input: "Say hello." })],
    ["get_run", (runId: string) => ({ runId })],
  ])("MCP %s that waits: the refusal as a tool error naming the limit (as over_budget is); no run is started", async (tool, args) => {
    const { mcp, run, fakes, held } = await fullTenant();
    const response = await mcp(tool, args(run.runId));
    const text = await response.text();
    const result = JSON.parse(text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1)) as {
      result: { isError: boolean; structuredContent: { error: unknown } };
    };
    expect(result.result.isError).toBe(true);
    expect(result.result.structuredContent.error).toMatchObject({ status: 429, code: "too_many_streams", details: { limit: 2 } });
    expect(fakes.executions.calls.filter((c) => c.action === "start")).toHaveLength(1);
    await held[0].release();
    const answered = await mcp(tool, args(run.runId));
    expect(await answered.text()).not.toContain("too_many_streams");
    expect(await fakes.tenantLeases.held("stream", run.tenantId)).toBe(1);
  });
});
