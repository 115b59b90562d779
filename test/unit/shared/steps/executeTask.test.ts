import { describe, expect, it } from "vitest";
import { fileText } from "../../../../shared/ports/files.js";
import { executeTask } from "../../../../shared/steps/executeTask.js";
import { plan } from "../../../../shared/steps/plan.js";
import { ScriptedModel, systemText } from "../../../../shared/testing/scriptedModel.js";
import { eventTypes, planOutcome, withRun } from "../../../support/memoryRun.js";
import { teamReply } from "../../../support/team.js";

/** "Execute task" over in-memory ports: what one executor stores, announces and hands back to the Map. */

async function planned(fields = {}, model?: ScriptedModel) {
  const fixture = await withRun({ requestedMode: "plan_solve", status: "running", mode: "plan_solve", ...fields }, { model });
  const output = planOutcome(await plan({ runId: fixture.runId, mode: "plan_solve" }, fixture.ports), "execute");
  const input = (i: number) => ({ runId: fixture.runId, iteration: output.iteration, task: output.tasks[i]! });
  return { ...fixture, output, input };
}

describe("executeTask", () => {
  it("stores the task's answer and announces it, in order: started, the tool's call and result, the answer, completed", async () => {
    const { ports, fakes, runId, input } = await planned();
    const before = fakes.events.all(runId).length;
    const result = await executeTask(input(0), ports);
    expect(result).toMatchObject({ done: true, status: "succeeded", preview: "Done: 2+2 = 4" });
    expect(await ports.tasks.get(runId, 0, "s1.t1")).toMatchObject({
      status: "succeeded",
      result: "Done: 2+2 = 4",
      usage: { llmCalls: 2, toolCalls: 1 },
    });
    expect(eventTypes(fakes, runId).slice(before)).toEqual([
      "task.started",
      "tool.called",
      "tool.result",
      "agent.thought",
      "task.completed",
    ]);
    const completed = fakes.events.all(runId).at(-1)!;
    expect(completed.data).toMatchObject({ taskId: "s1.t1", status: "succeeded", result: "Done: 2+2 = 4" });
  });

  it("an executor's streamed answer is in the log before its task.completed, even when its writes are slower", async () => {
    const model = new ScriptedModel((request) => {
      const reply = teamReply(request);
      return reply.text && systemText(request).startsWith("You are an executor") ? { ...reply, stream: true } : reply;
    });
    const { ports, fakes, runId, input } = await planned({}, model);
    // Streamed text is written in the background; here each of its writes takes longer than the others.
    const append = ports.events.append.bind(ports.events);
    ports.events.append = async (id, bodies) => {
      if (bodies.some((b) => b.type === "agent.delta")) await new Promise((resolve) => setTimeout(resolve, 50));
      return append(id, bodies);
    };
    await executeTask(input(0), ports);
    const types = eventTypes(fakes, runId);
    expect(types).toContain("agent.delta");
    expect(types.lastIndexOf("agent.delta")).toBeLessThan(types.indexOf("task.completed"));
  });

  it("a write tool's file is stored and announced with where to download it and the task that wrote it, which lists it", async () => {
    const { ports, fakes, runId, input } = await planned();
    await executeTask(input(1), ports);
    const file = await fakes.files.get(runId, "sum.md");
    expect(fileText(file!)).toBe("# Sum\n2 + 2 = 4\n");
    expect(file).toMatchObject({ taskId: "s1.t2" });
    const created = fakes.events.all(runId).filter((e) => e.type === "file.created");
    expect(created.map((e) => e.data)).toEqual([
      expect.objectContaining({ name: "sum.md", download: `http://api.test/v1/runs/${runId}/files/sum.md`, taskId: "s1.t2" }),
    ]);
    const completed = fakes.events.all(runId).filter((e) => e.type === "task.completed");
    expect(completed.map((e) => e.data)).toEqual([expect.objectContaining({ taskId: "s1.t2", files: ["sum.md"] })]);
  });

  it("run again after it finished (a retried state), it replays: no model call, no second tool run, the same result", async () => {
    const { ports, fakes, runId, input, model } = await planned();
    const first = await executeTask(input(1), ports);
    const calls = model.requests.length;
    const again = await executeTask(input(1), ports);
    expect(again).toEqual(first);
    expect(model.requests.length).toBe(calls);
    expect(fakes.events.all(runId).filter((e) => e.type === "file.created")).toHaveLength(1);
  });

  it("with approval of write tools, the task waits for a person before writing; approved, it writes", async () => {
    const { ports, fakes, runId, input } = await planned({ approval: { tools: "write" } });
    const waiting = await executeTask(input(1), ports);
    expect(waiting).toMatchObject({ done: false, interruptId: expect.stringMatching(/^int_/) });
    expect(await fakes.files.get(runId, "sum.md")).toBeUndefined();
    expect(await ports.runs.status(runId)).toBe("awaiting_input");
    await ports.interrupts.resolve(runId, waiting.interruptId!, { decision: "approve", resolvedAt: new Date().toISOString() });
    expect(await executeTask(input(1), ports)).toMatchObject({ done: true, status: "succeeded" });
    expect(await fakes.files.get(runId, "sum.md")).toBeDefined();
  });

  it("a rejected write is not run; the executor hears why and answers without it", async () => {
    const { ports, fakes, runId, input } = await planned({ approval: { tools: "write" } });
    const waiting = await executeTask(input(1), ports);
    await ports.interrupts.resolve(runId, waiting.interruptId!, {
      decision: "reject",
      message: "not now",
      resolvedAt: new Date().toISOString(),
    });
    const result = await executeTask(input(1), ports);
    expect(result).toMatchObject({ done: true, status: "succeeded" });
    expect(await fakes.files.get(runId, "sum.md")).toBeUndefined();
    expect(result.preview).toContain("Rejected by the user: not now.");
    // Answered, but not done as planned: its record and its event say which call the person declined.
    const undone = [{ tool: "write_artifact", decision: "reject" }];
    expect((await ports.tasks.get(runId, input(1).iteration, "s1.t2"))?.undone).toEqual(undone);
    const completed = fakes.events.all(runId).filter((e) => e.type === "task.completed");
    expect(completed.map((e) => e.data)).toEqual([expect.objectContaining({ taskId: "s1.t2", status: "succeeded", undone })]);
  });

  it("an approved write leaves its task done, with no call undone", async () => {
    const { ports, fakes, runId, input } = await planned({ approval: { tools: "write" } });
    const waiting = await executeTask(input(1), ports);
    await ports.interrupts.resolve(runId, waiting.interruptId!, { decision: "approve", resolvedAt: new Date().toISOString() });
    await executeTask(input(1), ports);
    expect((await ports.tasks.get(runId, input(1).iteration, "s1.t2"))?.undone).toBeUndefined();
    const completed = fakes.events.all(runId).filter((e) => e.type === "task.completed");
    expect(completed[0]?.data).not.toHaveProperty("undone");
  });

  it("a model that answers with nothing twice fails the task with a clear error; the run goes on", async () => {
    const silent = new ScriptedModel((request) =>
      request.messages[0]?.content?.toString().startsWith("You are an executor") ? { text: "" } : teamReply(request),
    );
    const { ports, runId, input } = await planned({}, silent);
    const result = await executeTask(input(0), ports);
    expect(result).toMatchObject({ done: true, status: "failed" });
    expect((await ports.tasks.get(runId, 0, "s1.t1"))?.result).toContain("empty answer twice");
    expect(await ports.runs.status(runId)).toBe("running");
  });

  it("a run cancelled meanwhile stops the executor before its next model call", async () => {
    const { ports, runId, input, model } = await planned();
    await ports.runs.update(runId, { status: "cancelled" });
    const calls = model.requests.length;
    expect(await executeTask(input(0), ports)).toMatchObject({
      done: true,
      status: "failed",
      preview: "The run ended before this task finished.",
    });
    expect(model.requests.length).toBe(calls);
  });
});
