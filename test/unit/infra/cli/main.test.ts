import { describe, expect, it } from "vitest";
import { parseFailureDecision, parseJsonObject, parseYesNo } from "../../../../infra/cli/approvals.js";
import { parseCommandLine, UsageError } from "../../../../infra/cli/args.js";
import { Renderer, useColor, webhookDeliveries } from "../../../../infra/cli/render.js";
import type { RunEvent } from "../../../../shared/contracts/events.js";
import type { Plan } from "../../../../shared/contracts/plan.js";
import { calculatorRunEvents } from "../../../support/sampleRun.js";

const sampleEvents = calculatorRunEvents("17*23 = 391 — ünïcødé ✓\nsecond line");

const plan: Plan = {
  title: "Plan for: the facts",
  steps: [
    {
      title: "Gather the facts",
      tasks: ["Evaluate 17*23 with the calculator", "Evaluate (120/8)+2^5 with the calculator"],
      status: "completed",
    },
    { title: "Write the report", tasks: ["Write report.md"], status: "in_progress" },
    { title: "Proofread", tasks: ["Read it again"], status: "not_started" },
    { title: "Publish", tasks: ["Send it"], status: "blocked", notes: "waiting for a key" },
  ],
  finished: false,
};
const planEvent: RunEvent = { type: "plan.updated", data: { plan }, seq: 5, at: "2026-01-01T00:00:00.000Z" };

describe("Renderer", () => {
  it("a plan.updated event renders each step with its status marker, tasks the first time", () => {
    const renderer = new Renderer({ color: false });
    const lines = renderer.event(planEvent);
    expect(lines).toContain("Plan: Plan for: the facts");
    expect(lines).toContain("  [x] 1. Gather the facts");
    expect(lines).toContain("  [>] 2. Write the report");
    expect(lines).toContain("  [ ] 3. Proofread");
    expect(lines).toContain("  [!] 4. Publish");
    expect(lines.join("\n")).toContain("- Evaluate 17*23 with the calculator");
    expect(lines.join("\n")).toContain("notes: waiting for a key");
    expect(lines.join("\n")).not.toContain("\x1b[");
    // The same plan again (only statuses changed): steps without their tasks.
    const next = renderer.event({
      ...planEvent,
      seq: 6, // a later event: the renderer folds each event once
      data: { plan: { ...plan, steps: plan.steps.map((s) => ({ ...s, status: "completed" as const })), finished: true } },
    });
    expect(next).toContain("  [x] 4. Publish");
    expect(next.join("\n")).not.toContain("Evaluate 17*23");
    expect(next.join("\n")).toContain("(finished)");
  });

  it("tasks, tool calls and results, thoughts, interrupts and the answer read as lines", () => {
    const renderer = new Renderer({ color: false });
    const at = "2026-01-01T00:00:00.000Z";
    let seq = 0; // each event a later one: the renderer folds each event once
    const render = (event: Omit<RunEvent, "seq" | "at">) => renderer.event({ ...event, seq: ++seq, at } as RunEvent).join("\n");
    expect(render({ type: "task.started", data: { taskId: "t2", title: "Evaluate (120/8)+2^5", iteration: 0, stepIndex: 0 } })).toBe(
      "▶ t2 started (step 1): Evaluate (120/8)+2^5",
    );
    expect(render(sampleEvents[1]!)).toBe('  [t1] → calculator {"expression":"17*23"}');
    expect(render(sampleEvents[2]!)).toBe("  [t1] ← 17*23 = 391");
    expect(
      render({
        type: "tool.called",
        data: {
          agent: "executor",
          taskId: "t2",
          callId: "c2",
          tool: "everything__add",
          arguments: { a: 2, b: 3 },
          persona: "Financial analyst",
        },
      }),
    ).toBe('  [t2] → everything__add (Financial analyst) {"a":2,"b":3}');
    expect(
      render({ type: "tool_source.unavailable", data: { source: "crm", reason: "Its tools are left out of this run: HTTP 503" } }),
    ).toBe("⚠ tool source crm unavailable: Its tools are left out of this run: HTTP 503");
    expect(
      render({
        type: "tool.result",
        data: { agent: "react", callId: "c", tool: "calculator", ok: false, output: "Error: division by zero" },
      }),
    ).toBe("  [react] ✗ calculator: Error: division by zero");
    expect(render({ type: "agent.thought", data: { agent: "planner", text: "Plan recorded." } })).toBe("  [planner] Plan recorded.");
    expect(
      render({ type: "task.completed", data: { taskId: "t1", title: "x", iteration: 0, status: "failed", result: "no tool fits" } }),
    ).toBe("✗ t1 failed: no tool fits");
    // A task whose write a person rejected answered, but is not done: it says so, and why.
    expect(
      render({
        type: "task.completed",
        data: {
          taskId: "t3",
          title: "Write the report",
          iteration: 0,
          status: "succeeded",
          result: "Rejected by the user: not today.",
          undone: [{ tool: "write_artifact", decision: "reject" }],
        },
      }),
    ).toBe("⊘ t3 not done (the user rejected write_artifact): Rejected by the user: not today.");
    // Its step, met as far as it could be, says how many of its tasks were left undone.
    const step = {
      title: "Write",
      tasks: ["Write report.md"],
      status: "completed" as const,
      verdict: { met: true, reason: "1 left undone" },
      undone: 1,
    };
    expect(render({ type: "plan.updated", data: { plan: { title: "P", steps: [step], finished: false } } })).toContain(
      "  [x] 1. Write (1 task(s) not done: the user declined a tool call)\n         - Write report.md\n         done when met as far as it could be: 1 left undone",
    );
    expect(
      render({
        type: "interrupt.opened",
        data: {
          interruptId: "int_1",
          kind: "tool_approval",
          summary: "",
          taskId: "t1",
          toolName: "write_artifact",
          arguments: { filename: "a.md" },
        },
      }),
    ).toContain("? t1 wants to run write_artifact (int_1)\n    filename: a.md");
    expect(
      render({
        type: "file.created",
        data: {
          name: "report.md",
          contentType: "text/markdown",
          bytes: 133,
          description: "Report",
          download: "/v1/runs/run_1/files/report.md",
        },
      }),
    ).toBe("  + file report.md (133 bytes, text/markdown)");
    expect(render({ type: "run.resumed", data: { redrive: false, reason: "Stepwise restarted" } })).toBe(
      "Run resumed: Stepwise restarted.",
    );
    expect(
      render({
        type: "interrupt.resolved",
        data: { interruptId: "int_1", kind: "plan_approval", decision: "reject", message: "too long" },
      }),
    ).toBe("✗ rejected (plan): too long");
    expect(render(sampleEvents[3]!)).toContain("Answer:\n17*23 = 391 — ünïcødé ✓\nsecond line");
    expect(render({ type: "run.failed", data: { error: { code: "agent_error", message: "boom" } } })).toContain(
      "✗ The run failed (agent_error): boom",
    );
  });

  it("colours only when asked to, and never with NO_COLOR", () => {
    expect(new Renderer({ color: true }).event(planEvent).join("\n")).toContain("\x1b[");
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: true }, { NO_COLOR: "1" })).toBe(false);
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({}, {})).toBe(false);
  });
});

describe("command line", () => {
  it("run: the task and options become the request body; URL and key fall back to the environment", () => {
    const command = parseCommandLine(
      [
        "run",
        "Compute 17*23",
        "--mode",
        "plan_solve",
        "--deep-think",
        "--session",
        "ses_1",
        "--approve-plan",
        "--approve-tools",
        "write",
        "--yes",
        "--json",
      ],
      { STEPWISE_URL: "https://api.example.com/", STEPWISE_API_KEY: "sk_env" },
    );
    expect(command).toEqual({
      name: "run",
      conn: { url: "https://api.example.com", apiKey: "sk_env", urlFromFlag: false },
      task: "Compute 17*23",
      body: { input: "Compute 17*23", mode: "plan_solve", deepThink: true, sessionId: "ses_1", approval: { plan: true, tools: "write" } },
      yes: true,
      json: true,
      uploads: [],
    });
    expect(parseCommandLine(["replay", "--dir", "recorded"], {})).toMatchObject({ name: "replay", dir: "recorded" });
    expect(parseCommandLine(["run", "Analyse it", "--file", "a.csv", "--file", "b.csv"], {})).toMatchObject({
      uploads: ["a.csv", "b.csv"],
    });
    expect(parseCommandLine(["run", "Then 5*5", "--session", "chat-1", "--multitask", "enqueue"], {})).toMatchObject({
      body: { sessionId: "chat-1", multitask: "enqueue" },
    });
    expect(parseCommandLine(["watch", "run_1", "--url", "http://x:1", "--api-key", "k"], { STEPWISE_API_KEY: "env" })).toMatchObject({
      name: "watch",
      runId: "run_1",
      conn: { url: "http://x:1", apiKey: "k", urlFromFlag: true },
    });
    expect(parseCommandLine(["run", "What", "is", "2+2?"], {})).toMatchObject({
      conn: { url: "http://127.0.0.1:3000" },
      body: { input: "What is 2+2?", mode: "auto" },
    });
    expect(parseCommandLine([], {})).toEqual({ name: "help" });
    expect(parseCommandLine(["run", "--help"], {})).toEqual({ name: "help" });
  });

  it("run --agent and --instructions name a saved agent and the run's instructions; agents takes list, get, save and delete", () => {
    expect(parseCommandLine(["run", "Sum it", "--agent", "analyst@2", "--instructions", "Answer in French."], {})).toMatchObject({
      body: { input: "Sum it", agent: "analyst@2", instructions: "Answer in French." },
    });
    expect(parseCommandLine(["agents"], {})).toMatchObject({ name: "agents", action: "list" });
    expect(parseCommandLine(["agents", "get", "analyst@3"], {})).toMatchObject({ action: "get", agent: "analyst@3" });
    expect(parseCommandLine(["agents", "save", "analyst", '{"mode": "react", "tools": ["calculator"]}'], {})).toMatchObject({
      action: "save",
      agent: "analyst",
      config: { mode: "react", tools: ["calculator"] },
    });
    expect(parseCommandLine(["agents", "delete", "analyst"], {})).toMatchObject({ action: "delete", agent: "analyst" });
  });

  it.each([
    [["agents", "save", "analyst", "{not json"]],
    [["agents", "save", "analyst"]],
    [["agents", "rename", "analyst"]],
    [["agents", "--agent", "x"]],
    [["frob"]],
    [["run"]],
    [["run", "x", "--mode", "fast"]],
    [["run", "x", "--approve-tools", "some"]],
    [["run", "x", "--session", "s", "--multitask", "later"]],
    [["run", "x", "--multitask", "enqueue"]],
    [["list", "--multitask", "enqueue"]],
    [["run", "x", "--bogus"]],
    [["watch"]],
    [["watch", "a", "b"]],
    [["get", "run_1", "--yes"]],
    [["watch", "run_1", "--mode", "react"]],
    [["run", "x", "--url", "not a url"]],
    [["trace", "run_1", "--otlp", "a.json", "--otlp-endpoint", "http://localhost:4318"]],
    [["trace", "run_1", "--otlp-endpoint", "localhost:4318"]],
    [["get", "run_1", "--otlp", "a.json"]],
    [["replay", "run_1", "--dir", "recorded"]],
    [["get", "run_1", "--dir", "recorded"]],
    [["watch", "run_1", "--task", "s1.t1"]],
    [["replay"]],
  ])("%j is a usage error", (argv) => {
    expect(() => parseCommandLine(argv, {})).toThrow(UsageError);
  });

  it("get takes --task to print one task's whole result instead of the run", () => {
    expect(parseCommandLine(["get", "run_1", "--task", "s1.t2"], {})).toMatchObject({ name: "get", runId: "run_1", task: "s1.t2" });
    expect(parseCommandLine(["get", "run_1"], {})).not.toHaveProperty("task");
  });

  it("trace prints the run's OTLP/JSON, saves it (--otlp) or sends it to a collector (--otlp-endpoint)", () => {
    expect(parseCommandLine(["trace", "run_1"], {})).toMatchObject({ name: "trace", runId: "run_1" });
    expect(parseCommandLine(["trace", "run_1", "--otlp", "run.json"], {})).toMatchObject({ file: "run.json" });
    expect(parseCommandLine(["trace", "run_1", "--otlp-endpoint", "http://localhost:4318"], {})).toMatchObject({
      endpoint: "http://localhost:4318",
    });
  });

  it("failed tool call answers", () => {
    expect(parseFailureDecision("r")).toEqual({ decision: "retry" });
    expect(parseFailureDecision("retry")).toEqual({ decision: "retry" });
    expect(parseFailureDecision("s: billing is closed")).toEqual({ decision: "skip", message: "billing is closed" });
    expect(parseFailureDecision("fail wrong customer")).toEqual({ decision: "fail", message: "wrong customer" });
    expect(parseFailureDecision("maybe")).toBeUndefined();
  });

  it("approval answers", () => {
    expect(parseYesNo("y")).toEqual({ decision: "approve" });
    expect(parseYesNo(" YES ")).toEqual({ decision: "approve" });
    expect(parseYesNo("n")).toEqual({ decision: "reject" });
    expect(parseYesNo("no: too many steps")).toEqual({ decision: "reject", message: "too many steps" });
    expect(parseYesNo("n skip the report")).toEqual({ decision: "reject", message: "skip the report" });
    expect(parseYesNo("maybe")).toBeUndefined();
    expect(parseYesNo("nope")).toBeUndefined();
    expect(parseJsonObject('{"a": 1}')).toEqual({ a: 1 });
    expect(parseJsonObject("[1]")).toEqual(expect.stringContaining("JSON object"));
    expect(parseJsonObject("{a")).toEqual(expect.stringContaining("not JSON"));
  });
});

describe("each fact once", () => {
  const at = "2026-01-01T00:00:00.000Z";
  const feed = (renderer: Renderer, items: Omit<RunEvent, "seq" | "at">[]) =>
    items.flatMap((e, i) => renderer.event({ ...e, seq: i + 1, at } as RunEvent));

  it("shows streamed text once, as the deltas said it; the thought after it adds nothing", () => {
    const lines = feed(new Renderer({ color: false }), [
      { type: "agent.delta", data: { agent: "executor", taskId: "t1", text: "Done. 17*" } },
      { type: "agent.delta", data: { agent: "executor", taskId: "t2", text: "Done. 47" } },
      { type: "agent.delta", data: { agent: "executor", taskId: "t1", text: "23 = 391" } },
      { type: "agent.thought", data: { agent: "executor", taskId: "t1", text: "Done. 17*23 = 391" } },
      { type: "task.completed", data: { taskId: "t1", title: "x", iteration: 0, status: "succeeded", result: "Done. 17*23 = 391" } },
      { type: "agent.thought", data: { agent: "executor", taskId: "t2", text: "Done. 47" } },
      { type: "task.completed", data: { taskId: "t2", title: "y", iteration: 0, status: "succeeded", result: "Done. 47" } },
    ]);
    expect(lines).toEqual(["  [t1] Done. 17*23 = 391", "  [t2] Done. 47", "✓ t1 done", "✓ t2 done"]);
  });

  it("shows a model's reasoning collapsed to one line before the text it led to", () => {
    const lines = feed(new Renderer({ color: false }), [
      { type: "agent.reasoning", data: { agent: "summarizer", text: "The user wants totals. " } },
      { type: "agent.reasoning", data: { agent: "summarizer", text: "North leads." } },
      { type: "agent.delta", data: { agent: "summarizer", text: "North: 220" } },
      { type: "run.succeeded", data: { result: "North: 220", files: [] } },
    ]);
    expect(lines[0]).toBe("  [summarizer] ▸ reasoning (35 characters): The user wants totals. North leads.");
    expect(lines[1]).toBe("  [summarizer] North: 220");
  });

  it("without deltas, the thought is the text; without either, the task's result is on its line", () => {
    const lines = feed(new Renderer({ color: false }), [
      { type: "agent.thought", data: { agent: "planner", text: "Plan recorded." } },
      { type: "task.completed", data: { taskId: "t3", title: "z", iteration: 0, status: "succeeded", result: "42" } },
    ]);
    expect(lines).toEqual(["  [planner] Plan recorded.", "✓ t3 done: 42"]);
  });

  it("deltas with no thought after them still show, when the agent moves on or the stream ends", () => {
    const renderer = new Renderer({ color: false });
    const lines = feed(renderer, [
      { type: "agent.delta", data: { agent: "react", text: "Let me compute." } },
      { type: "tool.called", data: { agent: "react", callId: "c1", tool: "calculator", arguments: { expression: "1+1" } } },
      { type: "agent.delta", data: { agent: "react", text: "It is 2." } },
    ]);
    expect(lines).toEqual(["  [react] Let me compute.", '  [react] → calculator {"expression":"1+1"}']);
    expect(renderer.flushAll()).toEqual(["  [react] It is 2."]);
  });

  it("ties each file to the task that wrote it: as it is written, when the task ends, and after the run", () => {
    const renderer = new Renderer({ color: false });
    const download = "/v1/runs/r/files/a.md";
    expect(
      feed(renderer, [
        {
          type: "file.created",
          data: { name: "a.md", contentType: "text/markdown", bytes: 3, description: "", download, taskId: "s1.t1" },
        },
        { type: "file.created", data: { name: "answer.md", contentType: "text/markdown", bytes: 9, description: "", download } },
        {
          type: "task.completed",
          data: { taskId: "s1.t1", title: "x", iteration: 0, status: "succeeded", result: "Saved.", files: ["a.md"] },
        },
      ]),
    ).toEqual([
      "  [s1.t1] + file a.md (3 bytes, text/markdown)",
      "  + file answer.md (9 bytes, text/markdown)",
      "✓ s1.t1 done (files: a.md): Saved.",
    ]);
    const run = {
      files: [
        { name: "a.md", bytes: 3, taskId: "s1.t1" },
        { name: "b.md", bytes: 4, taskId: "s1.t2" },
        { name: "data.csv", bytes: 5 },
      ],
      tasks: [
        { taskId: "s1.t1", title: "Write a" },
        { taskId: "s1.t2", title: "Write b" },
      ],
      usage: {},
      result: "",
    } as any;
    expect(renderer.summary(run).filter((l) => l.startsWith("Files"))).toEqual([
      "Files: data.csv (5 bytes)",
      "Files of s1.t1 (Write a): a.md (3 bytes)",
      "Files of s1.t2 (Write b): b.md (4 bytes)",
    ]);
  });

  it("a retried reply: each retry on a line, the broken text never shown, the retried text once", () => {
    const retry = { attempt: 1, retries: 3, reason: "the reply broke off (terminated)", waitMs: 500 };
    const lines = feed(new Renderer({ color: false }), [
      { type: "agent.delta", data: { agent: "router", text: '[{"name":"choose_mode","argum' } },
      { type: "agent.withdrawn", data: { agent: "router", reason: retry.reason } },
      { type: "model.retrying", data: { agent: "router", ...retry } },
      { type: "agent.delta", data: { agent: "router", text: "The whole answer." } },
      { type: "run.succeeded", data: { result: "The whole answer.", files: [] } },
    ]);
    expect(lines.join("\n")).not.toContain("choose_mode");
    expect(lines.slice(0, 2)).toEqual([
      "  [router] ↻ model call failed (the reply broke off (terminated)); retry 1 of 3 in 0.5 s",
      "  [router] The whole answer.",
    ]);
  });

  it("a reply withdrawn after its text was shown says the text above is void", () => {
    const renderer = new Renderer({ color: false });
    const lines = feed(renderer, [
      { type: "agent.delta", data: { agent: "summarizer", text: "North: 2" } },
      { type: "run.resumed", data: { redrive: false } }, // a run-level event shows what is held
      { type: "agent.withdrawn", data: { agent: "summarizer", reason: "the reply broke off" } },
    ]);
    expect(lines).toEqual(["  [summarizer] North: 2", "Run resumed.", "  [summarizer] ↺ the text above is withdrawn: its reply broke off"]);
  });

  it("does not list files the answer already names", () => {
    const renderer = new Renderer({ color: false });
    feed(renderer, [{ type: "run.succeeded", data: { result: "Done.\nFiles: report.md", files: ["report.md"] } }]);
    const run = {
      files: [
        { name: "report.md", bytes: 10 },
        { name: "data.csv", bytes: 5 },
      ],
      usage: {},
      result: "",
    } as any;
    expect(renderer.summary(run).filter((l) => l.startsWith("Files:"))).toEqual(["Files: data.csv (5 bytes)"]);
  });

  it("names a fork's parent and fork point, and lists a parent's forks", () => {
    const renderer = new Renderer({ color: false });
    const fork = {
      files: [],
      usage: {},
      result: "",
      forkOf: { runId: "run_parent", at: { scope: "task#1#s2.t1", round: 1 } },
      forks: [],
    } as any;
    expect(renderer.summary(fork)).toContain("Forked from run_parent at task#1#s2.t1 round 1");
    const parent = {
      files: [],
      usage: {},
      result: "",
      forks: [
        { runId: "run_a", at: { scope: "plan#0", round: 1 }, status: "succeeded", createdAt: "2026-11-28T06:00:00.000Z" },
        { runId: "run_b", at: { scope: "task#1#s2.t1", round: 1 }, status: "running", createdAt: "2026-11-28T06:01:00.000Z" },
      ],
    } as any;
    const lines = renderer.summary(parent);
    expect(lines).toContain("Forks: run_a (at plan#0 round 1, succeeded), run_b (at task#1#s2.t1 round 1, running)");
    expect(lines.some((l) => l.startsWith("Forked from"))).toBe(false);
  });
});

describe("command line: list, cancel, decide, open", () => {
  const env = { STEPWISE_URL: "http://x:1", STEPWISE_API_KEY: "k" };
  it.each([
    [["list"], { name: "list", query: { limit: 20 } }],
    [
      ["list", "--status", "awaiting_input", "--session", "ses_1", "--limit", "5"],
      { name: "list", query: { status: "awaiting_input", sessionId: "ses_1", limit: 5 } },
    ],
    [["cancel", "run_1"], { name: "cancel", runId: "run_1" }],
    [["open", "run_1"], { name: "open", runId: "run_1" }],
    [["decide", "run_1", "int_1", "approve"], { name: "decide", runId: "run_1", interruptId: "int_1", body: { decision: "approve" } }],
    [
      ["decide", "run_1", "int_1", "reject", "no", "files", "today"],
      { name: "decide", body: { decision: "reject", message: "no files today" } },
    ],
    [["decide", "run_1", "int_1", "answer", "Paris"], { name: "decide", body: { decision: "answer", message: "Paris" } }],
    [
      ["decide", "run_1", "int_1", "edit", "--arguments", '{"filename":"a.md"}'],
      { name: "decide", body: { decision: "edit", arguments: { filename: "a.md" } } },
    ],
  ])("%j", (argv, expected) => {
    expect(parseCommandLine(argv, env)).toMatchObject(expected);
  });

  it.each([
    [["list", "--status", "done"], "--status is one of"],
    [["list", "--limit", "0"], "--limit is a whole number"],
    [["list", "extra"], "takes no arguments"],
    [["cancel"], "takes one run id"],
    [["decide", "run_1", "int_1"], "takes a run id, an interrupt id and a decision"],
    [["decide", "run_1", "int_1", "maybe"], "The decision is one of"],
    [["decide", "run_1", "int_1", "answer"], "'answer' needs the answer"],
    [["decide", "run_1", "int_1", "edit"], "'edit' needs the new arguments"],
    [["decide", "run_1", "int_1", "edit", "--arguments", "{nope"], "--arguments is not JSON"],
    [["decide", "run_1", "int_1", "approve", "--arguments", "{}"], "--arguments goes with 'edit'"],
    [["cancel", "run_1", "--status", "failed"], "--status goes with 'list'"],
  ])("%j is a usage error", (argv, message) => {
    expect(() => parseCommandLine(argv, env)).toThrow(UsageError);
    expect(() => parseCommandLine(argv, env)).toThrow(message);
  });
});

describe("stepwise webhooks", () => {
  const env = { STEPWISE_API_KEY: "sk_x" };

  it("takes one run id", () => {
    expect(parseCommandLine(["webhooks", "run_abc"], env)).toMatchObject({ name: "webhooks", runId: "run_abc" });
    expect(() => parseCommandLine(["webhooks"], env)).toThrow(UsageError);
  });

  it("prints each delivery's state, when its next retry is due, and every attempt", () => {
    const now = Date.parse("2026-11-28T05:00:00Z");
    const text = webhookDeliveries(
      {
        runId: "run_abc",
        webhook: { url: "https://hooks.example/stepwise" },
        deliveries: [
          {
            deliveryId: "msg_1",
            runId: "run_abc",
            type: "run.succeeded",
            url: "https://hooks.example/stepwise",
            status: "pending",
            attempts: [
              { attempt: 1, at: "2026-11-28T04:59:50Z", ok: false, status: 500, error: "HTTP 500", durationMs: 12 },
              { attempt: 2, at: "2026-11-28T04:59:55Z", ok: false, error: "timed out after 10000 ms", durationMs: 10_000 },
            ],
            nextAttemptAt: "2026-11-28T05:00:25Z",
            createdAt: "2026-11-28T04:59:50Z",
            updatedAt: "2026-11-28T04:59:55Z",
          },
          {
            deliveryId: "msg_0",
            runId: "run_abc",
            type: "run.awaiting_input",
            url: "https://hooks.example/stepwise",
            status: "delivered",
            attempts: [{ attempt: 1, at: "2026-11-28T04:59:00Z", ok: true, status: 204, durationMs: 8 }],
            createdAt: "2026-11-28T04:59:00Z",
            updatedAt: "2026-11-28T04:59:00Z",
          },
        ],
      },
      now,
    );
    expect(text).toBe(
      [
        "Webhook: https://hooks.example/stepwise",
        "run.succeeded: pending, 2 attempts, next retry in 25 s [msg_1]",
        "  2026-11-28T04:59:50Z  #1 ✗ HTTP 500 (12 ms)",
        "  2026-11-28T04:59:55Z  #2 ✗ timed out after 10000 ms (10000 ms)",
        "run.awaiting_input: delivered, 1 attempt [msg_0]",
        "  2026-11-28T04:59:00Z  #1 ✓ HTTP 204 (8 ms)",
        "",
      ].join("\n"),
    );
    expect(webhookDeliveries({ runId: "run_x", webhook: null, deliveries: [] })).toBe("Run run_x has no webhook.\n");
  });
});
