import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionView } from "../../shared/contracts/responses.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type ScriptedModel, startScriptedModel } from "../support/scriptedModel.js";
import { answer, callTools, marker, ScriptRouter } from "../support/scriptedRoles.js";

/**
 * A crash with a run queued behind another in its session: the whole stack is killed at once,
 * restarted on the same data folder, and both runs finish, in order, the second seeing the first's
 * turn. The scripted model lives in the test's process, so it outlives the stack.
 */

const router = new ScriptRouter();
let dataDir: string;
let scripted: ScriptedModel;
let first: RunningStack | undefined;
let second: RunningStack | undefined;
const apiKey = `sk_test_crash_${Math.random().toString(36).slice(2)}`;

const start = () =>
  startStack({
    STEPWISE_DATA_DIR: dataDir,
    STEPWISE_API_KEY: apiKey,
    OPENAI_BASE_URL: scripted.url,
    OPENAI_API_KEY: "test",
    STEPWISE_MODEL: "scripted",
  });

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "stepwise-multitask-crash-"));
  scripted = await startScriptedModel(router.script);
});

afterAll(async () => {
  await first?.kill();
  await second?.stop();
  await scripted?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("kill -9 of the stack while a run is queued behind another in its session", () => {
  it("after a restart on the same data folder, both finish in submission order and the second sees the first", async () => {
    router.on("k-a", (_turn, turns) =>
      turns.length === 1
        ? callTools([{ name: "write_report", arguments: { title: "Squares", content: "12*12 = 144" } }])
        : answer("k-a: report written."),
    );
    router.on("k-b", () => answer("k-b: done."));
    const inputA = `${marker("k-a")} Write a short report on 12*12.`;
    const inputB = `${marker("k-b")} Then say hello.`;
    const sessionId = `crash-${Date.now().toString(36)}`;

    first = await start();
    const before = new Client(first.url, apiKey);
    const a = await before.submit({ input: inputA, mode: "react", sessionId, approval: { tools: "write" } });
    const { pending } = await before.waitForPending(a.runId, 1, 60_000);
    const b = await before.submit({ input: inputB, mode: "react", sessionId, multitask: "enqueue" });
    expect(b.status).toBe("queued");
    await first.kill();
    first = undefined;

    second = await start();
    const after = new Client(second.url, apiKey);
    // Still waiting: the queued run did not start on its own at the restart.
    expect((await after.run(b.runId)).status).toBe("queued");
    expect((await after.request<SessionView>("GET", `/v1/sessions/${sessionId}`)).body).toMatchObject({
      activeRunId: a.runId,
      waitingRunIds: [b.runId],
    });
    expect(router.of("k-b")).toHaveLength(0);

    expect((await after.decide(a.runId, pending[0].interruptId, { decision: "approve" })).status).toBe(202);
    expect((await after.waitForEnd(a.runId, 90_000)).run.status).toBe("succeeded");
    expect((await after.waitForEnd(b.runId, 90_000)).run.status).toBe("succeeded");
    expect(router.turns.map((t) => t.marker)).toEqual(["k-a", "k-a", "k-b"]);
    expect(
      router
        .of("k-b")[0]!
        .messages.filter((m) => m.role !== "system")
        .map((m) => [m.role, m.content]),
    ).toEqual([
      ["user", inputA],
      ["assistant", "k-a: report written."],
      ["user", inputB],
    ]);
    const session = (await after.request<SessionView>("GET", `/v1/sessions/${sessionId}`)).body;
    expect(session).toMatchObject({ activeRunId: null, waitingRunIds: [] });
    expect(session.messages.map((m: any) => m.runId)).toEqual([a.runId, a.runId, b.runId, b.runId]);
  }, 240_000); // two starts of the stack and two runs on a busy machine: a wide bound, not a measure
});
