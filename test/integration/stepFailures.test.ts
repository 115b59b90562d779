import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Behind } from "../support/aws.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type ScriptedModel, startScriptedModel } from "../support/scriptedModel.js";
import { answer, callTools, marker, ScriptRouter } from "../support/scriptedRoles.js";

/**
 * How a failing step meets the state machine's Retry and Catch (infra/aws/orchestration.ts): a model
 * that is briefly unavailable is retried by the state machine after the client gave up (the journal
 * makes the repeat safe) and the run succeeds; a model that refuses the request fails the run at
 * once, with the typed code on the run and as the Step Functions execution's error and cause.
 * A failed step fails the execution at that step, so once the cause is fixed the run is resumed
 * there (RedriveExecution) and the journal replays what it had done.
 * The client's own retries are off (LLM_MAX_RETRIES=0) so each model request is one step attempt.
 */
const router = new ScriptRouter();
let scripted: ScriptedModel;
let stack: RunningStack;
let client: Client;
let behind: Behind;

router.on("busy", (_turn, turns) =>
  turns.length <= 2 ? { status: 503, message: "The engine is overloaded." } : answer("Fine after the outage."),
);
router.on("refused", () => ({ status: 400, message: "This model does not accept that request." }));
// A tool call, then the model refuses until an operator fixes it (say, a revoked key replaced).
let keyFixed = false;
router.on("fixable", (_turn, turns) =>
  turns.length === 1
    ? callTools([{ name: "calculator", arguments: { expression: "17*23" } }])
    : keyFixed
      ? answer("17*23 = 391")
      : { status: 401, message: "Incorrect API key provided." },
);

beforeAll(async () => {
  scripted = await startScriptedModel(router.script);
  stack = await startStack(
    { OPENAI_BASE_URL: scripted.url, OPENAI_API_KEY: "test", STEPWISE_MODEL: "scripted", LLM_MAX_RETRIES: "0" },
    [],
    { exposeEndpoints: true },
  );
  client = new Client(stack.url, stack.apiKey);
  behind = new Behind(stack.endpoints!);
});

afterAll(async () => {
  behind?.destroy();
  await stack?.stop();
  await scripted?.close();
});

describe("a failing step", () => {
  it("model unavailable (503) twice: the state machine retries the step and the run succeeds", async () => {
    const { runId } = await client.submit({ input: `${marker("busy")} Anything.`, mode: "react" });
    const { run } = await client.waitForEnd(runId, 90_000);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.result).toBe("Fine after the outage.");
    expect(router.of("busy")).toHaveLength(3);
  }, 120_000);

  it("model refuses (400): no retry, the run fails with Stepwise.ModelRejected, and so does its execution, with the real cause", async () => {
    const { runId } = await client.submit({ input: `${marker("refused")} Anything.`, mode: "react" });
    const { run, events } = await client.waitForEnd(runId, 60_000);
    expect(run.status).toBe("failed");
    expect(run.error).toMatchObject({ code: "Stepwise.ModelRejected", message: expect.stringContaining("does not accept that request") });
    expect(router.of("refused")).toHaveLength(1);
    expect(events.filter((e) => e.type === "run.failed")).toHaveLength(1);

    const execution = await behind.execution(runId);
    expect(execution.status).toBe("FAILED");
    expect(execution.error).toBe("Stepwise.ModelRejected");
    expect(execution.cause).toContain("does not accept that request");
  }, 120_000);

  it("fails at the step, and once the cause is fixed, POST /resume runs that step again from its journal and the run succeeds", async () => {
    const { runId } = await client.submit({ input: `${marker("fixable")} What is 17*23?`, mode: "react" });
    const failed = await client.waitForEnd(runId, 60_000);
    expect(failed.run.status).toBe("failed");
    expect(failed.run.error).toMatchObject({ code: "Stepwise.ModelRejected", message: expect.stringContaining("Incorrect API key") });
    const execution = await behind.execution(runId);
    expect(execution).toMatchObject({ status: "FAILED", error: "Stepwise.ModelRejected" });
    expect(router.of("fixable")).toHaveLength(2);

    keyFixed = true;
    const resumed = await client.request("POST", `/v1/runs/${runId}/resume`);
    expect(resumed.status).toBe(202);
    expect(resumed.body).toEqual({ runId, status: "running" });
    const { run, events } = await client.waitForEnd(runId, 60_000);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.result).toBe("17*23 = 391");
    expect(run.error).toBeNull();
    // The first model call and the tool call were replayed from the journal, not made again.
    expect(router.of("fixable")).toHaveLength(3);
    expect(events.filter((e) => e.type === "tool.called")).toHaveLength(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const ends = events.filter((e) => ["run.failed", "run.resumed", "run.succeeded"].includes(e.type)).map((e) => e.type);
    expect(ends).toEqual(["run.failed", "run.resumed", "run.succeeded"]);
    expect((await behind.execution(runId)).status).toBe("SUCCEEDED");

    // A run that succeeded has nothing to resume.
    const again = await client.request("POST", `/v1/runs/${runId}/resume`);
    expect(again.status).toBe(409);
  }, 150_000);
});
