import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpHttpServer, serveMcpOverHttp } from "../../infra/local/mcpHttp.js";
import { type OfflineModel, startOfflineModel } from "../../infra/offlineModel/server.js";
import { Client } from "../support/client.js";
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
 * the runs succeeding shows the prompts carried what was needed.
 */
let model: OfflineModel;
let proxy: ModelProxy;
let mcp: McpHttpServer;
let stack: RunningStack;
let client: Client;
let catalog: { name: string; access: string; asksUser: boolean }[];

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
  catalog = (await client.request("GET", "/v1/tools")).body.tools;
}, 120_000);

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
  const files = (await client.request("GET", `/v1/runs/${runId}/files`)).body.files as {
    name: string;
    contentType: string;
    bytes: number;
  }[];
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
    expect(run.plan.steps[0].tasks[0]).toBe("Analyse sales.csv in Python with run_code");
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
    expect(run.plan.steps[0].tasks).toEqual(['use everything__add {"a": 2, "b": 3}', 'use everything__echo {"message": "hi"}']);
    expect(run.result).toContain("Echo: hi");
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

  it("an image over IMAGE_MAX_BYTES is refused (400) naming it, and no run is made", async () => {
    const big = png(8, 8, 30_000);
    const fileId = await uploadImage("big.png", big);
    const newest = async () => (await client.request("GET", "/v1/runs")).body.runs[0]?.runId;
    const before = await newest();
    const res = await client.request("POST", "/v1/runs", { input: "Describe the attached image", mode: "react", files: [fileId] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("image_too_large");
    expect(res.body.error.message).toContain(`The image big.png has ${big.length} bytes`);
    expect(await newest()).toBe(before);
  });
});
