import { createHash } from "node:crypto";
import type { AgentRole, RunEvent } from "../contracts/events.js";
import type { RunRecord } from "../contracts/run.js";
import type { AttributeValue, GenAiSpan } from "../contracts/traces.js";

export type { AttributeValue, GenAiSpan };

/**
 * A run as OpenTelemetry spans following the GenAI semantic conventions, built from its events
 * alone, so any run (finished, waiting, years old) can be read by tools that speak OTLP (Langfuse,
 * Phoenix, AgentCore Evaluations, any OpenTelemetry collector):
 *
 * - one `invoke_agent` span for the run (the agent named after its mode or saved agent), and one
 *   for each plan task's executor, its child;
 * - a `chat` span per model reply, from the agent's last activity to the reply's last text or its
 *   tool calls (the events carry no per-reply token counts: the run's totals are on the run's span);
 * - an `execute_tool` span per tool call, from `tool.called` to `tool.result`; a call that failed
 *   for a reason a person could fix has a span per attempt, the failed one with its `error.type`.
 *
 * Pinned to one version of the conventions (GENAI_CONVENTIONS): the attribute names are that
 * version's; test/unit/shared/views/genAiTrace.test.ts checks every span against its list.
 */
export const GENAI_CONVENTIONS = { version: "1.41.0", schemaUrl: "https://opentelemetry.io/schemas/1.41.0" } as const;

export interface TraceOptions {
  /** The model each agent role calls (the role's setting, else the deployment's model). */
  modelOf: (role: AgentRole) => string;
  /** `gen_ai.provider.name`: Stepwise speaks the OpenAI Chat Completions API to every provider. */
  provider?: string;
}

const hex = (text: string, bytes: number) =>
  createHash("sha256")
    .update(text)
    .digest("hex")
    .slice(0, bytes * 2);

/** What an agent of the run is doing, while its events are read in order. */
interface AgentState {
  span: string;
  role: AgentRole;
  /** When its next model call started: its last activity. */
  idleSince: string;
  /** The chat span of the reply being received, if any. */
  reply?: GenAiSpan;
}

/** The run's spans, parents before children, from its record and its events in order. */
export function genAiSpans(
  run: Pick<RunRecord, "runId" | "sessionId" | "mode" | "requestedMode" | "agent" | "usage" | "createdAt">,
  events: RunEvent[],
  options: TraceOptions,
): GenAiSpan[] {
  // The run's start in epoch seconds, then its id's hash: X-Ray's trace id form (1-<start>-<rest>) as OpenTelemetry's.
  const startSeconds = Math.floor(Date.parse(run.createdAt) / 1000);
  const traceId = `${startSeconds.toString(16).padStart(8, "0")}${hex(run.runId, 12)}`;
  const provider = options.provider ?? "openai";
  const spans: GenAiSpan[] = [];
  const ids = new Map<string, number>();
  /** Deterministic ids: the same run gives the same trace every time it is read. */
  const spanId = (key: string) => {
    const n = (ids.get(key) ?? 0) + 1;
    ids.set(key, n);
    return hex(`${run.runId}|${key}|${n}`, 8);
  };
  const open = (span: Omit<GenAiSpan, "traceId" | "endTime" | "status">): GenAiSpan => {
    const full = { ...span, traceId, endTime: span.startTime, status: { code: "unset" as const } };
    spans.push(full);
    return full;
  };

  const mode = run.mode ?? run.requestedMode;
  const agentName = run.agent?.name ?? `stepwise ${mode}`;
  const start = events[0]?.at ?? run.createdAt;
  const root = open({
    spanId: spanId("run"),
    name: `invoke_agent ${agentName}`,
    kind: "internal",
    startTime: start,
    attributes: {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": provider,
      "gen_ai.agent.name": agentName,
      "gen_ai.conversation.id": run.sessionId,
      "gen_ai.request.model": options.modelOf(mode === "plan_solve" ? "planner" : "react"),
      "gen_ai.usage.input_tokens": run.usage.promptTokens,
      "gen_ai.usage.output_tokens": run.usage.completionTokens,
      "stepwise.run.id": run.runId,
      "stepwise.run.mode": mode,
    },
  });

  const agents = new Map<string, AgentState>();
  const agentOf = (role: AgentRole, taskId: string | undefined, at: string): AgentState => {
    const key = `${role}|${taskId ?? ""}`;
    let agent = agents.get(key);
    if (!agent) {
      agent = { span: root.spanId, role, idleSince: at };
      agents.set(key, agent);
    }
    return agent;
  };
  /** The agent's reply: a chat span opened at its first sign, stretched to its last. */
  const replying = (agent: AgentState, at: string) => {
    agent.reply ??= open({
      spanId: spanId("chat"),
      parentSpanId: agent.span,
      name: `chat ${options.modelOf(agent.role)}`,
      kind: "client",
      startTime: agent.idleSince,
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": options.modelOf(agent.role),
        "gen_ai.conversation.id": run.sessionId,
        "stepwise.agent.role": agent.role,
      },
    });
    agent.reply.endTime = at;
  };
  const idle = (agent: AgentState, at: string) => {
    agent.reply = undefined;
    agent.idleSince = at;
  };
  /** Tool calls in flight, by agent scope and call id; a failed attempt's call, by its interrupt. */
  const calls = new Map<string, GenAiSpan>();
  const failedCalls = new Map<string, { key: string; span: GenAiSpan }>();
  const tasks = new Map<string, GenAiSpan>();

  for (const event of events) {
    const at = event.at;
    switch (event.type) {
      case "task.started": {
        const span = open({
          spanId: spanId(`task|${event.data.taskId}`),
          parentSpanId: root.spanId,
          name: "invoke_agent executor",
          kind: "internal",
          startTime: at,
          attributes: {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": provider,
            "gen_ai.agent.name": "executor",
            "gen_ai.conversation.id": run.sessionId,
            "gen_ai.request.model": options.modelOf("executor"),
            "stepwise.task.id": event.data.taskId,
            "stepwise.task.title": event.data.title,
          },
        });
        tasks.set(event.data.taskId, span);
        const agent = agentOf("executor", event.data.taskId, at);
        agent.span = span.spanId;
        idle(agent, at);
        break;
      }
      case "task.completed": {
        const span = tasks.get(event.data.taskId);
        if (!span) break;
        span.endTime = at;
        if (event.data.status === "failed") span.status = { code: "error", message: event.data.result.slice(0, 500) };
        if (event.data.status === "failed") span.attributes["error.type"] = "task_failed";
        break;
      }
      case "agent.delta":
      case "agent.reasoning":
      case "agent.thought":
        replying(agentOf(event.data.agent, event.data.taskId, at), at);
        break;
      case "tool.called": {
        const agent = agentOf(event.data.agent, event.data.taskId, at);
        replying(agent, at);
        const key = `${event.data.agent}|${event.data.taskId ?? ""}|${event.data.callId}`;
        calls.set(
          key,
          open({
            spanId: spanId(`tool|${key}`),
            parentSpanId: agent.span,
            name: `execute_tool ${event.data.tool}`,
            kind: "internal",
            startTime: at,
            attributes: {
              "gen_ai.operation.name": "execute_tool",
              "gen_ai.tool.name": event.data.tool,
              "gen_ai.tool.call.id": event.data.callId,
              // A tool source's tools (source__tool) call out to another service; built-ins are functions.
              "gen_ai.tool.type": event.data.tool.includes("__") ? "extension" : "function",
              "gen_ai.tool.call.arguments": JSON.stringify(event.data.arguments ?? {}),
            },
          }),
        );
        break;
      }
      case "tool.result": {
        const agent = agentOf(event.data.agent, event.data.taskId, at);
        const key = `${event.data.agent}|${event.data.taskId ?? ""}|${event.data.callId}`;
        const span = calls.get(key);
        if (span) {
          span.endTime = at;
          span.attributes["gen_ai.tool.call.result"] = event.data.output;
          if (!event.data.ok) {
            span.status = { code: "error", message: event.data.output.slice(0, 500) };
            span.attributes["error.type"] = "tool_error";
          }
          calls.delete(key);
        }
        idle(agent, at);
        break;
      }
      case "interrupt.opened": {
        // A failed attempt ends its span with the reason; the retry, once decided, gets its own.
        const { failure, callId, taskId } = event.data;
        if (event.data.kind !== "tool_failure" || !failure || !callId) break;
        const entry = [...calls.entries()].find(([key]) => key.endsWith(`|${taskId ?? ""}|${callId}`));
        if (!entry) break;
        const [key, span] = entry;
        span.endTime = at;
        span.status = { code: "error", message: failure.error.slice(0, 500) };
        span.attributes["error.type"] = failure.reason;
        span.attributes["stepwise.tool.attempt"] = failure.attempt;
        calls.delete(key);
        failedCalls.set(event.data.interruptId, { key, span });
        break;
      }
      case "interrupt.resolved": {
        const failed = failedCalls.get(event.data.interruptId);
        if (!failed || !["retry", "edit"].includes(event.data.decision)) break;
        const attempt = Number(failed.span.attributes["stepwise.tool.attempt"] ?? 1) + 1;
        calls.set(
          failed.key,
          open({
            ...failed.span,
            spanId: spanId(`tool|${failed.key}`),
            startTime: at,
            attributes: { ...withoutOutcome(failed.span.attributes), "stepwise.tool.attempt": attempt },
          }),
        );
        break;
      }
      case "run.succeeded":
      case "run.failed":
      case "run.cancelled":
      case "run.timed_out":
      case "run.interrupted":
        root.endTime = at;
        if (event.type === "run.failed") {
          root.status = { code: "error", message: event.data.error.message.slice(0, 500) };
          root.attributes["error.type"] = event.data.error.code;
        } else if (event.type !== "run.succeeded") {
          root.status = { code: "error", message: event.type };
          root.attributes["error.type"] = event.type.slice("run.".length);
        }
        break;
    }
    if (at > root.endTime) root.endTime = at;
  }
  return spans;
}

function withoutOutcome(attributes: Record<string, AttributeValue>): Record<string, AttributeValue> {
  const { "error.type": _error, "gen_ai.tool.call.result": _result, ...rest } = attributes;
  return rest;
}

/** `ExportTraceServiceRequest` in OTLP's JSON encoding (ids in hex, 64-bit integers as strings, enums as numbers). */
export function otlpJson(spans: GenAiSpan[], resource: Record<string, string> = {}) {
  const nanos = (iso: string) => `${BigInt(Date.parse(iso)) * 1_000_000n}`;
  const value = (v: AttributeValue) =>
    Array.isArray(v)
      ? { arrayValue: { values: v.map((s) => ({ stringValue: s })) } }
      : typeof v === "string"
        ? { stringValue: v }
        : typeof v === "boolean"
          ? { boolValue: v }
          : Number.isInteger(v)
            ? { intValue: String(v) }
            : { doubleValue: v };
  const attributes = (record: Record<string, AttributeValue>) => Object.entries(record).map(([key, v]) => ({ key, value: value(v) }));
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes({ "service.name": "stepwise", ...resource }) },
        scopeSpans: [
          {
            scope: { name: "stepwise" },
            schemaUrl: GENAI_CONVENTIONS.schemaUrl,
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind === "client" ? 3 : 1,
              startTimeUnixNano: nanos(span.startTime),
              endTimeUnixNano: nanos(span.endTime),
              attributes: attributes(span.attributes),
              status: span.status.code === "error" ? { code: 2, message: span.status.message ?? "" } : {},
            })),
          },
        ],
      },
    ],
  };
}
export type OtlpTrace = ReturnType<typeof otlpJson>;
