import { describe, expect, it } from "vitest";
import { planPoint, taskPoint, toolResultPoint } from "../../../../infra/console/src/forkPoints.js";
import { parsePlanText, planText } from "../../../../infra/display/forkEdits.js";
import type { ExportedRun } from "../../../../shared/contracts/replay.js";
import { TERMINAL_STATUSES } from "../../../../shared/contracts/terminal.js";
import type { ChatRequest } from "../../../../shared/llm/types.js";
import type { Tool } from "../../../../shared/ports/tools.js";
import { ownRun } from "../../../../shared/run/access.js";
import { compareReplay, exportRun, forkRun, forksOf, importRun, replayRun } from "../../../../shared/run/replay.js";
import { lastUserText, ScriptedModel, type ScriptedReply, systemText } from "../../../../shared/testing/scriptedModel.js";
import { writeArtifact } from "../../../../shared/tools/artifacts.js";
import { calculator } from "../../../../shared/tools/calculator.js";
import { runView } from "../../../../shared/views/runView.js";
import { drivePlanSolve } from "../../../support/driveRun.js";
import { withRun } from "../../../support/memoryRun.js";

/**
 * Replay and fork over in-memory ports: a plan_solve run of two steps of two tasks each (three
 * additions with the calculator, then a report file), driven step by step as the state machine runs it.
 */

const links = { api: "http://api.test", stream: "http://stream.test", console: false };

/** The tools, counting what they do: every calculator call and every file written. */
function countingTools() {
  const counts = { calculator: 0, writes: 0 };
  const tools: Tool[] = [
    {
      ...calculator,
      run: (args: never, context: never) => {
        counts.calculator++;
        return calculator.run(args, context);
      },
    } as Tool,
    {
      ...writeArtifact,
      run: (args: never, context: never) => {
        counts.writes++;
        return writeArtifact.run(args, context);
      },
    } as Tool,
  ];
  return { counts, tools };
}

const toolResults = (request: ChatRequest) => request.messages.filter((m) => m.role === "tool").map((m) => String(m.content));

function reply(request: ChatRequest): ScriptedReply {
  const system = systemText(request);
  const user = lastUserText(request);
  if (system.startsWith("You are the planner")) {
    if (user.includes("All steps are completed")) return { calls: [{ id: "finish_1", name: "planning", args: { command: "finish" } }] };
    if (user.includes("Results of step")) return { text: "The plan stands." };
    const steps = [
      { title: "Add", tasks: ["Add 1 and 1 with the calculator", "Add 2 and 2 with the calculator"] },
      { title: "Add and report", tasks: ["Add 10 and 10 with the calculator", "Write the report file sum.md"] },
    ];
    return { calls: [{ id: "plan_1", name: "planning", args: { command: "create", title: "Sums", steps } }] };
  }
  if (system.startsWith("You are an executor")) {
    const results = toolResults(request);
    if (results.length) return { text: `Done: ${results.join(" ")}` };
    const sum = /Your task: Add (\d+) and (\d+)/.exec(user);
    if (sum) return { calls: [{ id: "calc_1", name: "calculator", args: { expression: `${sum[1]}+${sum[2]}` } }] };
    return { calls: [{ id: "write_1", name: "write_artifact", args: { filename: "sum.md", content: "# Sums\n" } }] };
  }
  if (system.startsWith("You are the summarizer")) return { text: `Summary:\n${user.split("Task results:")[1]?.trim() ?? ""}` };
  throw new Error(`no scripted reply for: ${system.slice(0, 60)}`);
}

const TEXT_TYPES = new Set(["agent.delta", "agent.thought"]);

/** A recorded run of four tasks, ended, and a replay or fork of it driven the same way. */
async function recorded() {
  const model = new ScriptedModel((request) => reply(request));
  const { counts, tools } = countingTools();
  const fixture = await withRun({ requestedMode: "plan_solve" }, { model, tools });
  await drivePlanSolve(fixture.ports, fixture.runId);
  const parent = (await fixture.ports.runs.get(fixture.runId))!;
  expect(parent.status).toBe("succeeded");
  expect(counts).toEqual({ calculator: 3, writes: 1 });
  const recordedCalls = model.requests.length;
  return { ...fixture, parent, counts, recordedCalls };
}

describe("replay", () => {
  it("replays a recorded run of four tasks with no model call and no tool call, and its events are the recorded run's", async () => {
    const { ports, fakes, parent, model, counts, recordedCalls } = await recorded();
    const replay = await replayRun(ports, parent, {}, links);
    expect(replay).toMatchObject({ replayOf: parent.runId, sessionId: parent.sessionId, status: "queued" });
    await drivePlanSolve(ports, replay.runId);

    expect(model.requests.length).toBe(recordedCalls); // not one more model call
    expect(counts).toEqual({ calculator: 3, writes: 1 }); // no tool ran again, no file was written again
    expect(await ports.files.list(replay.runId)).toEqual([]);
    const ended = (await ports.runs.get(replay.runId))!;
    expect(ended).toMatchObject({ status: "succeeded", result: parent.result });
    expect(ended.usage).toMatchObject({ llmCalls: 0, toolCalls: 0, promptTokens: 0 });
    const comparison = await compareReplay(ports, ended);
    expect(comparison, JSON.stringify(comparison, null, 1)).toMatchObject({ status: "identical", replayOf: parent.runId });
    expect(comparison.eventsCompared).toBe(fakes.events.all(parent.runId).length);
    // The session keeps one turn: a replay is no turn of the conversation.
    expect((await ports.sessions.messages(parent.tenantId, parent.sessionId)).filter((m) => m.runId === replay.runId)).toEqual([]);
  });

  it("is compared once its log is closed: asked between the run's end and its terminal event, the comparison is still running, then identical", async () => {
    // The run's record ends before its terminal event lands (they are written side by side): a
    // comparison read in between missed run.succeeded and reported a difference (the benchmark saw it).
    const { ports, fakes, parent } = await recorded();
    const replay = await replayRun(ports, parent, {}, links);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const append = fakes.events.append.bind(fakes.events);
    fakes.events.append = async (runId, bodies, options) => {
      if (runId === replay.runId && options?.close) await gate;
      return append(runId, bodies, options);
    };
    const driven = drivePlanSolve(ports, replay.runId);
    let ended = (await ports.runs.get(replay.runId))!;
    while (!TERMINAL_STATUSES.has(ended.status)) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      ended = (await ports.runs.get(replay.runId))!;
    }
    expect(ended.status).toBe("succeeded");
    expect(await compareReplay(ports, ended)).toMatchObject({ status: "running" });
    release();
    await driven;
    expect(await compareReplay(ports, ended)).toMatchObject({ status: "identical" });
  });

  it("finds a replay identical when the recorded run's streamed text landed after its task's end, as it does under load", async () => {
    const { ports, fakes, parent } = await recorded();
    // An executor's answer, streamed in the background, written after task.completed.
    const log = fakes.events.logs.get(parent.runId)!.events;
    const completed = log.findIndex((e) => e.type === "task.completed");
    const taskId = (log[completed].data as { taskId: string }).taskId;
    const text = log.findLastIndex((e, i) => i < completed && TEXT_TYPES.has(e.type) && (e.data as { taskId?: string }).taskId === taskId);
    expect(text).toBeGreaterThanOrEqual(0);
    const [moved] = log.splice(text, 1);
    log.splice(completed, 0, moved);
    for (const [i, e] of log.entries()) e.seq = i + 1;

    const replay = await replayRun(ports, parent, {}, links);
    await drivePlanSolve(ports, replay.runId);
    const comparison = await compareReplay(ports, (await ports.runs.get(replay.runId))!);
    expect(comparison, JSON.stringify(comparison, null, 1)).toMatchObject({ status: "identical" });
  });

  it("finds a replay identical when the recorded run was scored by an online eval after its end (a replay is never scored)", async () => {
    const { ports, parent } = await recorded();
    const scored = { status: "scored" as const, judges: [{ name: "helpful", score: 1, passed: true, reason: "answers it" }], passed: true };
    const usage = { promptTokens: 10, completionTokens: 2 };
    const data = { ...scored, usage, costUsd: 0.001, at: new Date().toISOString() };
    expect(
      await ports.events.append(parent.runId, [{ type: "eval.scored", data }], { key: "eval", reopen: true, close: true }),
    ).toHaveLength(1);

    const replay = await replayRun(ports, parent, {}, links);
    await drivePlanSolve(ports, replay.runId);
    const comparison = await compareReplay(ports, (await ports.runs.get(replay.runId))!);
    expect(comparison, JSON.stringify(comparison, null, 1)).toMatchObject({ status: "identical" });
  });

  it("after a prompt change the replay stops at the first model call asked differently, naming it with both sides", async () => {
    const { ports, parent, model, recordedCalls, counts } = await recorded();
    const replay = await replayRun(ports, parent, { instructions: "Answer in French." }, links);
    await drivePlanSolve(ports, replay.runId);

    expect(model.requests.length).toBe(recordedCalls);
    expect(counts).toEqual({ calculator: 3, writes: 1 });
    const ended = (await ports.runs.get(replay.runId))!;
    expect(ended.status).toBe("failed");
    expect(ended.error?.message).toContain("The replay diverged: the model call of plan#0, round 0");
    const comparison = await compareReplay(ports, ended);
    expect(comparison.status).toBe("diverged");
    expect(comparison.divergence).toMatchObject({
      scope: "plan#0",
      round: 0,
      kind: "llm",
      reason: "different_request",
      recorded: { fingerprint: expect.any(String), value: { toolCalls: [{ name: "planning" }] } },
      replayed: { message: { index: 0, role: "system", text: expect.stringContaining("Answer in French.") } },
    });
  });

  it("a run still in flight is not replayed (409) and nothing starts", async () => {
    const { ports, fakes, run } = await withRun({ status: "running" });
    await expect(replayRun(ports, run, {}, links)).rejects.toMatchObject({
      statusCode: 409,
      message: expect.stringContaining("is running"),
    });
    expect(fakes.runs.records.size).toBe(1);
    expect(fakes.executions.executions.size).toBe(1);
  });
});

describe("fork", () => {
  it("a fork at step 2 with an edited tool result calls the model from the fork point on, answers with the edit, and leaves the parent as it was", async () => {
    const { ports, fakes, parent, model, recordedCalls, counts } = await recorded();
    const parentEvents = structuredClone(fakes.events.all(parent.runId));
    const parentJournal = structuredClone(await ports.journal.readRun(parent.runId));
    const fork = await forkRun(
      ports,
      parent,
      { at: { scope: "task#1#s2.t1", round: 1 }, edits: { toolResults: [{ callId: "calc_1", output: "10+10 = 99" }] } },
      links,
    );
    expect(fork).toMatchObject({ forkOf: { runId: parent.runId, at: { scope: "task#1#s2.t1", round: 1 } }, sessionId: parent.sessionId });
    await drivePlanSolve(ports, fork.runId);

    const made = model.requests.slice(recordedCalls);
    // The first call is the forked task's round 1, reading the edited result; then the planner judges step 2, then the summary.
    expect(made.map((r) => systemText(r).split(" of Stepwise")[0])).toEqual([
      "You are an executor agent",
      "You are the planner",
      "You are the summarizer",
    ]);
    expect(toolResults(made[0])).toEqual(["10+10 = 99"]);
    expect(counts).toEqual({ calculator: 3, writes: 1 }); // the sibling task's write was reused, not repeated
    const ended = (await ports.runs.get(fork.runId))!;
    expect(ended.status).toBe("succeeded");
    expect(ended.result).toContain("Done: 10+10 = 99");
    expect(parent.result).toContain("Done: 10+10 = 20");
    // Only what the fork asked is counted: the forked task's one call (its round 0 was inherited), none for its sibling.
    const tasks = await ports.tasks.list(fork.runId, 1);
    expect(tasks.map((t) => [t.taskId, t.usage?.llmCalls])).toEqual([
      ["s2.t1", 1],
      ["s2.t2", 0],
    ]);
    // The parent is unchanged.
    expect(fakes.events.all(parent.runId)).toEqual(parentEvents);
    expect(await ports.journal.readRun(parent.runId)).toEqual(parentJournal);
    expect((await ports.runs.get(parent.runId))?.result).toBe(parent.result);
  });

  it("a fork is checked by its parent's guardrails and keeps its tool-failure rule; a replay, which calls nothing, keeps the rule only", async () => {
    const { ports, fakes, parent } = await recorded();
    // As if the parent had been accepted with these (acceptRun records the tenant's and the agent's).
    const guarded = {
      ...parent,
      guardrails: [{ kind: "regex" as const, name: "no-99", pattern: "\\b99\\b", action: "warn" as const, on: ["output" as const] }],
      toolFailures: "report" as const,
    };
    const fork = await forkRun(
      ports,
      guarded,
      { at: { scope: "task#1#s2.t1", round: 1 }, edits: { toolResults: [{ callId: "calc_1", output: "10+10 = 99" }] } },
      links,
    );
    expect(fork).toMatchObject({ guardrails: guarded.guardrails, toolFailures: "report" });
    await drivePlanSolve(ports, fork.runId);
    expect((await ports.runs.get(fork.runId))?.result).toContain("10+10 = 99");
    // The fork's answer says 99, which the parent's check warns of: a fork cannot go around it.
    const decided = fakes.events.all(fork.runId).filter((e) => e.type === "guardrail.decided");
    expect(decided.map((e) => e.data)).toContainEqual(expect.objectContaining({ check: "no-99", stage: "output", verdict: "warn" }));

    const replay = await replayRun(ports, guarded, {}, links);
    expect(replay.toolFailures).toBe("report");
    expect(replay.guardrails).toBeUndefined();
  });

  it("a fork with the first plan iteration's plan edited runs the edited tasks live, and nothing of the planner's turn is asked again", async () => {
    const { ports, parent, model, recordedCalls, counts } = await recorded();
    const plan = {
      title: "Fives",
      steps: [{ title: "Add fives", tasks: ["Add 5 and 5 with the calculator", "Add 50 and 5 with the calculator"] }],
    };
    const fork = await forkRun(ports, parent, { at: { scope: "plan#0", round: 1 }, edits: { plan } }, links);
    await drivePlanSolve(ports, fork.runId);

    const made = model.requests.slice(recordedCalls);
    // No planner call for the plan: the edited one is made from the journal; its two tasks run live.
    expect(made.map((r) => systemText(r).split(" of Stepwise")[0])).toEqual([
      "You are an executor agent",
      "You are an executor agent",
      "You are an executor agent",
      "You are an executor agent",
      "You are the planner",
      "You are the summarizer",
    ]);
    expect(counts.calculator).toBe(3 + 2);
    const ended = (await ports.runs.get(fork.runId))!;
    expect(ended.status).toBe("succeeded");
    expect(ended.plan?.steps.map((s) => s.tasks)).toEqual([plan.steps[0].tasks]);
    expect(ended.result).toContain("5+5 = 10");
    expect(ended.result).toContain("50+5 = 55");
    expect(ended.result).not.toContain("1+1");
  });

  it("forks where the console's Fork from here points: a tool result, a task, and step 2's plan (made in iteration 0, which plan#1 kept)", async () => {
    const { ports, parent, model, recordedCalls } = await recorded();
    const journal = (await ports.journal.readRun(parent.runId)) as ExportedRun["journal"];
    // Each executor here names its call calc_1: the task the result's event names tells them apart.
    const result = toolResultPoint(journal, "calc_1", "s2.t1")!;
    expect(result).toEqual({ at: { scope: "task#1#s2.t1", round: 1 }, output: "10+10 = 20", ok: true, question: false });
    expect(taskPoint(journal, 1, "s2.t2")).toEqual({ scope: "task#1#s2.t2", round: 0 });
    const plan = planPoint(journal, 1)!;
    expect(plan.at).toEqual({ scope: "plan#0", round: 1 });
    // The plan as the editor shows it, one task changed, read back.
    const text = planText(plan.steps).replace("Add 10 and 10", "Add 7 and 7");
    const steps = parsePlanText(text);
    if ("problem" in steps) throw new Error(steps.problem);
    await forkRun(
      ports,
      parent,
      { at: result.at, edits: { toolResults: [{ callId: "calc_1", output: result.output, ok: result.ok }] } },
      links,
    );
    await forkRun(ports, parent, { at: taskPoint(journal, 1, "s2.t2")! }, links);
    const fork = await forkRun(ports, parent, { at: plan.at, edits: { plan: { title: plan.title, steps: steps.steps } } }, links);
    await drivePlanSolve(ports, fork.runId);
    const ended = (await ports.runs.get(fork.runId))!;
    expect(ended.status).toBe("succeeded");
    expect(ended.result).toContain("7+7 = 14");
    expect(ended.result).not.toContain("10+10");
    expect(model.requests.length).toBeGreaterThan(recordedCalls);
  });

  it("the parent's view lists its two forks (not its replay, not a fork of a fork), and a fork's view names its parent and fork point", async () => {
    const { ports, parent } = await recorded();
    const first = await forkRun(ports, parent, { at: { scope: "plan#0", round: 1 } }, links);
    const second = await forkRun(ports, parent, { at: { scope: "task#1#s2.t1", round: 1 } }, links);
    const replay = await replayRun(ports, parent, {}, links);
    await drivePlanSolve(ports, first.runId);
    const ofFork = await forkRun(ports, (await ports.runs.get(first.runId))!, { at: { scope: "plan#0", round: 1 } }, links);
    expect([first, second, replay, ofFork].every((r) => r.sessionId === parent.sessionId)).toBe(true);

    const viewOf = async (runId: string) => {
      const run = (await ports.runs.get(runId))!;
      return runView(run, [], [], [], links, undefined, await forksOf(ports, run));
    };
    const parentView = await viewOf(parent.runId);
    expect(parentView.forkOf).toBeUndefined();
    expect(parentView.forks).toHaveLength(2);
    expect(parentView.forks).toEqual(
      expect.arrayContaining([
        { runId: first.runId, at: { scope: "plan#0", round: 1 }, status: "succeeded", createdAt: first.createdAt },
        {
          runId: second.runId,
          at: { scope: "task#1#s2.t1", round: 1 },
          status: (await ports.runs.get(second.runId))!.status,
          createdAt: second.createdAt,
        },
      ]),
    );
    const firstView = await viewOf(first.runId);
    expect(firstView.forkOf).toEqual({ runId: parent.runId, at: { scope: "plan#0", round: 1 } });
    expect(firstView.forks.map((f) => f.runId)).toEqual([ofFork.runId]);
    const secondView = await viewOf(second.runId);
    expect(secondView.forkOf).toEqual({ runId: parent.runId, at: { scope: "task#1#s2.t1", round: 1 } });
    expect(secondView.forks).toEqual([]);
  });

  it("a run never forked shows its forks without reading the session's listing; once forked, two forks made at once are both counted and listed", async () => {
    const { ports, fakes, parent } = await recorded();
    const listingReads: string[] = [];
    const listRuns = fakes.listings.runs.bind(fakes.listings);
    fakes.listings.runs = (tenantId, query) => {
      listingReads.push(query.sessionId ?? "");
      return listRuns(tenantId, query);
    };
    // Polling a run that has no fork: no listing read, however often.
    for (let poll = 0; poll < 3; poll++) expect(await forksOf(ports, (await ports.runs.get(parent.runId))!)).toEqual([]);
    expect(listingReads).toEqual([]);

    const [first, second] = await Promise.all([
      forkRun(ports, parent, { at: { scope: "plan#0", round: 1 } }, links),
      forkRun(ports, parent, { at: { scope: "task#1#s2.t1", round: 1 } }, links),
    ]);
    const forked = (await ports.runs.get(parent.runId))!;
    expect(forked.forkCount).toBe(2);
    expect((await forksOf(ports, forked)).map((f) => f.runId).sort()).toEqual([first.runId, second.runId].sort());
    expect(listingReads).toEqual([parent.sessionId]);
    // A fork that was refused counts nothing.
    await expect(forkRun(ports, parent, { at: { scope: "task#7#nope", round: 0 } }, links)).rejects.toThrow();
    expect((await ports.runs.get(parent.runId))!.forkCount).toBe(2);
  });

  it.each([
    [{ at: { scope: "task#7#nope", round: 0 } }, 404, 'no agent scope "task#7#nope"'],
    [{ at: { scope: "plan#0", round: 1 }, edits: { plan: { steps: [{ title: "Empty", tasks: [] }] } } }, 400, "edits.plan.steps.0.tasks"],
    [{ at: { scope: "plan#0", round: 1 }, edits: { plan: { steps: [{ title: "X", tasks: ["y"], when: 1 }] } } }, 400, "edits.plan.steps.0"],
    [
      { at: { scope: "task#1#s2.t1", round: 1 }, edits: { plan: { steps: [{ title: "X", tasks: ["y"] }] } } },
      400,
      "A plan edit forks a plan iteration",
    ],
    [{ at: { scope: "plan#0", round: 0 }, edits: { plan: { steps: [{ title: "X", tasks: ["y"] }] } } }, 404, "made no plan"],
    [{ at: { scope: "task#1#s2.t1", round: 1 }, edits: { answers: [{ callId: "calc_1", answer: "yes" }] } }, 400, "not a question"],
    [{ at: { scope: "task#1#s2.t1", round: 1 }, edits: { answers: [{ callId: "calc_1", answer: "" }] } }, 400, "edits.answers.0.answer"],
    [{ at: { scope: "task#1#s2.t1", round: 9 } }, 404, "there is no round 9"],
    [{ at: { scope: "task#1#s2.t1", round: 1 }, edits: { toolResults: [{ callId: "calc_9", output: "x" }] } }, 404, "No tool call calc_9"],
    [
      { at: { scope: "task#1#s2.t1", round: 1 }, edits: { toolResults: [{ callId: "calc_1", output: 5 }] } },
      400,
      "edits.toolResults.0.output",
    ],
    [{ at: { scope: "task#1#s2.t1" } }, 400, "at.round"],
  ])("refuses %j with %i naming the problem, and starts nothing", async (body, status, message) => {
    const { ports, parent, fakes } = await recorded();
    await expect(forkRun(ports, parent, body, links)).rejects.toMatchObject({
      statusCode: status,
      message: expect.stringContaining(message),
    });
    expect([...fakes.runs.records.keys()]).toEqual([parent.runId]);
    expect(fakes.executions.executions.size).toBe(1);
  });
});

describe("import", () => {
  /** The recorded run as `GET …/export` hands it out (through JSON, as a file holds it). */
  async function exported() {
    const fixture = await recorded();
    const document = JSON.parse(JSON.stringify(await exportRun(fixture.ports, fixture.parent)));
    return { ...fixture, document };
  }

  it("records an exported run in the importing tenant under a new id, ended as it was, and it replays there identically", async () => {
    const { ports, fakes, parent, model, recordedCalls, counts, document } = await exported();
    const imported = await importRun(ports, "t_elsewhere", document, links);

    expect(imported).toMatchObject({ tenantId: "t_elsewhere", status: "succeeded", importedFrom: parent.runId, result: parent.result });
    expect(imported.runId).not.toBe(parent.runId);
    expect(imported.sessionId).not.toBe(parent.sessionId);
    expect(imported.webhook).toBeUndefined();
    // Its events are the recorded run's, naming the new id wherever they named the old.
    const events = fakes.events.all(imported.runId).map(({ type, data }) => ({ type, data }));
    const recordedEvents = fakes.events.all(parent.runId).map(({ type, data }) => ({ type, data }));
    expect(JSON.stringify(events)).toBe(JSON.stringify(recordedEvents).replaceAll(parent.runId, imported.runId));
    // Tenant-scoped: the tenant it came from does not see it.
    await expect(ownRun(ports, parent.tenantId, imported.runId)).rejects.toMatchObject({ statusCode: 404 });

    const replay = await replayRun(ports, imported, {}, links);
    await drivePlanSolve(ports, replay.runId);
    expect(model.requests.length).toBe(recordedCalls);
    expect(counts).toEqual({ calculator: 3, writes: 1 });
    const comparison = await compareReplay(ports, (await ports.runs.get(replay.runId))!);
    expect(comparison, JSON.stringify(comparison, null, 1)).toMatchObject({ status: "identical", replayOf: imported.runId });
  });

  it.each([
    ["not an export", () => "runs.json", 400, "body"],
    ["another format", (d: any) => ({ ...d, format: "stepwise.run/0" }), 400, "format"],
    ["a run record that does not fit", (d: any) => ({ ...d, run: { ...d.run, status: "done" } }), 400, "run.status"],
    ["a run id that is none", (d: any) => ({ ...d, run: { ...d.run, runId: "" } }), 400, "run.runId"],
    [
      "an event that does not fit",
      (d: any) => ({ ...d, events: [{ seq: 1, at: "x", type: "run.exploded", data: {} }, ...d.events] }),
      400,
      "events.0",
    ],
    ["a run still in flight", (d: any) => ({ ...d, run: { ...d.run, status: "running" } }), 400, "only an ended run can be imported"],
    ["events without their end", (d: any) => ({ ...d, events: d.events.slice(0, -1) }), 400, "terminal event"],
    [
      "a journal without a model call",
      (d: any) => ({ ...d, journal: d.journal.filter((r: any) => r.kind !== "llm") }),
      400,
      "no model call",
    ],
  ])("refuses %s with %i naming the problem, and records nothing", async (_, edit, status, message) => {
    const { ports, fakes, parent, document } = await exported();
    await expect(importRun(ports, "t_elsewhere", edit(document), links)).rejects.toMatchObject({
      statusCode: status,
      message: expect.stringContaining(message),
    });
    expect([...fakes.runs.records.keys()]).toEqual([parent.runId]);
    expect([...fakes.journal.records.keys()]).toEqual([parent.runId]);
    expect([...fakes.events.logs.keys()]).toEqual([parent.runId]);
  });
});
