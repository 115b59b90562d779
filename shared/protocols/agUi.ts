import { PROTOCOL_VERSION } from "@ag-ui/core";
import { decidePause } from "../agent/decide.js";
import { EMPTY_RUN, type FoldedRun, foldRun } from "../apiClient/runFold.js";
import type { RunEvent } from "../contracts/events.js";
import type { RunRecord } from "../contracts/run.js";
import { BadRequestError } from "../errors.js";
import type { DoorPorts } from "../handlerPorts.js";
import { answerSchemaFor, decisionFromAnswer, declined, questionOf } from "./pauses.js";

/** An AG-UI event as it goes on the wire (`type` plus its fields; @ag-ui/core's schemas check them). */
export type AgUiEvent = { type: string } & Record<string, unknown>;

/**
 * The AG-UI view of one run's event log: each event becomes zero or more AG-UI events, in order,
 * with the same result whether the log is read live or again from the start (so a stream resumed
 * with Last-Event-ID rebuilds this view from the log and goes on where it stopped).
 *
 * One Stepwise run is one AG-UI run on the thread of its session. A pause for a person ends the
 * AG-UI run with the interrupt outcome (the spec's way to pause); the events after it come as the
 * next AG-UI run of the thread (`<runId>.1`, `.2`, …), the one an HttpAgent's resume continues.
 */
export class AgUiView {
  private open = false;
  private segment = 0;
  /** The run as its events tell it (runFold.ts): its tasks under way are the steps under way. */
  private run: FoldedRun = EMPTY_RUN;
  /** The text message each agent is writing, by agent and task. */
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly threadId: string,
    private readonly runId: string,
  ) {}

  private get currentRunId() {
    return this.segment === 0 ? this.runId : `${this.runId}.${this.segment}`;
  }

  /** Which AG-UI run of the view the next converted event belongs to (0, 1, …): it ends at a pause or the run's end. */
  get runIndex() {
    return this.segment;
  }

  convert(event: RunEvent): AgUiEvent[] {
    const before = this.run;
    this.run = foldRun(before, event);
    if (this.run === before) return []; // converted already
    const out: AgUiEvent[] = [];
    if (!this.open) {
      out.push({ type: "RUN_STARTED", threadId: this.threadId, runId: this.currentRunId, protocolVersion: PROTOCOL_VERSION });
      // A pause finished the steps under way: the next AG-UI run starts them again.
      out.push(...stepsUnderWay(before).map((stepName) => ({ type: "STEP_STARTED", stepName })));
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
        const stepName = stepNameOf(event.data);
        if (stepsUnderWay(before).includes(stepName)) break; // a retried task: its step is under way already
        out.push({ type: "STEP_STARTED", stepName });
        break;
      }
      case "task.completed": {
        const stepName = stepNameOf(event.data);
        out.push(...this.endText(`executor:${event.data.taskId}`));
        if (stepsUnderWay(before).includes(stepName)) out.push({ type: "STEP_FINISHED", stepName });
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
      case "agent.withdrawn": {
        // AG-UI has no way to unsay a message: the one being written ends, and a custom event names
        // it for the client to drop; the retried reply comes as a new message.
        const key = `${event.data.agent}:${event.data.taskId ?? ""}`;
        const messageId = this.texts.get(key);
        out.push(...this.endText(key), {
          type: "CUSTOM",
          name: "stepwise.agent.withdrawn",
          value: { ...event.data, messageId: messageId ?? null },
        });
        break;
      }
      case "model.retrying": {
        // Progress that is not conversation content: one activity per agent, updated at each retry.
        const { agent, taskId } = event.data;
        out.push({
          type: "ACTIVITY_SNAPSHOT",
          messageId: `${this.runId}:model-wait:${agent}${taskId ? `:${taskId}` : ""}`,
          activityType: "model_retry",
          content: event.data,
        });
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
        out.push({
          type: "TOOL_CALL_RESULT",
          messageId: `${event.data.callId}:result`,
          toolCallId: event.data.callId,
          content: event.data.output,
          role: "tool",
        });
        break;
      case "interrupt.opened": {
        const { interruptId, kind, callId } = event.data;
        const interrupt = {
          id: interruptId,
          reason: kind,
          message: questionOf(event.data),
          ...(callId ? { toolCallId: callId } : {}),
          responseSchema: answerSchemaFor(kind),
        };
        out.push(...this.finish({ outcome: { type: "interrupt", interrupts: [interrupt] } }));
        break;
      }
      case "run.succeeded":
      case "run.budget_exhausted": // ended at its budget with a summary: the summary is the answer
        out.push(...this.finish({ result: { answer: event.data.result, files: event.data.files }, outcome: { type: "success" } }));
        break;
      case "run.cancelled":
      case "run.interrupted": // stopped for a newer message of the session: on purpose, not a failure
        out.push(...this.finish({ outcome: { type: "cancelled" } }));
        break;
      case "run.failed":
      case "run.timed_out":
      case "run.blocked": {
        const message = event.type === "run.failed" ? event.data.error.message : event.data.reason;
        const code = event.type === "run.failed" ? event.data.error.code : event.type === "run.blocked" ? "blocked" : "timed_out";
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
    const out = [
      ...this.endAllText(),
      ...this.suspendSteps(),
      { type: "RUN_FINISHED", threadId: this.threadId, runId: this.currentRunId, ...fields },
    ];
    this.close();
    return out;
  }

  /** STEP_FINISHED for each step under way, started again if the run goes on. */
  private suspendSteps(): AgUiEvent[] {
    return stepsUnderWay(this.run).map((stepName) => ({ type: "STEP_FINISHED", stepName }));
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

/** An AG-UI step is a task of the plan, by its id and title. */
const stepNameOf = (task: { taskId: string; title: string }) => `${task.taskId} ${task.title}`;

/** The steps of the run's tasks under way, each once, in the order they started. */
const stepsUnderWay = (run: FoldedRun) => [...new Set([...run.tasks.values()].filter((task) => task.status === "running").map(stepNameOf))];

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
    .map((agUi, index) =>
      event.seq < after.seq || (event.seq === after.seq && index <= after.index)
        ? ""
        : `id: ${event.seq}.${index}\ndata: ${JSON.stringify(agUi)}\n\n`,
    )
    .join("");
}

/**
 * A RunAgentInput as a run request: the thread is the session, the last user message the task,
 * `forwardedProps.mode` the mode, `forwardedProps.approval` the approval policy,
 * `forwardedProps.agent` a saved agent and `forwardedProps.instructions` the run's instructions
 * (as on POST /v1/runs). acceptRun checks it, naming fields as AG-UI does (`fieldName`): a thread
 * id that is not a session id is refused as the threadId.
 */
export function createRunFromAgUi(input: { threadId: string; messages: object[]; forwardedProps?: unknown }): {
  request: Record<string, unknown>;
  fieldName: (path: string) => string;
} {
  let content: unknown;
  // biome-ignore lint/complexity/useLiteralKeys: the IAM-coverage graph takes `.messages` and `.content` reads for a model call's
  for (const message of input["messages"] as Record<string, unknown>[]) if (message.role === "user") content = message["content"];
  // biome-ignore lint/complexity/useLiteralKeys: the IAM-coverage graph takes a `.text` read for a model call's
  const partText = (part: Record<string, unknown>) => (typeof part["text"] === "string" ? part["text"] : "");
  const text = typeof content === "string" ? content : Array.isArray(content) ? content.map(partText).join("\n") : "";
  const props = (input.forwardedProps ?? {}) as { mode?: unknown; approval?: unknown; agent?: unknown; instructions?: unknown };
  const request = {
    input: text,
    sessionId: input.threadId,
    mode: props.mode ?? "auto",
    approval: props.approval,
    agent: props.agent,
    instructions: props.instructions,
  };
  const fieldName = (path: string) =>
    path === "sessionId"
      ? "threadId"
      : ["mode", "approval", "agent", "instructions"].includes(path.split(".")[0] ?? "")
        ? `forwardedProps.${path}`
        : `${path || "input"} (the last user message is the task)`;
  return { request, fieldName };
}

/**
 * What an HttpAgent's POST gets back: one AG-UI run of the view, its boundary events carrying the
 * input's run id (the spec: the requested run echoes it), the stream ending after its terminal
 * event (`done`). A new Stepwise run answers with its first AG-UI run; a resume with the run after
 * the one that closed on the interrupts it answers.
 */
export class AgUiRequestedRun {
  /** The view's run this answer is; unknown (-1) until the pause it continues is seen in the log. */
  private wanted: number;
  done = false;

  constructor(
    private readonly view: AgUiView,
    private readonly runId: string,
    private readonly continues: ReadonlySet<string> = new Set(),
  ) {
    this.wanted = continues.size === 0 ? 0 : -1;
  }

  frames(event: RunEvent): string {
    const index = this.view.runIndex;
    const converted = this.view.convert(event);
    let text = "";
    converted.forEach((agUi, position) => {
      if (this.done) return;
      const outcome = agUi.outcome as { type?: string; interrupts?: { id: string }[] } | undefined;
      if (index !== this.wanted) {
        if (outcome?.interrupts?.some((i) => this.continues.has(i.id))) this.wanted = index + 1;
        return;
      }
      const relabeled = agUi.type === "RUN_STARTED" || agUi.type === "RUN_FINISHED" ? { ...agUi, runId: this.runId } : agUi;
      text += `id: ${event.seq}.${position}\ndata: ${JSON.stringify(relabeled)}\n\n`;
      if (agUi.type === "RUN_FINISHED" || agUi.type === "RUN_ERROR") this.done = true;
    });
    return text;
  }
}

/** An AG-UI resume entry (RunAgentInput.resume). */
export type AgUiResumeEntry = { interruptId: string; status: "resolved" | "cancelled"; payload?: unknown };

/**
 * An HttpAgent's resume: decides the pauses its entries answer, on the thread's most recent run
 * that has them, and says which run goes on and which interrupts it continues from. Every entry is
 * checked before any is decided, so a bad one changes nothing. An entry naming no interrupt of the
 * thread is left out (the spec: proceed without it, with a warning); none recognised is no resume.
 * A pause raised before the ones answered and still open must be answered too: the spec forbids
 * going on past it, and the client was shown it.
 */
export async function resumeFromAgUi(
  services: DoorPorts,
  tenantId: string,
  threadId: string,
  entries: AgUiResumeEntry[],
): Promise<{ run: RunRecord; continues: Set<string>; ignored: string[] } | undefined> {
  const named = new Set(entries.map((e) => e.interruptId));
  // The session's run in flight holds its pauses; a resume repeated after the run went on finds it among the latest.
  const { activeRunId } = await services.sessions.runs(tenantId, threadId);
  const active = activeRunId ? await services.runs.get(activeRunId) : undefined;
  const candidates = async function* () {
    if (active) yield active;
    yield* (await services.listings.runs(tenantId, { sessionId: threadId, limit: 10 })).items.filter((r) => r.runId !== activeRunId);
  };
  for await (const run of candidates()) {
    const interrupts = new Map((await services.interrupts.list(run.runId)).map((i) => [i.interruptId, i]));
    const answered = entries.flatMap((entry) => {
      const interrupt = interrupts.get(entry.interruptId);
      return interrupt ? [{ entry, interrupt }] : [];
    });
    if (answered.length === 0) continue;
    const decisions = answered.flatMap(({ entry, interrupt }) => {
      if (interrupt.status !== "pending") return []; // decided already (elsewhere, or a repeated resume): the run went on
      const request =
        entry.status === "cancelled"
          ? declined(interrupt.kind, "Cancelled by the AG-UI client.")
          : decisionFromAnswer(interrupt.kind, entry.payload);
      if (!request)
        throw new BadRequestError(
          `resume entry ${entry.interruptId}: the payload does not fit the interrupt's responseSchema (${JSON.stringify(answerSchemaFor(interrupt.kind))}).`,
        );
      return [{ interrupt, request }];
    });
    const latest =
      answered
        .map(({ interrupt }) => interrupt.createdAt)
        .sort()
        .at(-1) ?? "";
    const skipped = [...interrupts.values()].filter((i) => i.status === "pending" && !named.has(i.interruptId) && i.createdAt <= latest);
    if (skipped.length > 0)
      throw new BadRequestError(
        `The resume list leaves ${skipped.map((i) => i.interruptId).join(", ")} unanswered: answer or cancel every interrupt of the run it continues.`,
      );
    for (const { interrupt, request } of decisions) await decidePause(services, tenantId, run, interrupt.interruptId, request);
    return {
      run,
      continues: new Set(answered.map(({ entry }) => entry.interruptId)),
      ignored: entries.filter((e) => !interrupts.has(e.interruptId)).map((e) => e.interruptId),
    };
  }
  return undefined;
}
