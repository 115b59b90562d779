import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpHttpServer, serveMcpOverHttp } from "../../infra/local/mcpHttp.js";
import { type OfflineModel, startOfflineModel } from "../../infra/offlineModel/server.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import type { ToolList } from "../../shared/contracts/responses.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { roleOf } from "../support/modelProxy.js";
import { type StrictProvider, type StrictRequest, startStrictProvider } from "../support/strictProvider.js";

/**
 * Work larger than one request carries, end to end: the whole local stack and the offline model
 * behind a provider stand-in that refuses what OpenAI refuses (more than 128 tools among them).
 * A tenant with 140 MCP tools: no request carries more than 128, and a run that needs the 140th
 * finds it with find_tools and calls it.
 */

const TOOL_COUNT = 140;

/** 139 tools that do something else, and the 140th, the one a run needs. */
function bulkServer(): McpServer {
  const server = new McpServer({ name: "bulk", version: "1.0.0" });
  for (let i = 1; i < TOOL_COUNT; i++) {
    server.registerTool(
      `tool_${i}`,
      { description: `Returns entry ${i} of the inventory ledger.`, inputSchema: {}, annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: "text" as const, text: `ledger entry ${i}` }] }),
    );
  }
  server.registerTool(
    `tool_${TOOL_COUNT}`,
    {
      description: "Converts a temperature from Celsius to Fahrenheit.",
      inputSchema: { celsius: z.number() },
      annotations: { readOnlyHint: true },
    },
    async ({ celsius }) => ({ content: [{ type: "text" as const, text: `${celsius} °C is ${(celsius * 9) / 5 + 32} °F` }] }),
  );
  return server;
}

let model: OfflineModel;
let strict: StrictProvider;
let bulk: McpHttpServer;
let stack: RunningStack;
let client: Client;

beforeAll(async () => {
  model = await startOfflineModel({ latencyMs: 20 });
  strict = await startStrictProvider(model.url, { maxTools: 128 });
  bulk = await serveMcpOverHttp(bulkServer);
  stack = await startStack({ OPENAI_BASE_URL: strict.url, STEPWISE_MODEL: "stepwise-offline" }, []);
  client = new Client(stack.url, stack.apiKey);
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.all([bulk?.close(), strict?.close(), model?.close()]);
});

const ofType = <T extends RunEvent["type"]>(events: RunEvent[], type: T) =>
  events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
const offered = (request: StrictRequest): string[] =>
  (request.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
const systemOf = (request: StrictRequest): string =>
  request.body.messages.find((m: { role: string }) => m.role === "system")?.content ?? "";

describe("a tenant with 140 MCP tools", () => {
  beforeAll(async () => {
    expect((await client.request("POST", "/v1/tool-sources", { name: "bulk", url: bulk.url })).status).toBe(201);
    expect((await client.request<ToolList>("GET", "/v1/tools")).body.tools.length).toBeGreaterThan(TOOL_COUNT);
  });

  it.each(["react", "plan_solve"])(
    "%s: no request carries more than 128 tools; the run finds the 140th tool and calls it",
    async (mode) => {
      const first = strict.requests.length;
      const { runId } = await client.submit({ input: `Convert the temperature: use bulk__tool_${TOOL_COUNT} {"celsius": 100}`, mode });
      const { run, events } = await client.waitForEnd(runId, 90_000);
      expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
      const requests = strict.requests.slice(first);
      expect(strict.refusals()).toEqual([]);
      expect(Math.max(...requests.map((r) => offered(r).length))).toBeLessThanOrEqual(128);

      // Found by what it does, then called: the result is the tool's own.
      const called = ofType(events, "tool.called")
        .filter((e) => e.data.agent !== "planner")
        .map((e) => e.data.tool);
      expect(called).toEqual(["find_tools", `bulk__tool_${TOOL_COUNT}`]);
      expect(ofType(events, "tool.result").find((e) => e.data.tool !== "find_tools" && e.data.agent !== "planner")?.data).toMatchObject({
        tool: `bulk__tool_${TOOL_COUNT}`,
        ok: true,
        output: "100 °C is 212 °F",
      });
      expect(run.result).toContain("212 °F");

      // The agent's first request offers the built-ins and find_tools; the next one the tool it found too.
      const agent = requests.filter((r) => ["react", "executor"].includes(roleOf(r.body)));
      expect(offered(agent[0]!)).toContain("find_tools");
      expect(offered(agent[0]!)).not.toContain(`bulk__tool_${TOOL_COUNT}`);
      expect(offered(agent[1]!)).toContain(`bulk__tool_${TOOL_COUNT}`);
      expect(systemOf(agent[0]!)).toMatch(new RegExp(`from bulk, found with find_tools, ${TOOL_COUNT} tools: .*bulk__tool_${TOOL_COUNT}`));
      if (mode === "plan_solve") {
        // The planner still sees what the team can do: every tool, the rest summed up by name.
        const planner = requests.find((r) => roleOf(r.body) === "planner")!;
        expect(systemOf(planner)).toContain(`bulk__tool_${TOOL_COUNT}`);
      }
    },
  );
});
