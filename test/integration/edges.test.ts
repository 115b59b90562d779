import { ScanCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMPTY_ANSWER_CORRECTION, EMPTY_ANSWER_ERROR } from "../../shared/agent/loop.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import { Behind } from "../support/aws.js";
import { Client } from "../support/client.js";
import { type RunningStack, startStack } from "../support/localStack.js";
import { type ScriptedModel, startScriptedModel } from "../support/scriptedModel.js";
import { answer, callTools, last, marker, ScriptRouter } from "../support/scriptedRoles.js";

/**
 * The agent-side edges (issue 13 item 4) over the whole local stack with a scripted model: empty
 * answers, a plan whose tasks all fail, and outputs too large for a DynamoDB item.
 */

const router = new ScriptRouter(() => ({ status: 400, message: "no scenario" }));
let scripted: ScriptedModel;
let stack: RunningStack | undefined;
let client: Client;

beforeAll(async () => {
  scripted = await startScriptedModel(router.script);
  try {
    stack = await startStack({ OPENAI_BASE_URL: scripted.url, OPENAI_API_KEY: "test", STEPWISE_MODEL: "scripted" });
  } catch (error) {
    await scripted.close();
    throw error;
  }
  client = new Client(stack.url, stack.apiKey);
}, 180_000);

afterAll(async () => {
  if (
    stack &&
    !(await fetch(stack.url).then(
      () => true,
      () => false,
    ))
  )
    console.error(stack.logs.join("").slice(-5_000));
  await stack?.stop();
  await scripted?.close();
});

const HUGE = "All work and no play makes a long answer. ".repeat(11_000); // about 460 KB

function gapFree(events: RunEvent[]) {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
}

describe("a plan whose executors answer with nothing", () => {
  router.on("all-empty", (turn) => {
    if (turn.role === "planner") {
      const planned = turn.messages.some((m) => m.role === "user" && m.content.includes("Current plan:"));
      return planned
        ? answer("Continue.")
        : callTools([{ name: "planning", arguments: { command: "create", steps: [{ title: "Work", tasks: ["Task A", "Task B"] }] } }]);
    }
    if (turn.role === "executor") return { text: "" };
    return answer("There is nothing to summarize.");
  });
  let run: any;
  let events: RunEvent[];
  beforeAll(async () => {
    const { runId } = await client.submit({ input: `${marker("all-empty")} Do two things.`, mode: "plan_solve" });
    ({ run, events } = await client.waitForEnd(runId, 90_000));
  }, 300_000);

  it("each executor is told once that its reply was empty, then its task fails with a clear error", () => {
    const executors = router.of("all-empty", "executor");
    expect(executors).toHaveLength(4);
    const corrections = executors.filter((t) => last(t).content === EMPTY_ANSWER_CORRECTION);
    expect(corrections).toHaveLength(2);
    expect(run.tasks.map((t: any) => [t.taskId, t.status, t.result])).toEqual([
      ["s1.t1", "failed", EMPTY_ANSWER_ERROR],
      ["s1.t2", "failed", EMPTY_ANSWER_ERROR],
    ]);
  });

  it("the run ends failed (not succeeded with an empty answer), its error listing each failed task; no summary is asked for", () => {
    expect(run.status).toBe("failed");
    expect(run.error.message).toContain("All 2 task(s) failed");
    expect(run.error.message).toContain(`Task A: ${EMPTY_ANSWER_ERROR}`);
    expect(router.of("all-empty", "summarizer")).toHaveLength(0);
    expect(events.at(-1)!.type).toBe("run.failed");
    gapFree(events);
  });

  it("usage counts every paid model call: the plan, four executor replies (empty ones too) and the replan", () => {
    expect(run.usage.llmCalls).toBe(6);
  });
});

describe("a ReAct answer over 400 KB", () => {
  router.on("huge-answer", () => ({ text: [HUGE.slice(0, 200_000), HUGE.slice(200_000)] }));
  let run: any;
  let events: RunEvent[];
  beforeAll(async () => {
    const { runId } = await client.submit({ input: `${marker("huge-answer")} Write at length.`, mode: "react" });
    ({ run, events } = await client.waitForEnd(runId, 90_000));
  }, 300_000);

  it("the run succeeds: the answer is kept whole as a file and the record keeps its beginning with a pointer", () => {
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.result.startsWith(HUGE.slice(0, 1_000))).toBe(true);
    expect(run.result).toContain("the whole text is the run's file answer.md");
    // Whole where the store takes it (S3); the table adapter keeps its first 300,000 characters.
    expect(run.files.find((f: any) => f.name === "answer.md").bytes).toBeGreaterThanOrEqual(300_000);
    expect(JSON.stringify(run)).not.toMatch(/Item size|ValidationException/);
  });

  it("its events stay numbered without a gap, the streamed text cut with a note instead of failing an append", () => {
    gapFree(events);
    const deltas = events.filter((e) => e.type === "agent.delta");
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.some((e) => (e.data as { text: string }).text.includes("more bytes, kept with the run"))).toBe(true);
    expect(events.at(-1)!.type).toBe("run.succeeded");
  });
});

describe("450 KB of tool arguments", () => {
  router.on("huge-args", (turn) =>
    last(turn).role === "tool"
      ? answer("The text was too long to measure.")
      : callTools([{ name: "text_stats", arguments: { text: HUGE } }]),
  );
  let run: any;
  let events: RunEvent[];
  beforeAll(async () => {
    const { runId } = await client.submit({ input: `${marker("huge-args")} Measure this.`, mode: "react" });
    ({ run, events } = await client.waitForEnd(runId, 90_000));
  }, 300_000);

  it("the call is journaled and answered (the tool refuses the size), and the run succeeds with a gap-free log", () => {
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.result).toBe("The text was too long to measure.");
    const called = events.find((e) => e.type === "tool.called")!;
    expect(String((called.data as { arguments: unknown }).arguments)).toContain("[arguments cut]");
    expect(events.find((e) => e.type === "tool.result")!.data).toMatchObject({ ok: false });
    gapFree(events);
  });
});

/**
 * Chinese text (3 bytes a character) at every size limit of one run and its session, end to end:
 * the input at MAX_INPUT_BYTES, task results and the answer over what a record keeps inline, a
 * later step's context holding the earlier results, streamed text over an event's text limit, and
 * the session turn holding the input and the answer. DynamoDB refuses an item over 400 KB (dynalite
 * does not), so every item the runs wrote is measured.
 */
describe("Chinese text at every size limit", () => {
  const INPUT = `${marker("cjk-limits")} ${"请分析这份销售数据并写出报告。".repeat(2_133)}`; // 96,000 bytes: the default MAX_INPUT_BYTES
  const RESULT = "这是第一步的中文结果，包含许多数字和结论。".repeat(3_000); // 63,000 characters, 189,000 bytes
  const ANSWER = "最终报告：销售额增长了百分之十二。".repeat(3_600); // 61,200 characters, 183,600 bytes
  router
    .on("cjk-limits", (turn) => {
      if (turn.role === "planner") {
        const planned = turn.messages.some((m) => m.role === "user" && m.content.includes("Current plan:"));
        return planned
          ? answer("Continue.")
          : callTools([
              {
                name: "planning",
                arguments: {
                  command: "create",
                  steps: [
                    { title: "读取数据", tasks: ["汇总"] },
                    { title: "写报告", tasks: ["撰写"] },
                  ],
                },
              },
            ]);
      }
      if (turn.role === "executor") return { text: [RESULT.slice(0, 30_000), RESULT.slice(30_000)] };
      return { text: [ANSWER.slice(0, 30_000), ANSWER.slice(30_000)] };
    })
    .on("cjk-turn-2", () => answer("好的，我记得上一轮的报告。"));
  let run: any;
  let events: RunEvent[];
  let second: any;
  beforeAll(async () => {
    expect(Buffer.byteLength(INPUT)).toBe(96_000);
    const { runId, sessionId } = await client.submit({ input: INPUT, mode: "plan_solve" });
    ({ run, events } = await client.waitForEnd(runId, 120_000));
    const next = await client.submit({ input: `${marker("cjk-turn-2")} 上一轮的报告说了什么？`, mode: "react", sessionId });
    second = (await client.waitForEnd(next.runId, 90_000)).run;
  }, 300_000);

  it("an input one byte over MAX_INPUT_BYTES is refused with 413; the input at the limit runs, kept whole", async () => {
    const refused = await client.request<{ error: { code: string } }>("POST", "/v1/runs", { input: `${INPUT}a`, mode: "react" });
    expect([refused.status, refused.body.error.code]).toEqual([413, "payload_too_large"]);
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.input).toBe(INPUT);
  });

  it("each task's result and the answer keep their beginning inline, never cutting a character, the whole as a file", async () => {
    for (const task of run.tasks) {
      expect(task.status).toBe("succeeded");
      // The run view previews it (a view holds many tasks) and says how long the whole is.
      expect(task).toMatchObject({ resultBytes: 189_000, resultCut: true });
      expect(Buffer.byteLength(task.result)).toBeLessThanOrEqual(4_000);
      expect(RESULT.startsWith(task.result.split("\n\n[preview: ")[0])).toBe(true);
      expect(task.result).toMatch(/\[preview: the first \d+ of 189000 bytes; the whole result is at links\.result\]$/);
      // The whole through its link: a redirect to the run file in storage, followed.
      const whole = await fetch(task.links.result, { headers: { authorization: `Bearer ${stack!.apiKey}` } });
      expect(whole.status).toBe(200);
      expect(await whole.text()).toBe(RESULT);
    }
    expect(ANSWER.startsWith(run.result.split("\n\n[cut at ")[0])).toBe(true);
    expect(run.result).toContain("[cut at 100000 of 183600 bytes: the whole text is the run's file answer.md]");
    expect(run.files.find((f: any) => f.name === "answer.md").bytes).toBe(183_600);
  });

  it("the second step's executor is given the first step's result in its context", () => {
    const [, later] = router.of("cjk-limits", "executor");
    const context = later!.messages.map((m) => m.content).join("\n");
    expect(context).toContain(RESULT.slice(0, 20_000));
  });

  it("streamed text over an event's limit is cut between characters with a note; the log has no gap", () => {
    gapFree(events);
    const cut = events.filter(
      (e) => e.type === "agent.delta" && String((e.data as { text: string }).text).includes("more bytes, kept with the run"),
    );
    expect(cut.length).toBeGreaterThan(0);
    expect(events.at(-1)!.type).toBe("run.succeeded");
  });

  it("the session's next turn gets the first turn's request and answer, and every item written stays under 350 KB", async () => {
    expect(second.status, JSON.stringify(second.error)).toBe("succeeded");
    const [turn] = router.of("cjk-turn-2", "react");
    const seen = turn!.messages.map((m) => m.content);
    expect(seen).toContain(INPUT);
    expect(seen).toContain(run.result);

    const behind = new Behind(stack!.endpoints!);
    try {
      let start: Record<string, any> | undefined;
      const sizes: [string, number][] = [];
      do {
        const page = await behind.dynamo.send(new ScanCommand({ TableName: stack!.endpoints!.tableName, ExclusiveStartKey: start }));
        for (const item of page.Items ?? []) sizes.push([`${item.pk?.S} ${item.sk?.S}`, Buffer.byteLength(JSON.stringify(item))]);
        start = page.LastEvaluatedKey;
      } while (start);
      // Measured as the item's JSON with its type markers: a little above what DynamoDB counts.
      expect(sizes.length).toBeGreaterThan(10);
      expect(sizes.filter(([, bytes]) => bytes >= 350_000)).toEqual([]);
      // The biggest items are this run's: its record, its turn in the session.
      expect(Math.max(...sizes.map(([, bytes]) => bytes))).toBeGreaterThan(190_000);
    } finally {
      behind.destroy();
    }
  });
});
