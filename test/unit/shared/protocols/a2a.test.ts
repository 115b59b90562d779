import { TaskState } from "@a2a-js/sdk";
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../../../shared/contracts/events.js";
import type { Interrupt } from "../../../../shared/contracts/interrupts.js";
import { emptyUsage, type RunRecord, RunStatus } from "../../../../shared/contracts/run.js";
import { pushBody, pushHeaders, pushUpdateBody, taskOf, workingUpdate } from "../../../../shared/protocols/a2a.js";
import { A2aProgress } from "../../../../shared/protocols/a2aProgress.js";

/** The A2A view of a run (shared/protocols/a2a.ts): states, the pause as a status message, artifacts, push bodies. */

const run = (fields: Partial<RunRecord> = {}): RunRecord => ({
  schemaVersion: 1,
  runId: "run_1",
  tenantId: "t",
  sessionId: "ses_1",
  status: "running",
  requestedMode: "auto",
  input: "Compute 17*23",
  metadata: {},
  usage: emptyUsage(),
  executionArn: "arn",
  createdAt: "2026-11-26T00:00:00.000Z",
  updatedAt: "2026-11-26T00:00:01.000Z",
  ...fields,
});

const pause = (fields: Partial<Interrupt> = {}): Interrupt => ({
  schemaVersion: 1,
  interruptId: "int_1",
  runId: "run_1",
  kind: "tool_approval",
  status: "pending",
  summary: "write_artifact report.md",
  toolName: "write_artifact",
  arguments: { name: "report.md" },
  createdAt: "2026-11-26T00:00:01.000Z",
  ...fields,
});

const text = (task: ReturnType<typeof taskOf>) =>
  task.status!.message!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");

describe("a run as an A2A task", () => {
  it.each([
    ["queued", TaskState.TASK_STATE_SUBMITTED],
    ["running", TaskState.TASK_STATE_WORKING],
    ["succeeded", TaskState.TASK_STATE_COMPLETED],
    ["failed", TaskState.TASK_STATE_FAILED],
    ["timed_out", TaskState.TASK_STATE_FAILED],
    ["cancelled", TaskState.TASK_STATE_CANCELED],
    ["interrupted", TaskState.TASK_STATE_CANCELED],
  ] as const)("%s is %s", (status, state) => {
    expect(taskOf(run({ status }), [], [], "https://api").status!.state).toBe(state);
  });

  it("maps every run status", () => {
    for (const status of RunStatus.options) expect(taskOf(run({ status }), [pause()], [], "").status!.state).toBeGreaterThan(0);
  });

  it("a pending pause is input-required: the status message names it and how to reply, with a data part listing the pauses", () => {
    const task = taskOf(run({ status: "awaiting_input" }), [pause()], [], "https://api");
    expect(task.status!.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(text(task)).toContain("write_artifact report.md");
    expect(text(task)).toContain("'approve', or 'reject: <why>'");
    const data = task.status!.message!.parts.find((p) => p.content?.$case === "data")!.content!.value;
    expect(data).toEqual({
      interrupts: [
        {
          interruptId: "int_1",
          kind: "tool_approval",
          summary: "write_artifact report.md",
          toolName: "write_artifact",
          arguments: { name: "report.md" },
          decisions: ["approve", "reject"],
        },
      ],
    });
    const question = taskOf(
      run({ status: "awaiting_input" }),
      [pause({ kind: "ask_user", question: "Which year?", toolName: undefined })],
      [],
      "",
    );
    expect(text(question)).toContain("Which year?\nReply on this task with your answer.");
  });

  it("a pause already decided (the run not yet resumed) is working, not input-required", () => {
    expect(taskOf(run({ status: "awaiting_input" }), [pause({ status: "resolved" })], [], "").status!.state).toBe(
      TaskState.TASK_STATE_WORKING,
    );
  });

  it("completed: the answer, then each file as a link to the API; other states have no artifacts", () => {
    const files = [{ name: "report.md", description: "Report", contentType: "text/markdown", bytes: 10, createdAt: "" }];
    const task = taskOf(run({ status: "succeeded", result: "391" }), [], files, "https://api");
    expect(task.artifacts.map((a) => [a.artifactId, a.parts[0]!.content])).toEqual([
      ["answer", { $case: "text", value: "391" }],
      ["file:report.md", { $case: "url", value: "https://api/v1/runs/run_1/files/report.md" }],
    ]);
    expect(taskOf(run({ status: "running" }), [], files, "https://api").artifacts).toEqual([]);
  });

  it("failed says why", () => {
    expect(text(taskOf(run({ status: "failed", error: { code: "x", message: "The model could not be reached" } }), [], [], ""))).toBe(
      "The model could not be reached",
    );
  });

  it("a push body is the task as a StreamResponse (1.0) or the 0.3 task, with the config's token or credentials", () => {
    const task = taskOf(run({ status: "succeeded", result: "4" }), [], [], "");
    expect(JSON.parse(pushBody({ id: "c", wireVersion: "1.0" }, task))).toMatchObject({
      task: { id: "run_1", status: { state: "TASK_STATE_COMPLETED" } },
    });
    expect(JSON.parse(pushBody({ id: "c", wireVersion: "0.3" }, task))).toMatchObject({
      kind: "task",
      id: "run_1",
      status: { state: "completed" },
    });
    expect(pushHeaders({ id: "c", token: "t", wireVersion: "1.0" })).toEqual({
      "content-type": "application/a2a+json",
      "x-a2a-notification-token": "t",
    });
    expect(pushHeaders({ id: "c", token: "t", authentication: { scheme: "Bearer", credentials: "k" }, wireVersion: "0.3" })).toEqual({
      "content-type": "application/json",
      authorization: "Bearer k",
    });
  });

  it("a status update's push body is the update alone: statusUpdate (1.0), or the 0.3 status-update event", () => {
    const update = workingUpdate(run({ status: "running" }), "msg_w1", "2026-11-28T08:00:00.000Z", "The react's model call failed");
    expect(JSON.parse(pushUpdateBody({ id: "c", wireVersion: "1.0" }, update))).toEqual({
      statusUpdate: expect.objectContaining({
        taskId: "run_1",
        status: expect.objectContaining({ state: "TASK_STATE_WORKING", message: expect.objectContaining({ messageId: "run_1:msg_w1" }) }),
      }),
    });
    expect(JSON.parse(pushUpdateBody({ id: "c", wireVersion: "0.3" }, update))).toMatchObject({
      kind: "status-update",
      taskId: "run_1",
      status: { state: "working", message: { parts: [{ kind: "text", text: "The react's model call failed" }] } },
    });
  });
});

describe("a run's progress as A2A working updates, from the run's fold", () => {
  const at = "2026-11-26T00:00:02.000Z";
  const plan = {
    title: "Compute",
    finished: false,
    steps: [{ title: "Multiply", tasks: ["17*23"], status: "in_progress" as const }],
  };
  const log: RunEvent[] = [
    { type: "run.started", data: { mode: "plan_solve", input: "Compute 17*23" }, seq: 1, at },
    { type: "plan.updated", data: { plan }, seq: 2, at },
    { type: "task.started", data: { taskId: "t1", title: "Multiply", iteration: 0, stepIndex: 0 }, seq: 3, at },
    { type: "agent.delta", data: { agent: "executor", taskId: "t1", text: "Let me" }, seq: 4, at },
    { type: "tool.called", data: { agent: "executor", taskId: "t1", callId: "c1", tool: "calculator", arguments: {} }, seq: 5, at },
    {
      type: "tool.result",
      data: { agent: "executor", taskId: "t1", callId: "c1", tool: "calculator", ok: true, output: "391" },
      seq: 6,
      at,
    },
    { type: "task.completed", data: { taskId: "t1", title: "Multiply", iteration: 0, status: "succeeded", result: "391" }, seq: 7, at },
  ];

  it("says the plan, each task as it starts and ends, and each tool call; text and results stay in the run's stream", () => {
    const progress = new A2aProgress();
    expect(log.map((event) => progress.next(event))).toEqual([
      undefined,
      "Plan: Compute\n1. [in_progress] Multiply",
      "Started t1: Multiply",
      undefined,
      "Calling calculator",
      undefined,
      "Finished t1: Multiply",
    ]);
    // An event a stream repeats says nothing again.
    expect(progress.next(log[4]!)).toBeUndefined();
  });

  it("followed from the middle of the log: a task whose start came before still ends", () => {
    const progress = new A2aProgress();
    expect(progress.next({ ...log[6]!, data: { ...(log[6]!.data as object), status: "failed" } } as RunEvent)).toBe("Failed t1: Multiply");
  });

  it("says when a model call waits to be retried, and when a partial reply is withdrawn", () => {
    const retrying = {
      agent: "executor" as const,
      taskId: "t1",
      attempt: 2,
      retries: 5,
      reason: "the model could not be reached (ECONNREFUSED)",
      waitMs: 1000,
    };
    const progress = new A2aProgress();
    expect(progress.next({ type: "model.retrying", data: retrying, seq: 3, at })).toBe(
      "The executor of t1's model call failed (the model could not be reached (ECONNREFUSED)): retry 2 of 5 in 1.0 s",
    );
    expect(progress.next({ type: "agent.withdrawn", data: { agent: "router", reason: "the reply broke off" }, seq: 4, at })).toBe(
      "The router's partial reply is withdrawn: it broke off and is retried",
    );
  });
});
