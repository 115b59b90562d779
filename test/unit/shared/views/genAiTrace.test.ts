import { describe, expect, it } from "vitest";
import type { EventBody, RunEvent } from "../../../../shared/contracts/events.js";
import { GENAI_CONVENTIONS, genAiSpans, otlpJson } from "../../../../shared/views/genAiTrace.js";
import { CONVENTION_VERSION, conventionProblems, type OtlpSpan } from "../../../support/genAiConventions.js";
import { runRecord } from "../../../support/records.js";

/** A run's events as OpenTelemetry GenAI spans (OTLP/JSON), checked against the pinned convention. */

const at = (second: number) => new Date(Date.UTC(2026, 10, 28, 1, 0, second)).toISOString();
const log = (bodies: [number, EventBody][]): RunEvent[] =>
  bodies.map(([second, body], i) => ({ ...body, seq: i + 1, at: at(second) }) as RunEvent);
const executor = (taskId: string) => ({ agent: "executor" as const, taskId });

/** plan_solve: the planner plans; task t1 calls the billing tool, refused (401) then retried; t2 fails; the summary streams. */
const events = log([
  [0, { type: "run.started", data: { mode: "plan_solve", input: "Bill ACME and check the ledger" } }],
  [2, { type: "tool.called", data: { agent: "planner", callId: "p1", tool: "planning", arguments: { command: "create" } } }],
  [2, { type: "tool.result", data: { agent: "planner", callId: "p1", tool: "planning", ok: true, output: "Plan created." } }],
  [3, { type: "task.started", data: { taskId: "t1", title: "Bill ACME", iteration: 0, stepIndex: 0 } }],
  [3, { type: "task.started", data: { taskId: "t2", title: "Check the ledger", iteration: 0, stepIndex: 0 } }],
  [5, { type: "tool.called", data: { ...executor("t1"), callId: "c1", tool: "billing__send_invoice", arguments: { to: "acme" } } }],
  [6, { type: "agent.thought", data: { ...executor("t2"), text: "The ledger cannot be read." } }],
  [6, { type: "task.completed", data: { taskId: "t2", title: "Check the ledger", iteration: 0, status: "failed", result: "no ledger" } }],
  [
    7,
    {
      type: "interrupt.opened",
      data: {
        interruptId: "int_1",
        kind: "tool_failure",
        summary: "billing__send_invoice failed",
        taskId: "t1",
        toolName: "billing__send_invoice",
        callId: "c1",
        failure: { attempt: 1, error: "HTTP 401: key expired", reason: "unauthorized", status: 401 },
      },
    },
  ],
  [20, { type: "interrupt.resolved", data: { interruptId: "int_1", kind: "tool_failure", decision: "retry" } }],
  [21, { type: "tool.result", data: { ...executor("t1"), callId: "c1", tool: "billing__send_invoice", ok: true, output: "invoice sent" } }],
  [23, { type: "agent.delta", data: { ...executor("t1"), text: "Sent." } }],
  [24, { type: "task.completed", data: { taskId: "t1", title: "Bill ACME", iteration: 0, status: "succeeded", result: "Sent." } }],
  [26, { type: "agent.delta", data: { agent: "summarizer", text: "ACME is billed; " } }],
  [27, { type: "agent.delta", data: { agent: "summarizer", text: "the ledger failed." } }],
  [28, { type: "run.succeeded", data: { result: "ACME is billed; the ledger failed.", files: [] } }],
]);

const run = runRecord("run_trace", {
  mode: "plan_solve",
  requestedMode: "plan_solve",
  sessionId: "ses_1",
  usage: { promptTokens: 1200, completionTokens: 300, llmCalls: 5, toolCalls: 2 },
});
const models = { modelOf: (role: string) => (role === "executor" ? "gpt-4o-mini" : "gpt-4o") };
const trace = () => otlpJson(genAiSpans(run, events, models));
const spansOf = (json: ReturnType<typeof trace>) => json.resourceSpans[0].scopeSpans[0].spans as OtlpSpan[];
const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? value?.intValue;
};

describe("a run's GenAI spans", () => {
  it(`validate against the GenAI semantic conventions ${CONVENTION_VERSION}: names, kinds, attributes, ids`, () => {
    expect(GENAI_CONVENTIONS.version).toBe(CONVENTION_VERSION);
    const json = trace();
    expect(json.resourceSpans[0].scopeSpans[0].schemaUrl).toBe(`https://opentelemetry.io/schemas/${CONVENTION_VERSION}`);
    const spans = spansOf(json);
    expect(spans.flatMap(conventionProblems)).toEqual([]);
    expect(new Set(spans.map((s) => attr(s, "gen_ai.operation.name")))).toEqual(new Set(["invoke_agent", "chat", "execute_tool"]));
  });

  it("nest as the run did: the run, each task's executor under it, each reply and tool call under its agent", () => {
    const spans = spansOf(trace());
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const [root, ...rest] = spans;
    expect(root).toMatchObject({ name: "invoke_agent stepwise plan_solve", startTimeUnixNano: `${Date.parse(at(0))}000000` });
    expect(root.endTimeUnixNano).toBe(`${Date.parse(at(28))}000000`);
    expect(attr(root, "gen_ai.usage.input_tokens")).toBe("1200");
    expect(attr(root, "gen_ai.conversation.id")).toBe("ses_1");
    for (const span of rest) expect(byId.has(span.parentSpanId ?? "")).toBe(true);
    const tasks = spans.filter((s) => s.name === "invoke_agent executor");
    expect(tasks.map((s) => [attr(s, "stepwise.task.id"), s.parentSpanId, s.status.code ?? 0])).toEqual([
      ["t1", root.spanId, 0],
      ["t2", root.spanId, 2],
    ]);
    const parentTask = (span: OtlpSpan) => attr(byId.get(span.parentSpanId!)!, "stepwise.task.id");
    const chats = spans.filter((s) => s.name.startsWith("chat "));
    expect(chats.map((s) => [s.name, parentTask(s) ?? "run"])).toEqual([
      ["chat gpt-4o", "run"], // the planner's reply
      ["chat gpt-4o-mini", "t1"], // its call
      ["chat gpt-4o-mini", "t2"],
      ["chat gpt-4o-mini", "t1"], // its answer after the tool's result
      ["chat gpt-4o", "run"], // the summary, streamed
    ]);
    // A chat starts at its agent's last activity and ends with its reply.
    expect([chats[3].startTimeUnixNano, chats[3].endTimeUnixNano]).toEqual([`${Date.parse(at(21))}000000`, `${Date.parse(at(23))}000000`]);
    expect(chats[4].endTimeUnixNano).toBe(`${Date.parse(at(27))}000000`);
  });

  it("a call that failed for a reason a person could fix has a span per attempt, the failed one with its error.type", () => {
    const tools = spansOf(trace()).filter((s) => s.name === "execute_tool billing__send_invoice");
    expect(
      tools.map((s) => [attr(s, "gen_ai.tool.call.id"), attr(s, "error.type"), s.status.code ?? 0, attr(s, "stepwise.tool.attempt")]),
    ).toEqual([
      ["c1", "unauthorized", 2, "1"],
      ["c1", undefined, 0, "2"],
    ]);
    expect(attr(tools[1], "gen_ai.tool.type")).toBe("extension");
    expect(attr(tools[1], "gen_ai.tool.call.result")).toBe("invoice sent");
    expect(tools[1].startTimeUnixNano).toBe(`${Date.parse(at(20))}000000`);
    expect(new Set(tools.map((s) => s.spanId)).size).toBe(2);
  });

  it("is the same every time it is read (ids derive from the run)", () => {
    expect(trace()).toEqual(trace());
  });
});
