import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningStack, startStack } from "../support/localStack.js";

/**
 * `/mcp` on the API function, as the HTTP API's URL serves it on AWS (STEPWISE_LOCAL_MCP=api routes
 * it there, through the same API Gateway event and handler as every API request): replies are
 * buffered JSON, and a call whose run outlasts the API's time limit answers "still running" with the
 * run id, after which get_run follows it to its answer. The API function's time limit is 7 s here
 * (STEPWISE_LOCAL_API_TIMEOUT_SECONDS), so a buffered call follows its run for at most 2 s (5 s are
 * kept to answer); the offline model takes 3 s a call, so the run (two model calls) outlasts a
 * buffered call by 4 s or more whatever the machine's speed (a slower machine only makes it longer).
 */

let stack: RunningStack;
let client: McpClient | undefined;

beforeAll(async () => {
  stack = await startStack({ STEPWISE_LOCAL_MCP: "api", STEPWISE_LOCAL_API_TIMEOUT_SECONDS: "7", OFFLINE_MODEL_LATENCY_MS: "3000" });
}, 300_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await stack?.stop();
});

const textOf = (result: CallToolResult) =>
  result.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");

it("answers in JSON, not a stream: the API function's buffered reply", async () => {
  const res = await fetch(`${stack.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "probe", version: "1" } },
    }),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "stepwise" } } });
});

it("a run longer than the API's limit: run_task answers 'still running' with the run id, get_run then follows it to its answer", async () => {
  client = new McpClient({ name: "stepwise-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${stack.apiKey}` } },
    }),
  );
  const first = (await client.callTool({ name: "run_task", arguments: { input: "Compute 17*23", mode: "react" } }, undefined, {
    timeout: 120_000,
  })) as CallToolResult;
  const { runId, status } = first.structuredContent as { runId: string; status: string };
  expect(["queued", "running"]).toContain(status);
  expect(first.isError).toBe(false);
  expect(textOf(first)).toContain("call get_run with its runId");

  // Each get_run waits at most one buffered call's time (2 s); a slow machine may need many.
  let done: CallToolResult | undefined;
  for (let call = 0; call < 100 && !done; call++) {
    const result = (await client.callTool({ name: "get_run", arguments: { runId } }, undefined, { timeout: 120_000 })) as CallToolResult;
    if ((result.structuredContent as { status: string }).status !== "running") done = result;
  }
  expect(done?.structuredContent).toMatchObject({ runId, status: "succeeded" });
  expect(textOf(done!)).toContain("391");
}, 400_000);
