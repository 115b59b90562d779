/**
 * MCP tool calls as agents make them: each call opens a session (initialize), calls tools/call and
 * closes it, so nothing stays open in a frozen Lambda. Prints what that costs against a loopback
 * server from the official SDK, beside tools/call on a session kept open, and a catalog load
 * (connect + tools/list), the work a tenant's tool list costs at most every 5 s per container.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serveMcpOverHttp } from "../../infra/local/mcpHttp.js";
import { callMcpTool, listMcpTools, withMcp } from "../../shared/tools/mcp/client.js";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function time(times: number, fn: () => Promise<unknown>): Promise<number[]> {
  await fn(); // warm-up
  const durations: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await fn();
    durations.push(performance.now() - started);
  }
  return durations;
}

export async function mcpCallFigures(times = 50): Promise<string[]> {
  const server = await serveMcpOverHttp(() => {
    const mcp = new McpServer({ name: "bench", version: "1.0.0" });
    mcp.registerTool("add", { description: "Adds.", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
    }));
    return mcp;
  });
  const endpoint = { url: server.url, headers: {} };
  const policy = { allowLoopback: true, allowHttp: true };
  const call = { timeoutMs: 10_000, idempotencyKey: "bench" };
  try {
    const perCall = await time(times, () =>
      withMcp(endpoint, policy, 10_000, (client) => callMcpTool(client, "add", { a: 1, b: 2 }, call)),
    );
    const listing = await time(times, () => withMcp(endpoint, policy, 10_000, (client) => listMcpTools(client, 10_000)));
    const reused = await withMcp(endpoint, policy, 10_000, (client) => time(times, () => callMcpTool(client, "add", { a: 1, b: 2 }, call)));
    const line = (what: string, xs: number[]) =>
      `${what.padEnd(44)} median ${median(xs).toFixed(1)} ms, min ${Math.min(...xs).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
    return [
      line("tools/call, a session per call (agents)", perCall),
      line("tools/call on one open session", reused),
      line("catalog load: connect + tools/list", listing),
    ];
  } finally {
    await server.close();
  }
}
