import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayFolder, replayRuns } from "../../infra/cli/replay.js";
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
  it("replays the recorded run with no model call and no file written, and finds its events identical every time", async () => {
    const calls = proxy.requests.length;
    // Three times, the comparison asked for from the start and until it is no longer running: one
    // read between the run's end and its terminal event used to report a difference.
    for (let i = 0; i < 3; i++) {
      const res = await client.request<{ runId: string; replayOf: string }>("POST", `/v1/runs/${parent.run.runId}/replay`);
      expect(res.status).toBe(202);
      expect(res.body.replayOf).toBe(parent.run.runId);
      let comparison = (await client.request<{ status: string; eventsCompared: number }>("GET", `/v1/runs/${res.body.runId}/replay`)).body;
      while (comparison.status === "running") {
        await new Promise((resolve) => setTimeout(resolve, 5));
        comparison = (await client.request<typeof comparison>("GET", `/v1/runs/${res.body.runId}/replay`)).body;
      }
      expect(comparison).toMatchObject({ status: "identical", eventsCompared: parent.events.length });
      const { run } = await client.waitForEnd(res.body.runId);
      expect(run.status).toBe("succeeded");
      expect(run.result).toBe(parent.run.result);
      expect(run.files).toEqual([]);
      expect(run).toMatchObject({ replayOf: parent.run.runId, usage: { llmCalls: 0, toolCalls: 0 } });
    }
    expect(proxy.requests.length).toBe(calls);
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

  it("replays a folder of exported runs (stepwise replay --dir): each imported, exit 1 naming the changed run and the file the API refused", async () => {
    const exported = (await client.request<{ run: { input: string } }>("GET", `/v1/runs/${parent.run.runId}/export`)).body;
    const dir = await mkdtemp(join(tmpdir(), "stepwise-replays-"));
    try {
      await writeFile(join(dir, "a-recorded.json"), JSON.stringify(exported));
      // Recorded from another request than the code now builds: its planner's first call was asked otherwise.
      await writeFile(join(dir, "b-changed.json"), JSON.stringify({ ...exported, run: { ...exported.run, input: `${INPUT}, in French` } }));
      await writeFile(join(dir, "c-broken.json"), JSON.stringify({ format: "stepwise.run/1", run: { runId: "run_x" } }));
      const runsBefore = (await client.request<{ runs: unknown[] }>("GET", "/v1/runs?limit=100")).body.runs.length;
      const calls = proxy.requests.length;
      const out: string[] = [];
      const code = await replayFolder(new StepwiseClient(stack.url, stack.apiKey), dir, {
        stdout: { write: (text: string) => out.push(text) > 0 } as never,
      });
      const printed = out.join("");
      expect(code, printed).toBe(1);
      expect(printed).toMatch(new RegExp(`a-recorded\\.json \\(${parent.run.runId}\\): run_\\w+ → run_\\w+: identical`));
      expect(printed).toMatch(/b-changed\.json \(run_\w+\): run_\w+ → run_\w+: diverged at llm plan#0 round 0 \(different_request\)/);
      expect(printed).toContain("in French");
      expect(printed).toMatch(/c-broken\.json: not imported: .*run\./);
      expect(printed).toContain("1 of 3 replayed identically.");
      expect(printed).toContain("Not identical: b-changed.json, c-broken.json");
      expect(proxy.requests.length).toBe(calls);
      // Two imports and their two replays; the refused file recorded nothing.
      const runs = (await client.request<{ runs: { importedFrom?: string; replayOf?: string }[] }>("GET", "/v1/runs?limit=100")).body.runs;
      expect(runs.length).toBe(runsBefore + 4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
    // The parent's page lists the fork (found in its session's runs, not kept on the parent).
    expect(again.forks).toEqual([
      { runId: run.runId, at: { scope: calculation!.scope, round: calculation!.round + 1 }, status: "succeeded", createdAt: run.createdAt },
    ]);
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
