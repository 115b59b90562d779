import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayRuns } from "../../infra/cli/replay.js";
import { type OfflineModel, startOfflineModel } from "../../infra/offlineModel/server.js";
import { StepwiseClient } from "../../shared/apiClient/client.js";
import type { JournalRecord } from "../../shared/ports/journal.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type ModelProxy, startModelProxy } from "../support/modelProxy.js";

/**
 * Replay and fork over HTTP against the whole local stack, the offline model behind a proxy that
 * counts every model request: a recorded plan_solve run (two calculations, then a report file)
 * replays with no model call, no file written, and the same events; a fork at a task's second
 * round with an edited tool result calls the model from there on and answers with the edit.
 */
const INPUT = "Compute 17*23 and (120/8)+2^5, then write a short report";

let model: OfflineModel;
let proxy: ModelProxy;
let stack: RunningStack;
let client: Client;
let parent: Awaited<ReturnType<Client["waitForEnd"]>>;

beforeAll(async () => {
  model = await startOfflineModel();
  proxy = await startModelProxy(model.url);
  stack = await startStack({ OPENAI_BASE_URL: proxy.url, STEPWISE_MODEL: "stepwise-offline" }, []);
  client = new Client(stack.url, stack.apiKey);
  const res = await client.request<{ runId: string }>("POST", "/v1/runs", { input: INPUT, mode: "plan_solve" });
  expect(res.status).toBe(202);
  parent = await client.waitForEnd(res.body.runId);
  expect(parent.run.status).toBe("succeeded");
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.all([proxy?.close(), model?.close()]);
});

describe("replay", () => {
  it("replays the recorded run with no model call and no file written, and finds its events identical", async () => {
    const calls = proxy.requests.length;
    const res = await client.request<{ runId: string; replayOf: string }>("POST", `/v1/runs/${parent.run.runId}/replay`);
    expect(res.status).toBe(202);
    expect(res.body.replayOf).toBe(parent.run.runId);
    const { run } = await client.waitForEnd(res.body.runId);
    expect(run.status).toBe("succeeded");
    expect(run.result).toBe(parent.run.result);
    expect(proxy.requests.length).toBe(calls);
    expect(run.files).toEqual([]);
    expect(run).toMatchObject({ replayOf: parent.run.runId, usage: { llmCalls: 0, toolCalls: 0 } });
    const comparison = await client.request<{ status: string; eventsCompared: number }>("GET", `/v1/runs/${run.runId}/replay`);
    expect(comparison.body).toMatchObject({ status: "identical", eventsCompared: parent.events.length });
  });

  it("with other instructions (a prompt change), stops at the planner's first model call and shows both sides", async () => {
    const calls = proxy.requests.length;
    const res = await client.request<{ runId: string }>("POST", `/v1/runs/${parent.run.runId}/replay`, {
      instructions: "Answer in French.",
    });
    const { run } = await client.waitForEnd(res.body.runId);
    expect(run.status).toBe("failed");
    expect(proxy.requests.length).toBe(calls);
    const comparison = await client.request<{ status: string; divergence: any }>("GET", `/v1/runs/${run.runId}/replay`);
    expect(comparison.body.status).toBe("diverged");
    expect(comparison.body.divergence).toMatchObject({
      scope: "plan#0",
      round: 0,
      kind: "llm",
      reason: "different_request",
      recorded: { fingerprint: expect.any(String) },
      replayed: { message: { index: 0, role: "system", text: expect.stringContaining("Answer in French.") } },
    });
  });

  it("the CLI replays a list of runs and exits 0 when each is identical", async () => {
    const out: string[] = [];
    const code = await replayRuns(new StepwiseClient(stack.url, stack.apiKey), [parent.run.runId], {
      stdout: { write: (text: string) => out.push(text) > 0 } as never,
    });
    expect(out.join("")).toContain("1 of 1 replayed identically.");
    expect(code).toBe(0);
  });

  it("refuses a run still in flight with 409 and starts nothing", async () => {
    const waiting = await client.request<{ runId: string }>("POST", "/v1/runs", {
      input: INPUT,
      mode: "plan_solve",
      approval: { plan: true },
    });
    await client.waitFor(waiting.body.runId, ["awaiting_input"]);
    const before = (await client.request<{ runs: unknown[] }>("GET", "/v1/runs?limit=100")).body.runs.length;
    const res = await client.request<{ error: { code: string; message: string } }>("POST", `/v1/runs/${waiting.body.runId}/replay`);
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain("only an ended run can be replayed");
    expect((await client.request<{ runs: unknown[] }>("GET", "/v1/runs?limit=100")).body.runs.length).toBe(before);
    await client.request("POST", `/v1/runs/${waiting.body.runId}/cancel`);
  });
});

describe("fork", () => {
  it("at a task's second round with an edited tool result: the model is called from there on, the answer has the edit, the parent is unchanged", async () => {
    const exported = await client.request<{ journal: JournalRecord[] }>("GET", `/v1/runs/${parent.run.runId}/export`);
    const calculation = exported.body.journal.find(
      (r) => r.kind === "tool" && r.scope.startsWith("task#0#") && String((r.value as { output: string }).output).includes("391"),
    );
    expect(calculation).toBeDefined();
    const calls = proxy.requests.length;
    const res = await client.request<{ runId: string }>("POST", `/v1/runs/${parent.run.runId}/fork`, {
      at: { scope: calculation!.scope, round: calculation!.round + 1 },
      edits: { toolResults: [{ callId: calculation!.callId, output: "17*23 = 999" }] },
    });
    expect(res.status).toBe(202);
    const { run } = await client.waitForEnd(res.body.runId);
    expect(run.status).toBe("succeeded");
    expect(run).toMatchObject({ forkOf: { runId: parent.run.runId }, sessionId: parent.run.sessionId });
    expect(run.result).toContain("999");
    const made = proxy.requests.slice(calls);
    // The first call the fork made is the edited task's next round, reading the edited result.
    expect(made[0].role).toBe("executor");
    expect(JSON.stringify(made[0].body.messages)).toContain("17*23 = 999");
    expect(made.length).toBeLessThan(calls);
    const again = await client.run(parent.run.runId);
    expect(again.result).toBe(parent.run.result);
    expect(await client.allEvents(parent.run.runId)).toEqual(parent.events);
  });

  it.each([
    [{ at: { scope: "task#9#nope", round: 0 } }, 404, 'no agent scope "task#9#nope"'],
    [{ at: { scope: "plan#0", round: 0 }, edits: { toolResults: [{ callId: "nope", output: "x" }] } }, 404, "No tool call nope"],
    [{ at: { scope: "plan#0", round: 0 }, edits: { input: 5 } }, 400, "edits.input"],
  ])("refuses %j with %i naming the problem, and starts nothing", async (body, status, message) => {
    const before = (await client.request<{ runs: unknown[] }>("GET", "/v1/runs?limit=100")).body.runs.length;
    const res = await client.request<{ error: { message: string } }>("POST", `/v1/runs/${parent.run.runId}/fork`, body);
    expect(res.status).toBe(status);
    expect(res.body.error.message).toContain(message);
    expect((await client.request<{ runs: unknown[] }>("GET", "/v1/runs?limit=100")).body.runs.length).toBe(before);
  });
});
