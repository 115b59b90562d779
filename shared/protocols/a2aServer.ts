import { setTimeout } from "node:timers/promises";
import type {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { formatSSEErrorEvent, formatSSEEvent, type Message, type Part, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import {
  A2AError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "@a2a-js/sdk/errors";
import { type A2ARequestHandler, JsonRpcTransportHandler, ServerCallContext, type User } from "@a2a-js/sdk/server";
import * as z from "zod";
import { decidePause } from "../agent/decide.js";
import { ApprovalPolicy, type Interrupt, type ResolveInterruptRequest } from "../contracts/interrupts.js";
import { type A2APush, RequestedMode, type RunRecord } from "../contracts/run.js";
import { TERMINAL_STATUSES } from "../contracts/terminal.js";
import { INLINE_UPLOAD_BYTES } from "../contracts/uploadLimits.js";
import { StepwiseError } from "../errors.js";
import { assertDeliverableUrl } from "../net/ssrfGuard.js";
import { logger } from "../observability.js";
import { contentTypeOf, sanitizeFileName } from "../ports/files.js";
import { acceptRun } from "../run/acceptRun.js";
import { ownRun, ownRunSnapshot } from "../run/access.js";
import { cancelRun } from "../run/cancel.js";
import { type OpenStream, openStream, TooManyStreamsError } from "../run/openStreams.js";
import { agentCard, isFinal, openPush, pendingOf, progressUpdate, sealPush, type TaskWithStatus, taskOf } from "./a2a.js";
import { A2aProgress } from "./a2aProgress.js";
import type { ProtocolContext } from "./context.js";

type A2AContext = ProtocolContext;

const A2A_VERSION_HEADER = "a2a-version";
const JSON_RPC = (id: unknown, error: { code: number; message: string }) => ({ jsonrpc: "2.0", id: id ?? null, error });

/**
 * `POST /a2a`, A2A's JSON-RPC binding: the SDK's transport handlers parse the request, name the
 * method and shape results and errors (`A2A-Version: 1.0`, or the 0.3 method names — message/send,
 * tasks/get, … — without the header, as the SDK's own Express front does). Nothing is kept between
 * requests: every call reads the run from the table, so any container can answer any call.
 */
export async function handleA2A(request: Request, context: A2AContext): Promise<Response> {
  if (request.method !== "POST") {
    return Response.json(
      JSON_RPC(null, { code: -32600, message: `${request.method} is not supported on /a2a: send each JSON-RPC request as a POST.` }),
      { status: 405, headers: { allow: "POST" } },
    );
  }
  const type = request.headers.get("content-type");
  if (type && !/^application\/(json|a2a\+json)\b/i.test(type)) {
    return Response.json(JSON_RPC(null, { code: -32005, message: `Unsupported Content-Type '${type}': send application/json.` }), {
      status: 415,
    });
  }
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return Response.json(JSON_RPC(null, { code: -32700, message: "Parse error: the body is not JSON." }), { status: 400 });
  }
  const id = typeof body === "object" && body !== null && "id" in body ? (body as { id: unknown }).id : null;
  const version = request.headers.get(A2A_VERSION_HEADER) ?? "0.3";
  if (version !== "1.0" && version !== "0.3") {
    return Response.json(
      JSON_RPC(
        id,
        JsonRpcTransportHandler.mapToJSONRPCError(
          new VersionNotSupportedError(`A2A version '${version}' is not supported: 1.0 and 0.3 are.`),
        ),
      ),
    );
  }
  const legacy = version === "0.3";
  // A client that leaves ends the follow at once, not at its next event.
  const left = new AbortController();
  const handler = new StepwiseA2AHandler(context, version, left.signal);
  const callContext = new ServerCallContext({ requestedVersion: version, user: new TenantUser(context.tenantId) });
  const transport = legacy ? new LegacyJsonRpcTransportHandler(handler) : new JsonRpcTransportHandler(handler);
  const mapError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
  const answer = await transport.handle(body as Record<string, unknown>, callContext);
  // Too many open streams: the JSON-RPC error, as any refusal, at HTTP 429 with Retry-After (as the REST API answers).
  const status = () =>
    handler.refused ? { status: 429, headers: { "retry-after": String(handler.refused.retryAfterSeconds) } } : undefined;
  if (!(Symbol.asyncIterator in answer)) return Response.json(answer, status());

  // A stream: its first event (or error) decides between an SSE stream and a plain JSON-RPC error.
  const iterator = answer[Symbol.asyncIterator]();
  let first: IteratorResult<unknown>;
  try {
    first = await iterator.next();
  } catch (error) {
    return Response.json(JSON_RPC(id, mapError(error)), status());
  }
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      if (!first.done) controller.enqueue(encoder.encode(formatSSEEvent(first.value)));
    },
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) return controller.close();
        controller.enqueue(encoder.encode(formatSSEEvent(next.value)));
      } catch (error) {
        controller.enqueue(encoder.encode(formatSSEErrorEvent(JSON_RPC(id, mapError(error)))));
        controller.close();
      }
    },
    // The client left: stop following the task.
    async cancel() {
      left.abort();
      await iterator.return?.(undefined);
    },
  });
  return new Response(stream, {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no" },
  });
}

/** The caller, as the SDK's call context names it: the tenant its API key belongs to. */
class TenantUser implements User {
  constructor(private readonly tenantId: string) {}
  get isAuthenticated() {
    return true;
  }
  get userName() {
    return this.tenantId;
  }
}

/** The run options a message may carry in its metadata (or the request's): the skill's mode, approvals, deep thinking. */
const RunOptions = z.object({
  mode: RequestedMode.optional(),
  approval: ApprovalPolicy.optional(),
  deepThink: z.boolean().optional(),
  /** A saved agent: one of the skills of the extended agent card (or a version of one, analyst@3). */
  agent: z.string().optional(),
  instructions: z.string().optional(),
});

/** A reply's data part that decides a pause exactly (a text reply is read as approve / reject: why / the answer). */
const ReplyData = z.object({
  interruptId: z.string().optional(),
  decision: z.enum(["approve", "reject", "answer", "retry", "skip", "fail"]).optional(),
  message: z.string().max(8_000).optional(),
});

/**
 * The A2A request handler over Stepwise's runs. Why not the SDK's DefaultRequestHandler: it runs
 * an AgentExecutor inside the process that took the request and keeps each task's event bus in
 * that process's memory, so a resubscribe or a cancel that lands on another Lambda container finds
 * no bus, and the task store would be a second copy of the run. Here the run executes in Step
 * Functions and its record, interrupts and files in the table are the task: every method reads them.
 */
class StepwiseA2AHandler implements A2ARequestHandler {
  /** Set when the call was refused for the tenant's open streams: the reply is then HTTP 429 with Retry-After. */
  refused?: TooManyStreamsError;

  constructor(
    private readonly context: A2AContext,
    private readonly wireVersion: "1.0" | "0.3",
    private readonly signal: AbortSignal,
  ) {}

  private get services() {
    return this.context.services;
  }

  async getAgentCard() {
    return agentCard(this.context.links, this.context.version);
  }

  /** The card as the caller's tenant sees it: its saved agents are skills too (a message names one in `metadata.skill`). */
  async getAuthenticatedExtendedAgentCard() {
    return agentCard(this.context.links, this.context.version, await this.services.savedAgents.list(this.context.tenantId));
  }

  sendMessage(params: SendMessageRequest): Promise<Task> {
    return guarded(async () => {
      const historyLength = params.configuration?.historyLength;
      if (params.configuration?.returnImmediately) return withHistory(await this.task((await this.accept(params)).runId), historyLength);
      // A blocking send follows its task as a stream does: it holds one of the tenant's open streams.
      const stream = await this.openStream();
      try {
        const run = await this.accept(params);
        let task: Task = await this.task(run.runId);
        for await (const event of this.follow(run.runId, false)) if (event.payload?.$case === "task") task = event.payload.value;
        return withHistory(task, historyLength);
      } finally {
        await stream.release();
      }
    });
  }

  sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse> {
    const self = this;
    return guardedStream(async function* () {
      const stream = await self.openStream();
      try {
        const run = await self.accept(params);
        yield* self.events(run.runId, !params.message?.taskId);
      } finally {
        await stream.release();
      }
    });
  }

  getTask(params: GetTaskRequest): Promise<Task> {
    return guarded(async () => withHistory(await this.task(params.id), params.historyLength));
  }

  async listTasks(): Promise<ListTasksResponse> {
    throw new UnsupportedOperationError("Listing tasks is not offered: keep the ids message/send gave you (GET /v1/runs/{id} reads one).");
  }

  cancelTask(params: CancelTaskRequest): Promise<Task> {
    return guarded(async () => {
      const run = await ownRun(this.services, this.context.tenantId, params.id);
      if (TERMINAL_STATUSES.has(run.status)) {
        if (run.status === "cancelled" || run.status === "interrupted") return this.task(run.runId);
        throw new TaskNotCancelableError(`Task ${run.runId} has already ended (${run.status}).`);
      }
      await cancelRun(this.services, run, "Cancelled through A2A.").catch((error) => {
        throw error instanceof StepwiseError && error.statusCode === 409 ? new TaskNotCancelableError(error.message) : error;
      });
      return this.task(run.runId);
    });
  }

  resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse> {
    const self = this;
    return guardedStream(async function* () {
      const run = await ownRun(self.services, self.context.tenantId, params.id);
      if (TERMINAL_STATUSES.has(run.status))
        throw new UnsupportedOperationError(`Task ${run.runId} has ended (${run.status}): read it with GetTask.`);
      const stream = await self.openStream();
      try {
        yield* self.events(run.runId, false);
      } finally {
        await stream.release();
      }
    });
  }

  createTaskPushNotificationConfig(params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    return guarded(async () => {
      const run = await ownRun(this.services, this.context.tenantId, params.taskId);
      if (TERMINAL_STATUSES.has(run.status))
        throw new UnsupportedOperationError(`Task ${run.runId} has ended (${run.status}): there is nothing left to notify.`);
      const push = await this.pushConfig(params);
      await this.services.runs.update(run.runId, { webhook: { url: params.url, a2a: push } });
      return this.configView(run.runId, params.url, push);
    });
  }

  getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest): Promise<TaskPushNotificationConfig> {
    return guarded(async () => {
      const configs = await this.configs(params.taskId);
      const found = configs.find((c) => c.id === params.id);
      if (!found) throw new TaskNotFoundError(`Task ${params.taskId} has no push notification config '${params.id}'.`);
      return found;
    });
  }

  listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest): Promise<ListTaskPushNotificationConfigsResponse> {
    return guarded(async () => ({ configs: await this.configs(params.taskId), nextPageToken: "" }));
  }

  deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    return guarded(async () => {
      const run = await ownRun(this.services, this.context.tenantId, params.taskId);
      const { webhook } = run;
      if (!webhook?.a2a || webhook.a2a.id !== params.id)
        throw new TaskNotFoundError(`Task ${params.taskId} has no push notification config '${params.id}'.`);
      // The subscription stays, for no event: nothing more is sent.
      await this.services.runs.update(run.runId, { webhook: { url: webhook.url, events: [] } });
    });
  }

  /** A task's push configs: the run's webhook when an A2A client set it (one per task). */
  private async configs(taskId: string): Promise<TaskPushNotificationConfig[]> {
    const run = await ownRun(this.services, this.context.tenantId, taskId);
    const { webhook } = run;
    return webhook?.a2a && webhook.events?.length !== 0 ? [await this.configView(run.runId, webhook.url, webhook.a2a)] : [];
  }

  /** The config as its owner set it: the A2A spec lets the owner read its token and credentials back, so they are opened. */
  private async configView(taskId: string, url: string, push: A2APush): Promise<TaskPushNotificationConfig> {
    const opened = await openPush(this.services.secrets, this.context.tenantId, push);
    return { tenant: "", id: opened.id, taskId, url, token: opened.token ?? "", authentication: opened.authentication };
  }

  /** Checks a push config's URL as every webhook URL is checked (no private addresses), and keeps what the receiver needs, its secrets sealed. */
  private async pushConfig(config: TaskPushNotificationConfig): Promise<A2APush> {
    const { settings } = this.services;
    if (!config.url) throw new RequestMalformedError("A push notification config needs a url.");
    await assertDeliverableUrl(config.url, settings.webhooks.policy);
    const authentication = config.authentication?.scheme
      ? { scheme: config.authentication.scheme, credentials: config.authentication.credentials }
      : undefined;
    return sealPush(this.services.secrets, this.context.tenantId, {
      id: config.id || crypto.randomUUID(),
      ...(config.token ? { token: config.token } : {}),
      ...(authentication ? { authentication } : {}),
      wireVersion: this.wireVersion,
    });
  }

  /**
   * The message's effect: a message on a task that waits for input decides its pause; any other
   * message (no task id) starts a run, in the session its context id names.
   */
  private async accept(params: SendMessageRequest): Promise<RunRecord> {
    const message = params.message;
    if (!message?.messageId) throw new RequestMalformedError("The request needs a message with a messageId.");
    if (message.parts.length === 0) throw new RequestMalformedError("The message has no parts.");
    const push = params.configuration?.taskPushNotificationConfig;
    // Everything is checked before anything is written: a refused message changes nothing.
    const a2aPush = push ? await this.pushConfig(push) : undefined;
    const webhook = push && a2aPush ? { url: push.url, a2a: a2aPush } : undefined;
    if (message.taskId) return this.reply(message, webhook);
    const options = RunOptions.safeParse({ ...pick(message.metadata), ...pick(params.metadata) });
    if (!options.success)
      throw new RequestMalformedError(
        `Invalid metadata: ${options.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
      );
    const { text, files } = this.partsOf(message.parts);
    const { run } = await acceptRun(
      this.services,
      this.context.tenantId,
      {
        input: text,
        mode: options.data.mode ?? "auto",
        ...options.data,
        ...(message.contextId ? { sessionId: message.contextId } : {}),
        ...(push ? { webhook: { url: push.url } } : {}),
      },
      { links: this.context.links, a2aPush, inlineFiles: files, fieldName: (path) => path || "message" },
    );
    return run;
  }

  /** Text parts are the task; data parts go with it as JSON; file parts (bytes) become the run's uploaded files. */
  private partsOf(parts: Part[]): { text: string; files: { name: string; body: Uint8Array; contentType: string }[] } {
    const texts: string[] = [];
    const files: { name: string; body: Uint8Array; contentType: string }[] = [];
    const limit = Math.min(this.services.settings.files.maxUploadBytes, INLINE_UPLOAD_BYTES);
    for (const [index, part] of parts.entries()) {
      const content = part.content;
      if (content?.$case === "text") texts.push(content.value);
      else if (content?.$case === "data") texts.push(JSON.stringify(content.value, null, 2));
      else if (content?.$case === "raw") {
        if (content.value.byteLength > limit)
          throw new RequestMalformedError(`File part ${index} is over ${limit} bytes; upload larger files with POST /v1/files.`);
        if (content.value.byteLength === 0) throw new RequestMalformedError(`File part ${index} is empty.`);
        const name = sanitizeFileName(part.filename || `file-${index + 1}`);
        if (!name) throw new RequestMalformedError(`File part ${index}: '${part.filename.slice(0, 80)}' is not usable as a file name.`);
        if (files.some((f) => f.name === name))
          throw new RequestMalformedError(`Two file parts are named ${name}; a run's files need distinct names.`);
        files.push({ name, body: content.value, contentType: part.mediaType || contentTypeOf(name) });
      } else if (content?.$case === "url") {
        throw new RequestMalformedError(
          `File part ${index} is a URL: send the file's bytes in the part instead (Stepwise fetches nothing on a message's behalf).`,
        );
      } else throw new RequestMalformedError(`Part ${index} has no content.`);
    }
    if (files.length > 20) throw new RequestMalformedError("A message carries at most 20 files.");
    return { text: texts.join("\n\n"), files };
  }

  /** A reply on a task that waits: it decides the pause (the first, or the one its data part names). */
  private async reply(message: Message, webhook: RunRecord["webhook"]): Promise<RunRecord> {
    const run = await ownRun(this.services, this.context.tenantId, message.taskId);
    if (message.contextId && message.contextId !== run.sessionId)
      throw new RequestMalformedError(`contextId ${message.contextId} is not task ${run.runId}'s context (${run.sessionId}).`);
    if (TERMINAL_STATUSES.has(run.status))
      throw new UnsupportedOperationError(`Task ${run.runId} has ended (${run.status}); start a new task in its context instead.`);
    const { interrupts } = await ownRunSnapshot(this.services, this.context.tenantId, run.runId);
    const pending = pendingOf(interrupts);
    if (pending.length === 0)
      throw new UnsupportedOperationError(
        `Task ${run.runId} is ${run.status === "queued" ? "submitted" : "working"}, not waiting for input: a message on a task answers it only while it is input-required.`,
      );
    const data = message.parts.flatMap((p) => (p.content?.$case === "data" ? [p.content.value] : []))[0];
    const parsed = ReplyData.safeParse(data ?? {});
    if (!parsed.success)
      throw new RequestMalformedError(
        `Invalid reply data: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
      );
    const interrupt = parsed.data.interruptId ? pending.find((i) => i.interruptId === parsed.data.interruptId) : pending[0];
    if (!interrupt) throw new RequestMalformedError(`Task ${run.runId} has no pending pause '${parsed.data.interruptId}'.`);
    const text = message.parts
      .flatMap((p) => (p.content?.$case === "text" ? [p.content.value] : []))
      .join("\n")
      .trim();
    const decision = decisionOf(interrupt, parsed.data, text);
    // A push config that comes with the reply is in place before the run goes on.
    if (webhook) await this.services.runs.update(run.runId, { webhook });
    await decidePause(this.services, this.context.tenantId, run, interrupt.interruptId, decision).catch((error) => {
      throw error instanceof StepwiseError && error.statusCode === 409 ? new RequestMalformedError(error.message) : error;
    });
    return run;
  }

  /**
   * A place among the tenant's open streams for a call that follows its task, taken before the
   * message is accepted (a refused call changes nothing); a refusal is kept so the HTTP answer says 429.
   */
  private async openStream(): Promise<OpenStream> {
    try {
      return await openStream(this.services, this.context.tenantId);
    } catch (error) {
      if (error instanceof TooManyStreamsError) this.refused = error;
      throw error;
    }
  }

  private async task(runId: string): Promise<TaskWithStatus> {
    const { run, interrupts, files } = await ownRunSnapshot(this.services, this.context.tenantId, runId);
    return taskOf(run, interrupts, files, this.context.links.api);
  }

  /**
   * The task, then each change of its state as a status update (the artifacts just before
   * `completed`) and a working update for each step of the run's log, until it ends, needs input,
   * or the call's time is up (resubscribe to go on). A new run's progress is read from its log's
   * start, a followed one's from now on.
   */
  private async *events(runId: string, fromStart: boolean): AsyncGenerator<StreamResponse> {
    let task: Task | undefined;
    for await (const event of this.follow(runId, fromStart)) {
      if (event.payload?.$case !== "task") {
        yield event;
        continue;
      }
      const next = event.payload.value;
      if (!task) yield event;
      else {
        if (next.status?.state !== task.status?.state && next.artifacts.length > 0) {
          for (const artifact of next.artifacts)
            yield {
              payload: {
                $case: "artifactUpdate",
                value: { taskId: next.id, contextId: next.contextId, artifact, append: false, lastChunk: true, metadata: {} },
              },
            };
        }
        yield {
          payload: { $case: "statusUpdate", value: { taskId: next.id, contextId: next.contextId, status: next.status, metadata: {} } },
        };
      }
      task = next;
    }
  }

  /**
   * The task whenever its state (or the pause it waits on) changes, read from the table, first as
   * it is now; between them, the run's progress from its event log as working status updates.
   */
  private async *follow(runId: string, fromStart: boolean): AsyncGenerator<StreamResponse> {
    const deadline = Date.now() + this.context.waitMs;
    let cursor = fromStart ? 0 : (await this.services.events.tip(runId)).seq;
    let shown = "";
    const progress = new A2aProgress();
    for (;;) {
      const task = await this.task(runId);
      const state = task.status.state;
      const key = `${state}:${task.status?.message?.messageId ?? ""}`;
      if (key !== shown) {
        shown = key;
        yield { payload: { $case: "task", value: task } };
      }
      if (isFinal(state) || state === TaskState.TASK_STATE_INPUT_REQUIRED || Date.now() >= deadline || this.signal.aborted) return;
      const logged = await this.services.events.list(runId, cursor, 100);
      for (const event of logged) {
        cursor = event.seq;
        const line = progress.next(event);
        if (line) yield { payload: { $case: "statusUpdate", value: progressUpdate({ runId, sessionId: task.contextId }, event, line) } };
      }
      if (logged.length < 100)
        await setTimeout(this.services.settings.stream.pollMs, undefined, { signal: this.signal }).catch(() => undefined);
    }
  }
}

/** A reply's decision: the data part's, else read from the text (an answer, or approve / reject: why). */
function decisionOf(interrupt: Interrupt, data: z.infer<typeof ReplyData>, text: string): ResolveInterruptRequest {
  const message = data.message ?? (text || undefined);
  if (interrupt.kind === "ask_user") {
    if (!message?.trim()) throw new RequestMalformedError("The task asks a question: reply with your answer as text.");
    return { decision: "answer", message };
  }
  if (interrupt.kind === "tool_failure") return failureDecisionOf(interrupt, data, text);
  if (data.decision === "approve" || data.decision === "reject")
    return { decision: data.decision, ...(data.message ? { message: data.message } : {}) };
  const approve = /^\s*(approve|approved|yes|ok)\b[\s.!]*$/i.exec(text);
  if (approve) return { decision: "approve" };
  const reject = /^\s*(reject|rejected|no|deny)\b[\s:,.-]*(?<why>[\s\S]*)$/i.exec(text);
  const why = reject?.groups?.why?.trim();
  if (reject) return { decision: "reject", ...(why ? { message: why } : {}) };
  throw new RequestMalformedError(
    `The task waits for an approval (${interrupt.summary.split("\n")[0]}): reply 'approve', or 'reject: <why>' (or a data part {"decision": "approve" | "reject"}).`,
  );
}

/** A reply to a failed tool call: retry, skip: <message>, or fail: <why> (or the same as a data part). */
function failureDecisionOf(interrupt: Interrupt, data: z.infer<typeof ReplyData>, text: string): ResolveInterruptRequest {
  if (data.decision === "retry" || data.decision === "skip" || data.decision === "fail")
    return { decision: data.decision, ...(data.message ? { message: data.message } : {}) };
  const reply = /^\s*(?<decision>retry|skip|fail)\b[\s:,.-]*(?<message>[\s\S]*)$/i.exec(text);
  const decision = reply?.groups?.decision?.toLowerCase() as "retry" | "skip" | "fail" | undefined;
  const message = reply?.groups?.message?.trim();
  if (decision) return { decision, ...(message && decision !== "retry" ? { message } : {}) };
  throw new RequestMalformedError(
    `The task waits on a failed tool call (${interrupt.summary.split("\n")[0]}): reply 'retry', 'skip: <what the agent reads instead>' or 'fail: <why>' (or a data part {"decision": "retry" | "skip" | "fail"}).`,
  );
}

const pick = (metadata: Record<string, unknown> | undefined) => {
  const { mode, approval, deepThink, agent, instructions, skill } = metadata ?? {};
  // A skill of the card by its id: a mode's (auto, react, plan_solve) or a saved agent's.
  const bySkill = typeof skill !== "string" ? {} : RequestedMode.safeParse(skill).success ? { mode: skill } : { agent: skill };
  const named = Object.fromEntries(Object.entries({ mode, approval, deepThink, agent, instructions }).filter(([, v]) => v !== undefined));
  return { ...bySkill, ...named };
};

function withHistory(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined) return task;
  return { ...task, history: historyLength <= 0 ? [] : task.history.slice(-historyLength) };
}

/**
 * Stepwise's errors in A2A's terms: an unknown (or another tenant's) run is TaskNotFound, a
 * refused request RequestMalformed (invalid params), a conflict UnsupportedOperation; our own
 * faults are logged and answered without their details.
 */
function a2aError(error: unknown): unknown {
  if (error instanceof A2AError) return error;
  if (error instanceof StepwiseError && error.expose) {
    // The error as the REST API names it goes along in ErrorInfo's metadata (string values only).
    const metadata = { code: error.code, ...(error.details ? { details: JSON.stringify(error.details) } : {}) };
    const options = { message: error.message, metadata };
    if (error.statusCode === 404) return new TaskNotFoundError(options);
    if (error.statusCode === 409 || error.statusCode === 429) return new UnsupportedOperationError(options);
    return new RequestMalformedError(options);
  }
  logger.error("A2A request failed", { error: error instanceof Error ? error : String(error) });
  return new Error("Something went wrong on our side; the request can be retried.");
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw a2aError(error);
  }
}

async function* guardedStream<T>(work: () => AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    yield* work();
  } catch (error) {
    throw a2aError(error);
  }
}
