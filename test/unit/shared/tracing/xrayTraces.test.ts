import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wire } from "../../../../functions/wiring.js";
import type { RunRecord } from "../../../../shared/contracts/run.js";
import type { TraceExport } from "../../../../shared/ports/traces.js";
import { onExecutionStatus } from "../../../../shared/run/endAndNotify.js";
import { runSpans } from "../../../../shared/run/runTrace.js";
import { settingsFromEnv } from "../../../../shared/settings.js";
import { XRayTraces, xrayTraceId } from "../../../../shared/tracing/xrayTraces.js";
import { drivePlanSolve } from "../../../support/driveRun.js";
import { withRun } from "../../../support/memoryRun.js";
import { type SegmentDocument, startXrayDaemon, type XrayDaemon } from "../../../support/xrayDaemon.js";

/**
 * A run's GenAI spans in X-Ray: a plan_solve run driven through its steps on the in-memory ports
 * ends, the notifier sends its trace through the X-Ray SDK to a real UDP listener standing in for
 * the daemon, and what arrives is the run's trace (`GET /v1/runs/{id}/trace`) in X-Ray's terms.
 */

let daemon: XrayDaemon;
beforeAll(async () => {
  daemon = await startXrayDaemon();
});
afterAll(() => daemon?.close());

const ended = (run: RunRecord) => ({
  "detail-type": "Step Functions Execution Status Change" as const,
  source: "aws.states" as const,
  detail: { executionArn: run.executionArn, stateMachineArn: "arn:sm", name: run.runId, status: "SUCCEEDED" as const },
});

/** A plan_solve run, ended, its execution's end reported to the notifier that sends traces to the daemon. */
async function endedRun(traces: TraceExport = new XRayTraces(daemon.address)) {
  const fixture = await withRun({ requestedMode: "plan_solve" });
  const ports = { ...fixture.ports, traces };
  await drivePlanSolve(ports, fixture.runId);
  const run = (await ports.runs.get(fixture.runId))!;
  expect(run.status).toBe("succeeded");
  await onExecutionStatus(ports, ended(run));
  const spans = await runSpans(ports, run);
  const documents = await daemon.trace(xrayTraceId(spans[0].traceId), spans.length);
  return { run, spans, documents };
}

describe("a run's GenAI spans in X-Ray", () => {
  it("arrive as one segment per span over the daemon's protocol: the run a segment, each other span a subsegment naming its parent", async () => {
    const { run, spans, documents } = await endedRun();
    expect(daemon.problems).toEqual([]);
    // Tool calls and model replies, nested under the executors of the run's tasks.
    expect(spans.filter((s) => s.name.startsWith("execute_tool ")).length).toBeGreaterThan(0);
    expect(spans.filter((s) => s.name === "invoke_agent executor").length).toBeGreaterThan(0);
    expect(documents).toHaveLength(spans.length);
    for (const d of documents) expect(d.header).toEqual({ format: "json", version: 1 });
    const byId = new Map(documents.map((d) => [d.id, d]));
    const traceId = documents[0].trace_id;
    expect(traceId).toMatch(/^1-[0-9a-f]{8}-[0-9a-f]{24}$/);
    // The trace id's first part is the run's start, in epoch seconds (X-Ray's rule).
    expect(Number.parseInt(traceId.slice(2, 10), 16)).toBe(Math.floor(Date.parse(run.createdAt) / 1000));
    for (const span of spans) {
      const doc = byId.get(span.spanId);
      expect(doc, span.name).toBeDefined();
      expect(doc).toMatchObject({ name: span.name, trace_id: traceId, start_time: Date.parse(span.startTime) / 1000 });
      expect(doc!.end_time).toBe(Date.parse(span.endTime) / 1000);
      expect(doc!.end_time!).toBeGreaterThanOrEqual(doc!.start_time);
      expect(doc!.in_progress).toBeUndefined();
      expect(doc!.subsegments).toBeUndefined();
      if (span.parentSpanId) expect(doc).toMatchObject({ type: "subsegment", parent_id: span.parentSpanId });
      else expect(doc!.type).toBeUndefined();
      // Every attribute under its OpenTelemetry name.
      expect(Object.keys(doc!.metadata?.default ?? {}).sort()).toEqual(Object.keys(span.attributes).sort());
      expect(doc!.namespace).toBe(span.kind === "client" ? "remote" : undefined);
    }
    // The nesting: run → executor → its replies and tool calls.
    const root = documents.find((d) => !d.parent_id)!;
    expect(root.name).toBe("invoke_agent stepwise plan_solve");
    const parentName = (d: SegmentDocument) => byId.get(d.parent_id!)?.name;
    for (const d of documents.filter((d) => d.name === "invoke_agent executor")) expect(d.parent_id).toBe(root.id);
    for (const d of documents.filter((d) => d.name.startsWith("execute_tool ") || d.name.startsWith("chat ")))
      expect(["invoke_agent executor", root.name]).toContain(parentName(d));
    expect(documents.filter((d) => d.name.startsWith("execute_tool ")).map(parentName)).toContain("invoke_agent executor");
  });

  it("the run's attributes are also annotations, their keys in X-Ray's alphabet, so traces can be searched", async () => {
    const { run, documents } = await endedRun();
    const root = documents.find((d) => !d.parent_id)!;
    expect(root.annotations).toMatchObject({
      gen_ai_operation_name: "invoke_agent",
      gen_ai_conversation_id: run.sessionId,
      stepwise_run_id: run.runId,
      gen_ai_usage_input_tokens: run.usage.promptTokens,
    });
    for (const d of documents) for (const key of Object.keys(d.annotations ?? {})) expect(key).toMatch(/^[A-Za-z0-9_]{1,500}$/);
    expect(root.metadata?.default?.["gen_ai.agent.name"]).toBe("stepwise plan_solve");
  });

  it("a failed span carries X-Ray's fault and its error type; a long text is cut to fit a datagram", async () => {
    const traces = new XRayTraces(daemon.address);
    const long = "数".repeat(30_000);
    const base = {
      traceId: `${(1_800_000_000).toString(16)}${"ab".repeat(12)}`,
      kind: "internal" as const,
      startTime: "2027-01-15T08:00:00.000Z",
    };
    await traces.send([
      {
        ...base,
        spanId: "1111111111111111",
        name: "invoke_agent stepwise react",
        endTime: "2027-01-15T08:00:09.500Z",
        attributes: {},
        status: { code: "unset" },
      },
      {
        ...base,
        spanId: "2222222222222222",
        parentSpanId: "1111111111111111",
        name: "execute_tool billing__send_invoice",
        endTime: "2027-01-15T08:00:02.250Z",
        attributes: { "gen_ai.tool.call.result": long, "error.type": "unauthorized" },
        status: { code: "error", message: "HTTP 401: key expired" },
      },
    ]);
    const [, tool] = (await daemon.trace(xrayTraceId(base.traceId), 2)).sort((a, b) => (a.parent_id ? 1 : b.parent_id ? -1 : 0));
    expect(tool).toMatchObject({ fault: true, cause: { exceptions: [{ message: "HTTP 401: key expired", type: "unauthorized" }] } });
    expect(tool.end_time! - tool.start_time).toBeCloseTo(2.25, 3);
    const result = tool.metadata?.default?.["gen_ai.tool.call.result"] as string;
    expect(result.length).toBeLessThan(long.length);
    expect(result.startsWith("数".repeat(100))).toBe(true);
  });
});

describe("where an ended run's spans go", () => {
  const tracesOf = (env: Record<string, string>) => wire({ ports: ["traces"] }, {}, { env: { TABLE_NAME: "t", ...env } }).traces;

  it("to the X-Ray daemon AWS_XRAY_DAEMON_ADDRESS names (Lambda names its own); nowhere, reading nothing, without one", async () => {
    // The wired port loads the X-Ray SDK on its first send; every span of the run reaches the daemon.
    for (const address of [daemon.address, `tcp:${daemon.address} udp:${daemon.address}`]) {
      const traces = tracesOf({ AWS_XRAY_DAEMON_ADDRESS: address });
      expect(traces.active).toBe(true);
      const { spans, documents } = await endedRun(traces);
      expect(documents.map((d) => d.id).sort()).toEqual(spans.map((s) => s.spanId).sort());
    }
    const nowhere = tracesOf({});
    expect(nowhere.active).toBe(false);
    const { ports, fakes, run } = await withRun({ status: "succeeded" });
    const reads = fakes.events.list.bind(fakes.events);
    let listed = 0;
    fakes.events.list = (...args) => {
      listed++;
      return reads(...args);
    };
    await onExecutionStatus({ ...ports, events: fakes.events, traces: nowhere }, ended(run));
    expect(listed).toBe(0);
  });

  it("an address that is not one is refused at start, naming the variable", () => {
    for (const bad of ["localhost", "udp:127.0.0.1:2000", "127.0.0.1:port", "127.0.0.1:2000 junk"])
      expect(() => settingsFromEnv({ TABLE_NAME: "t", AWS_XRAY_DAEMON_ADDRESS: bad }), bad).toThrow(/AWS_XRAY_DAEMON_ADDRESS is host:port/);
  });
});
