import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpHttpServer, serveMcpOverHttp } from "../../infra/local/mcpHttp.js";
import { type OfflineModel, startOfflineModel } from "../../infra/offlineModel/server.js";
import type { FileList, RunList, ToolList } from "../../shared/contracts/responses.js";
import { Client, type ErrorBody } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type ModelProxy, type ProxiedRequest, startModelProxy } from "../support/modelProxy.js";
import { png } from "../support/png.js";

/**
 * The prompt audit: the walk-throughs (docs/walkthroughs.md) run through the whole local stack, with every model
 * request recorded on its way to the offline model. Each role's request is checked against what
 * the run offers: the planner and router are told every tool their agents have (built-in, work
 * and MCP tools, with read or write) and the run's files (name, type, size, origin); executors
 * and ReAct agents are offered exactly the catalog and told the files; the summarizer gets every
 * task's result whole and the files. The offline model acts only on what these requests name, so
 * the runs succeeding shows the prompts carried what was needed. Operators' instructions reach
 * every role's prompt, and a saved agent's runs are offered only its tools, through REST, MCP and A2A.
 */
let model: OfflineModel;
let proxy: ModelProxy;
let mcp: McpHttpServer;
let stack: RunningStack;
let client: Client;
let catalog: { name: string; access: string; asksUser: boolean }[];

/** What the MCP tool `screenshot` returns. */
const SCREENSHOT = png(48, 24);
const SALES = "region,month,amount\nnorth,jan,120.5\nsouth,jan,80\nnorth,feb,99.5\nsouth,feb,100\neast,feb,50\n";

function everything(): McpServer {
  const server = new McpServer({ name: "everything", version: "1.0.0" });
  server.registerTool(
    "add",
    { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
    async ({ a, b }) => ({
      content: [{ type: "text", text: String(a + b) }],
    }),
  );
  server.registerTool(
    "echo",
    { description: "Says the message back.", inputSchema: { message: z.string() }, annotations: { readOnlyHint: true } },
    async ({ message }) => ({
      content: [{ type: "text", text: `Echo: ${message}` }],
    }),
  );
  server.registerTool(
    "screenshot",
    { description: "Takes a screenshot of the dashboard.", inputSchema: {}, annotations: { readOnlyHint: true } },
    async () => ({
      content: [
        { type: "text", text: "The dashboard, as it looks now." },
        { type: "image", data: SCREENSHOT.toString("base64"), mimeType: "image/png" },
      ],
    }),
  );
  server.registerTool(
    "save_note",
    { description: "Saves a note on the server.", inputSchema: { text: z.string().min(1) } },
    async ({ text }) => ({ content: [{ type: "text", text: `Saved: ${text}` }] }),
  );
  return server;
}

beforeAll(async () => {
  model = await startOfflineModel({ latencyMs: 20 });
  proxy = await startModelProxy(model.url);
  mcp = await serveMcpOverHttp(everything, { port: 0 });
  stack = await startStack(
    {
      OPENAI_BASE_URL: proxy.url,
      STEPWISE_MODEL: "stepwise-offline",
      SANDBOX_TIMEOUT_MS: "20000",
      // Executors' model sees images; the ReAct agent's does not.
      STEPWISE_ROLE_SETTINGS: '{"executor": {"vision": true}}',
      IMAGE_MAX_BYTES: "20000",
    },
    [],
  );
  client = new Client(stack.url, stack.apiKey);
  expect((await client.request("POST", "/v1/tool-sources", { name: "everything", url: mcp.url })).status).toBe(201);
  catalog = (await client.request<ToolList>("GET", "/v1/tools")).body.tools;
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.all([mcp?.close(), proxy?.close(), model?.close()]);
});

const systemOf = (request: ProxiedRequest): string =>
  request.body.messages.find((m: { role: string }) => m.role === "system")?.content ?? "";
const lastUser = (request: ProxiedRequest): string =>
  request.body.messages.findLast((m: { role: string }) => m.role === "user")?.content ?? "";
const offered = (request: ProxiedRequest): string[] =>
  (request.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name).sort();

/** Runs one walk-through and returns the model requests it made, by role. */
async function walk(body: Record<string, unknown>, whilePending?: (runId: string) => Promise<void>) {
  const from = proxy.requests.length;
  const { runId } = await client.submit(body);
  if (whilePending) await whilePending(runId);
  const { run, events } = await client.waitForEnd(runId, 200_000);
  expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
  const requests = proxy.requests.slice(from);
  const byRole = (role: string) => requests.filter((r) => r.role === role);
  expect(requests.every((r) => r.role !== "unknown")).toBe(true);
  const files = (await client.request<FileList>("GET", `/v1/runs/${runId}/files`)).body.files;
  return { run, events, byRole, files };
}

/** The planner and router are told every tool of the agents they direct (ask_user included), with its access. */
function expectTeamListed(system: string) {
  expect(catalog.length).toBeGreaterThan(6);
  for (const tool of catalog) expect(system).toContain(`- ${tool.name} (${tool.access}): `);
}

describe("every model request tells the truth about tools and files", { timeout: 300_000 }, () => {
  it("plan_solve: the planner sees its executors' tools (MCP ones included), executors get the catalog, the summarizer every result", async () => {
    const { byRole, run, events } = await walk({ input: "Compute 17*23 and (120/8)+2^5, then write a short report", mode: "plan_solve" });
    // The answer streams as the summarizer's agent.delta events before the run ends.
    const summary = events.filter((e) => e.type === "agent.delta" && (e.data as { agent: string }).agent === "summarizer");
    expect(summary.length).toBeGreaterThan(0);
    expect(summary.map((e) => (e.data as { text: string }).text).join("")).toBe(run.result);
    expect(summary.at(-1)!.seq).toBeLessThan(events.find((e) => e.type === "run.succeeded")!.seq);
    const [planner, executor, summarizer] = [byRole("planner"), byRole("executor"), byRole("summarizer")];
    expect(planner.length).toBeGreaterThan(0);
    for (const request of planner) {
      expectTeamListed(systemOf(request));
      // The same tools every time (ask_user only asks before there is a plan): a prompt cache keeps them.
      expect(offered(request)).toEqual(["ask_user", "planning"]);
    }
    for (const request of executor) expect(offered(request)).toEqual(catalog.map((t) => t.name).sort());
    for (const request of executor) for (const tool of catalog) expect(systemOf(request)).toContain(`- ${tool.name} (${tool.access})`);
    expect(summarizer).toHaveLength(1);
    const tasks = (await client.run(run.runId)).tasks as { result: string }[];
    for (const task of tasks) expect(lastUser(summarizer[0]!)).toContain(task.result);
    expect(systemOf(summarizer[0]!)).toMatch(/- report\.md \(text\/markdown, \d+ bytes, /);
  });

  it("the CSV walk-through: the planner is told the uploaded file's name, type, size and origin; the answer carries the figures", async () => {
    const upload = await fetch(`${stack.url}/v1/files?name=sales.csv`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "text/csv" },
      body: SALES,
    });
    const { fileId } = (await upload.json()) as { fileId: string };
    const { byRole, run } = await walk({
      input: "Analyse the attached CSV and write an HTML report of the totals",
      mode: "plan_solve",
      files: [fileId],
    });
    const fileLine = `- sales.csv (text/csv, ${SALES.length} bytes, Uploaded)`;
    for (const role of ["planner", "executor", "summarizer"]) {
      expect(byRole(role).length, role).toBeGreaterThan(0);
      for (const request of byRole(role)) expect(systemOf(request), role).toContain(fileLine);
    }
    // The planner planned run_code because its prompt offered it, over the file its prompt named.
    expect(run.plan!.steps[0].tasks[0]).toBe("Analyse sales.csv in Python with run_code");
    // The answer quotes the figures the analysis printed, not "Analysis done:" alone.
    expect(run.result).toContain("| amount | 450.00 | 90.00 | 50.00 | 120.50 |");
    expect(run.result).toMatch(/\| north \| 220\.00 \|/);
  });

  it("auto: the router is told the team's tools and its direct answer streams as agent.delta before run.succeeded", async () => {
    const { byRole, events, run } = await walk({ input: "Hello, who are you?", mode: "auto" });
    const [router] = byRole("router");
    expectTeamListed(systemOf(router!));
    const deltas = events.filter((e) => e.type === "agent.delta" && (e.data as { agent: string }).agent === "router");
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.map((e) => (e.data as { text: string }).text).join("")).toBe(run.result);
    expect(events.findIndex((e) => e.type === "agent.delta")).toBeLessThan(events.findIndex((e) => e.type === "run.succeeded"));
    // The answer names the tools the router was told of, MCP tools included.
    expect(run.result).toContain("everything__add");
  });

  it("react: the agent is offered the catalog with ask_user and asks before it acts", async () => {
    const { byRole } = await walk({ input: "Ask me which city to use, then compute 2+2", mode: "react" }, async (runId) => {
      const { pending } = await client.waitForPending(runId, 1, 60_000);
      expect((await client.decide(runId, pending[0].interruptId, { decision: "answer", message: "Paris" })).status).toBe(202);
    });
    for (const request of byRole("react")) expect(offered(request)).toEqual(catalog.map((t) => t.name).sort());
  });

  it("MCP tools named in the request are planned because the planner's prompt lists them", async () => {
    const { run, byRole } = await walk({
      input: 'use everything__add {"a": 2, "b": 3} and use everything__echo {"message": "hi"}',
      mode: "plan_solve",
    });
    expect(systemOf(byRole("planner")[0]!)).toContain("- everything__add (read): Adds two numbers.");
    expect(run.plan!.steps[0].tasks).toEqual(['use everything__add {"a": 2, "b": 3}', 'use everything__echo {"message": "hi"}']);
    expect(run.result).toContain("Echo: hi");
  });
});

describe("operators' instructions and saved agents", { timeout: 300_000 }, () => {
  const HOUSE = "House rule: answer in French and cite every figure.";

  /** The instructions sit after the tool list (the part every run shares) and before the date and files (what changes). */
  function expectInstructionsPlaced(system: string, text: string) {
    const at = system.indexOf(text);
    expect(at, system).toBeGreaterThan(system.lastIndexOf("- ask_user ("));
    expect(at).toBeLessThan(system.indexOf("Today is"));
  }

  it("the tenant's and a run's instructions reach every role's prompt after the tools; over the limit is a 400 that changes nothing", async () => {
    expect((await client.request("PUT", "/v1/settings", { instructions: HOUSE })).status).toBe(200);
    try {
      const tooLong = await client.request<ErrorBody>("PUT", "/v1/settings", { instructions: "x".repeat(4_001), multitask: "enqueue" });
      expect(tooLong.status).toBe(400);
      expect(tooLong.body.error.message).toContain("at most 4000 characters");
      expect((await client.request("GET", "/v1/settings")).body).toEqual({ multitask: "reject", instructions: HOUSE });
      const runRule = "Run rule: keep it short.";
      const planned = await walk({
        input: "Compute 17*23 and (120/8)+2^5, then write a short report",
        mode: "auto",
        instructions: runRule,
      });
      expect(planned.run.instructions).toBe(`${HOUSE}\n\n${runRule}`);
      // The offline model honours what it can show: the answer language asked for labels the answer.
      expect(planned.run.result).toMatch(/^Réponse :\n/);
      for (const role of ["router", "planner", "executor", "summarizer"]) {
        expect(planned.byRole(role).length, role).toBeGreaterThan(0);
        for (const request of planned.byRole(role)) {
          expectInstructionsPlaced(systemOf(request), `${HOUSE}\n\n${runRule}`);
        }
      }
      const reacted = await walk({ input: "Compute 2+2", mode: "react" });
      for (const request of reacted.byRole("react")) {
        expectInstructionsPlaced(systemOf(request), HOUSE);
        expect(systemOf(request)).not.toContain(runRule);
      }
      const refused = await client.request<ErrorBody>("POST", "/v1/runs", { input: "Compute 2+2", instructions: "y".repeat(4_001) });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toContain("instructions");
    } finally {
      await client.request("PUT", "/v1/settings", { instructions: "" });
    }
    expect((await client.request("GET", "/v1/settings")).body).toEqual({ multitask: "reject" });
  });

  const CALC_TOOLS = ["ask_user", "calculator", "everything__add"];

  it("a saved agent's runs through REST, MCP and A2A are offered only its allow-listed tools", async () => {
    const saved = await client.request("POST", "/v1/agents/calc", {
      description: "Does arithmetic.",
      mode: "react",
      tools: CALC_TOOLS,
      instructions: "Show the working.",
    });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({ name: "calc", version: 1 });

    // REST
    const rest = await walk({ input: "Compute 6*7", agent: "calc" });
    expect(rest.run).toMatchObject({ requestedMode: "react", agent: { name: "calc", version: 1, tools: CALC_TOOLS } });
    expect(rest.byRole("react").length).toBeGreaterThan(0);
    for (const request of rest.byRole("react")) {
      expect(offered(request)).toEqual(CALC_TOOLS);
      expectInstructionsPlaced(systemOf(request), "Show the working.");
    }

    // MCP: run_task lists the presets and takes one.
    const mcpClient = new McpClient({ name: "audit", version: "1.0.0" });
    await mcpClient.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${stack.apiKey}` } },
      }),
    );
    try {
      const runTask = (await mcpClient.listTools()).tools.find((t) => t.name === "run_task")!;
      expect(runTask.description).toContain("- calc (version 1; react; tools: ask_user, calculator, everything__add): Does arithmetic.");
      const from = proxy.requests.length;
      const result = await mcpClient.callTool({ name: "run_task", arguments: { input: "Compute 5*5", agent: "calc" } }, undefined, {
        timeout: 120_000,
      });
      expect(JSON.stringify(result.content)).toContain("25");
      const mcpRequests = proxy.requests.slice(from).filter((r) => r.role === "react");
      expect(mcpRequests.length).toBeGreaterThan(0);
      for (const request of mcpRequests) expect(offered(request)).toEqual(CALC_TOOLS);
      const unknown = await mcpClient.callTool({ name: "run_task", arguments: { input: "Compute 1+1", agent: "nobody" } });
      expect(unknown.isError).toBe(true);
      expect(JSON.stringify(unknown.content)).toContain("No saved agent named nobody");
    } finally {
      await mcpClient.close();
    }

    // A2A: the extended card lists it as a skill, and a message names it.
    const rpc = async (body: unknown) =>
      (await (
        await fetch(`${stack.url}/a2a`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${stack.apiKey}`, "a2a-version": "1.0" },
          body: JSON.stringify(body),
        })
      ).json()) as any;
    const card = await rpc({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard", params: {} });
    expect(card.result.skills.map((s: { id: string }) => s.id)).toEqual(["auto", "react", "plan_solve", "calc"]);
    const from = proxy.requests.length;
    const sent = await rpc({
      jsonrpc: "2.0",
      id: 2,
      method: "SendMessage",
      params: { message: { messageId: "m-calc", role: "ROLE_USER", parts: [{ text: "Compute 3*3" }] }, metadata: { skill: "calc" } },
    });
    const task = sent.result.task ?? sent.result;
    const { run } = await client.waitForEnd(task.id, 120_000);
    expect(run).toMatchObject({ status: "succeeded", agent: { name: "calc", version: 1 } });
    const a2aRequests = proxy.requests.slice(from).filter((r) => r.role === "react");
    expect(a2aRequests.length).toBeGreaterThan(0);
    for (const request of a2aRequests) expect(offered(request)).toEqual(CALC_TOOLS);
  });

  it("a run of version 1 keeps its tools when version 2 is saved and the agent deleted while it waits", async () => {
    expect((await client.request("POST", "/v1/agents/asker", { mode: "react", tools: CALC_TOOLS })).status).toBe(201);
    const { byRole, run } = await walk({ input: "Ask me which city to use, then compute 2+2", agent: "asker" }, async (runId) => {
      const { pending } = await client.waitForPending(runId, 1, 60_000);
      const second = await client.request<{ version: number }>("POST", "/v1/agents/asker", { mode: "plan_solve", tools: ["text_stats"] });
      expect(second.body.version).toBe(2);
      expect((await client.request<{ tools: string[] }>("GET", "/v1/agents/asker@1")).body.tools).toEqual(CALC_TOOLS);
      expect((await client.request("DELETE", "/v1/agents/asker")).status).toBe(204);
      expect((await client.decide(runId, pending[0].interruptId, { decision: "answer", message: "Paris" })).status).toBe(202);
    });
    expect(run).toMatchObject({ mode: "react", agent: { name: "asker", version: 1, tools: CALC_TOOLS } });
    for (const request of byRole("react")) expect(offered(request)).toEqual(CALC_TOOLS);
    expect((await client.request("GET", "/v1/agents/asker")).status).toBe(404);
  });

  it.each([
    ["an unknown saved agent", "POST", "/v1/runs", { input: "Hi", agent: "nobody" }, "No saved agent named nobody"],
    ["an unknown version", "POST", "/v1/runs", { input: "Hi", agent: "calc@9" }, "Saved agent calc has no version 9"],
    ["a tool the tenant lacks", "POST", "/v1/agents/rogue", { tools: ["calculator", "launch_rockets"] }, "launch_rockets"],
    ["instructions over the limit", "POST", "/v1/agents/rogue", { instructions: "z".repeat(4_001) }, "at most 4000 characters"],
  ])("%s is a 400 naming the problem, and nothing changes", async (_, method, path, body, message) => {
    const [runsBefore, agentsBefore] = await Promise.all([client.request<RunList>("GET", "/v1/runs"), client.request("GET", "/v1/agents")]);
    const answer = await client.request<ErrorBody>(method, path, body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toContain(message);
    const [runsAfter, agentsAfter] = await Promise.all([client.request<RunList>("GET", "/v1/runs"), client.request("GET", "/v1/agents")]);
    expect(runsAfter.body.runs.map((r) => r.runId)).toEqual(runsBefore.body.runs.map((r) => r.runId));
    expect(agentsAfter.body).toEqual(agentsBefore.body);
  });
});

describe("images reach a model marked as seeing them, and only that one", { timeout: 300_000 }, () => {
  const uploadImage = async (name: string, bytes: Buffer) => {
    const res = await fetch(`${stack.url}/v1/files?name=${name}`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "image/png" },
      body: bytes,
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { fileId: string }).fileId;
  };
  const userParts = (request: ProxiedRequest) => request.body.messages.findLast((m: { role: string }) => m.role === "user")?.content;

  it("an uploaded PNG reaches the vision-marked executor as an image_url part and is described; the ReAct agent is told it is a file", async () => {
    const image = png(64, 32);
    const seen = await walk({ input: "Describe the attached image", mode: "plan_solve", files: [await uploadImage("shot.png", image)] });
    const executor = seen.byRole("executor");
    expect(executor.length).toBeGreaterThan(0);
    expect(userParts(executor[0]!)).toEqual([
      { type: "text", text: expect.stringContaining("Your task: Describe the image shot.png") },
      { type: "image_url", image_url: { url: `data:image/png;base64,${image.toString("base64")}` } },
    ]);
    expect(systemOf(executor[0]!)).toContain("shown to you with the request: shot.png.");
    // The planner and the summarizer are not marked: text only.
    for (const request of [...seen.byRole("planner"), ...seen.byRole("summarizer")])
      expect(JSON.stringify(request.body)).not.toContain("image_url");
    expect(seen.run.result).toContain(`I see shot.png: image/png, 64×32 pixels, ${image.length} bytes.`);

    const unseen = await walk({ input: "Describe the attached image", mode: "react", files: [await uploadImage("shot.png", image)] });
    const react = unseen.byRole("react");
    expect(react.length).toBeGreaterThan(0);
    for (const request of react) {
      expect(JSON.stringify(request.body)).not.toContain("image_url");
      expect(systemOf(request)).toContain(`- shot.png (image/png, ${image.length} bytes, Uploaded)`);
      expect(systemOf(request)).toContain("not shown to you (your model does not see images): shot.png.");
    }
    expect(unseen.run.result).toContain("I cannot see images: shot.png is a file");
  });

  it("an image an MCP tool returns is shown to the vision-marked executor after the tool's result and described; the ReAct agent gets the text only", async () => {
    const seen = await walk({ input: "use everything__screenshot {}", mode: "plan_solve" });
    const [first, second] = seen.byRole("executor");
    expect(JSON.stringify(first!.body)).not.toContain("image_url");
    const saved = seen.files.find((f) => f.contentType === "image/png")!;
    expect(saved).toMatchObject({ name: expect.stringMatching(/^everything__screenshot-[0-9a-f]{8}-1\.png$/), bytes: SCREENSHOT.length });
    const messages = second!.body.messages as { role: string; content: unknown }[];
    expect(messages.at(-2)).toMatchObject({ role: "tool", content: expect.stringContaining(`[Image saved as file ${saved.name}`) });
    expect(messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: `Images the tool calls above returned, shown to you: ${saved.name}.` },
        { type: "image_url", image_url: { url: `data:image/png;base64,${SCREENSHOT.toString("base64")}` } },
      ],
    });
    expect(seen.run.result).toContain(`I see ${saved.name}: image/png, 48×24 pixels, ${SCREENSHOT.length} bytes.`);

    const unseen = await walk({ input: "use everything__screenshot {}", mode: "react" });
    for (const request of unseen.byRole("react")) expect(JSON.stringify(request.body)).not.toContain("image_url");
    expect(unseen.run.result).not.toContain("I see");
  });

  it("an image over IMAGE_MAX_BYTES is refused (400) naming it, and no run is made", async () => {
    const big = png(8, 8, 30_000);
    const fileId = await uploadImage("big.png", big);
    const newest = async () => (await client.request<RunList>("GET", "/v1/runs")).body.runs[0]?.runId;
    const before = await newest();
    const res = await client.request<ErrorBody>("POST", "/v1/runs", {
      input: "Describe the attached image",
      mode: "react",
      files: [fileId],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("image_too_large");
    expect(res.body.error.message).toContain(`The image big.png has ${big.length} bytes`);
    expect(await newest()).toBe(before);
  });
});
