import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventPage } from "../../shared/apiClient/client.js";
import type { RunEvent } from "../../shared/contracts/events.js";
import { TERMINAL_EVENTS } from "../../shared/contracts/terminal.js";
import { Client } from "../support/client.js";
import { lastLines, type RunningStack, startStack } from "../support/localStack.js";

/**
 * The step functions in separate processes (STEPWISE_LOCAL_CONTAINERS), as Lambda containers on
 * AWS: a plan_solve run with twelve parallel tasks, whose executors append to one event log from
 * four processes at once (each `agent.delta`, tool call and result its own append). The log stays
 * gap-free and duplicate-free with the terminal event last, and a stream cut off mid-run resumes
 * with Last-Event-ID across it. The containers end by themselves when their stack crashes.
 */
const EXPRESSIONS = Array.from({ length: 12 }, (_, i) => `${i + 11}*${i + 3}`);
const INPUT = `Compute ${EXPRESSIONS.join(", ")}, then write a short report`;

/** CPU ticks a process has used (user + system), from /proc. */
const cpuTicks = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
};
const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return condition();
}

describe("step functions in four containers", () => {
  let stack: RunningStack;
  let client: Client;
  let runId: string;
  let run: any;
  let logged: RunEvent[];
  let cpuBefore: number[];
  let streamed: { first: Awaited<ReturnType<Client["stream"]>>; rest: Awaited<ReturnType<Client["stream"]>> };

  beforeAll(async () => {
    stack = await startStack({ STEPWISE_LOCAL_CONTAINERS: "4", MAX_CONCURRENCY: "12", OFFLINE_MODEL_LATENCY_MS: "100" });
    client = new Client(stack.url, stack.apiKey);
    cpuBefore = stack.containerPids.map(cpuTicks);
    try {
      ({ runId } = await client.submit({ input: INPUT, mode: "plan_solve" }));
      // A client follows the run, is cut off while the executors write, and resumes with Last-Event-ID.
      const first = await client.stream(runId, { stopAfter: 20 });
      const rest = await client.stream(runId, { lastEventId: first.frames.at(-1)!.id });
      streamed = { first, rest };
      ({ run, events: logged } = await client.waitForEnd(runId, 120_000));
    } catch (error) {
      throw new Error(`${error}\nthe stack's last log lines:\n${lastLines(stack.logs)}`, { cause: error });
    }
  }, 240_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it("runs the step functions in four processes of their own, which did the run's work", () => {
    expect(stack.containerPids).toHaveLength(4);
    expect(new Set([...stack.containerPids, stack.pid]).size).toBe(5);
    for (const [i, pid] of stack.containerPids.entries()) expect(cpuTicks(pid), `container ${pid}`).toBeGreaterThan(cpuBefore[i]!);
  });

  it("succeeds with all twelve tasks run in parallel in one step", () => {
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.plan.steps[0].tasks).toHaveLength(12);
    for (const [i] of EXPRESSIONS.entries()) expect(run.result).toContain(String((i + 11) * (i + 3)));
  });

  it("has one gap-free event log, every event once, the terminal event last", () => {
    expect(logged.map((e) => e.seq)).toEqual(logged.map((_, i) => i + 1));
    const started = logged.filter((e) => e.type === "task.started").map((e) => e.data.taskId);
    const completed = logged.filter((e) => e.type === "task.completed").map((e) => e.data.taskId);
    expect(started.length).toBeGreaterThanOrEqual(12);
    expect(new Set(started).size).toBe(started.length);
    expect(new Set(completed).size).toBe(completed.length);
    expect(completed.sort()).toEqual([...started].sort());
    const calls = logged.filter((e) => e.type === "tool.called").map((e) => e.data.callId);
    expect(new Set(calls).size).toBe(calls.length);
    const results = logged.filter((e) => e.type === "tool.result").map((e) => e.data.callId);
    expect(results.sort()).toEqual([...calls].sort());
    // No number was lost on the way (no filled number), and the terminal event ends the log.
    expect(logged.filter((e) => e.type === "run.resumed")).toEqual([]);
    expect(logged.filter((e) => TERMINAL_EVENTS.has(e.type)).map((e) => e.seq)).toEqual([logged.length]);
    expect(logged.at(-1)!.type).toBe("run.succeeded");
  });

  it("each executor's events are in its own order", () => {
    for (const taskId of new Set(logged.filter((e) => e.type === "task.started").map((e) => e.data.taskId))) {
      const own = logged.filter((e) => "taskId" in e.data && e.data.taskId === taskId).map((e) => e.type);
      expect(own[0], taskId).toBe("task.started");
      expect(own.at(-1), taskId).toBe("task.completed");
    }
  });

  it("a stream cut off mid-run resumes with Last-Event-ID: no gap, no duplicate, to the terminal event", () => {
    expect(streamed.first.frames).toHaveLength(20);
    expect(streamed.first.closed).toBe(false);
    const frames = [...streamed.first.frames, ...streamed.rest.frames];
    expect(frames.map((f) => Number(f.id))).toEqual(logged.map((e) => e.seq));
    expect(frames.map((f) => JSON.parse(f.data))).toEqual(logged);
    expect(streamed.rest.closed).toBe(true);
  });

  it("GET /events pages through the same log with ?after=", async () => {
    const paged: RunEvent[] = [];
    let after = 0;
    for (;;) {
      const res = await client.request<EventPage>("GET", `/v1/runs/${runId}/events?after=${after}&limit=7`);
      expect(res.status).toBe(200);
      paged.push(...res.body.events);
      if (res.body.events.length === 0) break;
      after = res.body.next.after;
    }
    expect(paged).toEqual(logged);
  });

  // The last test: it crashes the stack. A graceful stop stopping the containers is shown by
  // crashRecovery.test.ts, whose restarted stack runs in containers too (one stack fewer here).
  it("a crash of the stack takes its containers with it: they end when their stack is gone", async () => {
    const pids = stack.containerPids;
    expect(pids.every(alive)).toBe(true);
    stack.expectExit();
    process.kill(stack.pid, "SIGKILL"); // the stack's process alone, not its group
    expect(await until(() => pids.every((pid) => !alive(pid)), 20_000)).toBe(true);
  });
});
