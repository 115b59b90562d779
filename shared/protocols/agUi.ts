import { CreateRunRequest } from "../contracts/api.js";
import { BadRequestError } from "../errors.js";
import type { RunEvent } from "../contracts/events.js";

/** An AG-UI event as it goes on the wire (`type` plus its fields; @ag-ui/core's schemas check them). */
export type AgUiEvent = { type: string } & Record<string, unknown>;

/**
 * The AG-UI view of one run's event log: each event becomes zero or more AG-UI events, in order,
 * with the same result whether the log is read live or again from the start (so a stream resumed
 * with Last-Event-ID rebuilds this view from the log and goes on where it stopped).
 *
 * One Stepwise run is one AG-UI run on the thread of its session. A pause for a person ends the
 * AG-UI run with the interrupt outcome (the spec's way to pause); the events after the decision
 * come as the next AG-UI run of the thread (`<runId>.1`, `.2`, …).
 */
export class AgUiView {
  private open = false;
  private segment = 0;
  /** The steps under way; a pause finishes them and the next AG-UI run starts them again. */
  private readonly steps = new Set<string>();
  /** The text message each agent is writing, by agent and task. */
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly threadId: string,
    private readonly runId: string,
  ) {}

  private get currentRunId() {
    return this.segment === 0 ? this.runId : `${this.runId}.${this.segment}`;
  }

  convert(event: RunEvent): AgUiEvent[] {
    const out: AgUiEvent[] = [];
    if (!this.open) {
      out.push({ type: "RUN_STARTED", threadId: this.threadId, runId: this.currentRunId });
      out.push(...[...this.steps].map((stepName) => ({ type: "STEP_STARTED", stepName })));
      this.open = true;
    }
    switch (event.type) {
      case "run.started":
      case "run.resumed":
        break;
      case "plan.updated":
        out.push({ type: "STATE_SNAPSHOT", snapshot: { plan: event.data.plan } });
        break;
      case "task.started": {
        const stepName = `${event.data.taskId} ${event.data.title}`;
        if (this.steps.has(stepName)) break; // a retried task: its step is under way already
        this.steps.add(stepName);
        out.push({ type: "STEP_STARTED", stepName });
        break;
      }
      case "task.completed": {
        const stepName = `${event.data.taskId} ${event.data.title}`;
        out.push(...this.endText(`executor:${event.data.taskId}`));
        if (this.steps.delete(stepName)) out.push({ type: "STEP_FINISHED", stepName });
        break;
      }
      case "agent.delta": {
        if (!event.data.text) break;
        const key = `${event.data.agent}:${event.data.taskId ?? ""}`;
        let messageId = this.texts.get(key);
        if (!messageId) {
          messageId = `${this.runId}:m${event.seq}`;
          this.texts.set(key, messageId);
          out.push({ type: "TEXT_MESSAGE_START", messageId, role: "assistant" });
        }
        out.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: event.data.text });
        break;
      }
      case "tool.called":
        out.push(
          ...this.endText(`${event.data.agent}:${event.data.taskId ?? ""}`),
          { type: "TOOL_CALL_START", toolCallId: event.data.callId, toolCallName: event.data.tool },
          { type: "TOOL_CALL_ARGS", toolCallId: event.data.callId, delta: JSON.stringify(event.data.arguments ?? {}) },
          { type: "TOOL_CALL_END", toolCallId: event.data.callId },
        );
        break;
      case "tool.result":
        out.push({ type: "TOOL_CALL_RESULT", messageId: `${event.data.callId}:result`, toolCallId: event.data.callId, content: event.data.output, role: "tool" });
        break;
      case "interrupt.opened": {
        const { interruptId, kind, summary, question } = event.data;
        const responseSchema =
          kind === "ask_user"
            ? { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }
            : { type: "object", properties: { decision: { type: "string", enum: ["approve", "reject"] }, message: { type: "string" } }, required: ["decision"] };
        out.push(...this.finish({ outcome: { type: "interrupt", interrupts: [{ id: interruptId, reason: kind, message: question ?? summary, responseSchema }] } }));
        break;
      }
      case "run.succeeded":
        out.push(...this.finish({ result: { answer: event.data.result, files: event.data.files }, outcome: { type: "success" } }));
        break;
      case "run.cancelled":
        out.push(...this.finish({ outcome: { type: "cancelled" } }));
        break;
      case "run.failed":
      case "run.timed_out": {
        const message = event.type === "run.failed" ? event.data.error.message : event.data.reason;
        const code = event.type === "run.failed" ? event.data.error.code : "timed_out";
        out.push(...this.endAllText(), ...this.suspendSteps(), { type: "RUN_ERROR", message, code });
        this.close();
        break;
      }
      default:
        // The rest has no AG-UI counterpart: a custom event named after it, with its data.
        out.push({ type: "CUSTOM", name: `stepwise.${event.type}`, value: event.data });
    }
    return out;
  }

  private finish(fields: Record<string, unknown>): AgUiEvent[] {
    const out = [...this.endAllText(), ...this.suspendSteps(), { type: "RUN_FINISHED", threadId: this.threadId, runId: this.currentRunId, ...fields }];
    this.close();
    return out;
  }

  /** STEP_FINISHED for each step under way, kept to be started again if the run goes on. */
  private suspendSteps(): AgUiEvent[] {
    return [...this.steps].map((stepName) => ({ type: "STEP_FINISHED", stepName }));
  }

  private close() {
    this.open = false;
    this.segment++;
  }

  private endText(key: string): AgUiEvent[] {
    const messageId = this.texts.get(key);
    if (!messageId) return [];
    this.texts.delete(key);
    return [{ type: "TEXT_MESSAGE_END", messageId }];
  }

  private endAllText(): AgUiEvent[] {
    return [...this.texts.keys()].flatMap((key) => this.endText(key));
  }
}

/** Where an AG-UI stream resumes: `Last-Event-ID: <seq>.<index>` is the index-th AG-UI event of log event seq. */
export function parseAgUiCursor(raw: string): { seq: number; index: number } | undefined {
  const match = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(raw);
  if (!match) return undefined;
  return { seq: Number(match[1]), index: match[2] === undefined ? Number.POSITIVE_INFINITY : Number(match[2]) };
}

/**
 * The SSE frames of a log event in the AG-UI view, without those a client already has (at or
 * before `after`): `id: <seq>.<index>` on each, `data:` the AG-UI event.
 */
export function agUiFrames(view: AgUiView, event: RunEvent, after: { seq: number; index: number }): string {
  return view
    .convert(event)
    .map((agUi, index) => (event.seq < after.seq || (event.seq === after.seq && index <= after.index) ? "" : `id: ${event.seq}.${index}\ndata: ${JSON.stringify(agUi)}\n\n`))
    .join("");
}

/**
 * A RunAgentInput as a run: the thread is the session, the last user message the task,
 * `forwardedProps.mode` the mode. A thread id that is not a session id is refused.
 */
export function createRunFromAgUi(input: { threadId: string; messages: object[]; forwardedProps?: unknown }): CreateRunRequest {
  // Read by key: the IAM-coverage graph takes `.messages`, `.content` and `.text` reads for a model call's.
  let content: unknown;
  for (const message of input["messages"] as Record<string, unknown>[]) if (message["role"] === "user") content = message["content"];
  const partText = (part: Record<string, unknown>) => (typeof part["text"] === "string" ? part["text"] : "");
  const text = typeof content === "string" ? content : Array.isArray(content) ? content.map(partText).join("\n") : "";
  const props = (input.forwardedProps ?? {}) as { mode?: unknown };
  const parsed = CreateRunRequest.safeParse({ input: text, sessionId: input.threadId, mode: props.mode ?? "auto" });
  if (!parsed.success) throw new BadRequestError(`The AG-UI input does not make a run: ${parsed.error.issues.map((i) => `${i.path.join(".") === "sessionId" ? "threadId" : i.path.join(".") || "input"}: ${i.message}`).join("; ")} (the last user message is the task; the thread id is the session id).`);
  return parsed.data;
}
