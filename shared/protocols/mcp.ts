import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, ClientCapabilities, JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { decidePause } from "../agent/decide.js";
import type { SavedAgent } from "../contracts/agents.js";
import { CreateRunRequest } from "../contracts/api.js";
import type { Interrupt, ResolveInterruptRequest } from "../contracts/interrupts.js";
import type { RunRecord } from "../contracts/run.js";
import { TERMINAL_EVENTS, TERMINAL_STATUSES } from "../contracts/terminal.js";
import { StepwiseError } from "../errors.js";
import { acceptRun } from "../run/acceptRun.js";
import { ownRun, ownRunSnapshot } from "../run/access.js";
import { cancelRun } from "../run/cancel.js";
import { whileStreamOpen } from "../run/openStreams.js";
import type { ProtocolContext } from "./context.js";
import { RunTaskStore } from "./mcpTasks.js";
import { answerSchemaFor, decisionFromAnswer, declined, questionOf } from "./pauses.js";

/** Progress and elicitation reach the client only when the reply streams. */
type McpContext = ProtocolContext;

/**
 * The id of an elicitation request names the interrupt it asks about, so the client's answer
 * decides it wherever it lands: the server keeps nothing between requests (any Lambda container
 * can take the answer while another one streams the waiting call).
 */
const ELICIT_ID = /^stepwise-elicit:(?<runId>[A-Za-z0-9_-]{1,80}):(?<interruptId>[A-Za-z0-9_:.-]{1,200})$/;

/**
 * The session id carries what the client declared at initialization (its elicitation support),
 * so a later request knows it without a session store: a random part, then the capabilities.
 * It grants nothing (every request carries the API key); a client that alters it only changes
 * how it is asked.
 */
function sessionIdFor(capabilities: ClientCapabilities | undefined): string {
  const declared = { elicitation: capabilities?.elicitation !== undefined };
  return `${crypto.randomUUID()}.${Buffer.from(JSON.stringify(declared)).toString("base64url")}`;
}

function declaredBy(sessionId: string | null): { elicitation: boolean } {
  const encoded = sessionId?.split(".")[1];
  if (!encoded) return { elicitation: false };
  try {
    return { elicitation: JSON.parse(Buffer.from(encoded, "base64url").toString("utf8"))?.elicitation === true };
  } catch {
    return { elicitation: false };
  }
}

/**
 * `POST /mcp` (Streamable HTTP, stateless): a fresh server and transport per request, as the SDK
 * requires for stateless use; `GET` (a server-initiated stream) and `DELETE` answer 405, which the
 * spec allows a server without such streams and sessions to keep.
 */
export async function handleMcp(request: Request, context: McpContext): Promise<Response> {
  if (request.method !== "POST") {
    return Response.json(
      {
        jsonrpc: "2.0",
        error: { code: -32000, message: `${request.method} is not supported on /mcp: send each request as a POST.` },
        id: null,
      },
      { status: 405, headers: { allow: "POST" } },
    );
  }
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return Response.json(
      { jsonrpc: "2.0", error: { code: -32700, message: "Parse error: the body is not JSON." }, id: null },
      { status: 400 },
    );
  }
  const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
  const answers = messages.filter(
    (m) => typeof m === "object" && m !== null && "id" in m && typeof m.id === "string" && ELICIT_ID.test(m.id) && !("method" in m),
  );
  if (answers.length > 0 && answers.length === messages.length) {
    for (const answer of answers) await decideFromElicitation(context, answer);
    return new Response(null, { status: 202 });
  }

  const declared = declaredBy(request.headers.get("mcp-session-id"));
  // The tools/call requests that ask for a task (`params.task`): they answer with the task at once.
  const taskCalls = new Set(
    messages.flatMap((m) =>
      typeof m === "object" &&
      m !== null &&
      "method" in m &&
      m.method === "tools/call" &&
      "id" in m &&
      (m.params as { task?: unknown } | undefined)?.task
        ? [m.id]
        : [],
    ),
  );
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !context.streaming });
  // run_task's description lists the tenant's saved agents: read them only for a tools/list.
  const listsTools = messages.some((m) => typeof m === "object" && m !== null && "method" in m && m.method === "tools/list");
  const presets = listsTools ? await context.services.savedAgents.list(context.tenantId) : [];
  const server = mcpServer(context, declared, transport, taskCalls, presets);
  await server.connect(transport);
  const response = await transport.handleRequest(request, { parsedBody: body });
  const initialize = messages.find((m) => typeof m === "object" && m !== null && "method" in m && m.method === "initialize") as
    | { params?: { capabilities?: ClientCapabilities } }
    | undefined;
  if (!initialize || response.status !== 200) return response;
  const headers = new Headers(response.headers);
  headers.set("mcp-session-id", sessionIdFor(initialize.params?.capabilities));
  return new Response(response.body, { status: response.status, headers });
}

const RunTaskInput = {
  input: CreateRunRequest.shape.input.describe("The task, in plain words."),
  mode: z
    .enum(["auto", "react", "plan_solve"])
    .optional()
    .describe("auto lets Stepwise choose; react for a quick agent loop; plan_solve plans steps and runs them."),
  files: CreateRunRequest.shape.files,
  sessionId: CreateRunRequest.shape.sessionId.describe("Continue this session (its earlier runs are the context)."),
  approval: z
    .object({ plan: z.boolean().optional(), tools: z.enum(["none", "write", "all"]).optional() })
    .optional()
    .describe("Pause for a person before executing the plan, and before write (or all) tool calls."),
  agent: CreateRunRequest.shape.agent.describe(
    "A saved agent (one of the presets listed in this tool's description): its latest version (analyst) or one version (analyst@3).",
  ),
  instructions: CreateRunRequest.shape.instructions.describe("Instructions for this run's agents (house rules, the answer's language)."),
};

/** run_task's description: what it does, then the tenant's saved agents a call can name. */
function runTaskDescription(presets: readonly SavedAgent[]): string {
  const base =
    "Starts a Stepwise run and waits for its answer (with the files it made as resource links). A run that pauses for a person asks through elicitation when the client supports it; otherwise the result says how to decide. A run longer than the call goes on: follow it with get_run. Called as a task, it answers with the task (the run id) at once.";
  if (presets.length === 0) return `${base}\nSaved agents (presets): none yet.`;
  const lines = presets.map((a) => {
    const facts = [`version ${a.version}`, a.mode, a.tools ? `tools: ${a.tools.join(", ")}` : ""].filter(Boolean).join("; ");
    return `- ${a.name} (${facts})${a.description ? `: ${a.description}` : ""}`;
  });
  return `${base}\nSaved agents (presets) to name as \`agent\`:\n${lines.join("\n")}`;
}

const RunId = { runId: z.string().describe("The run's id, as run_task gave it.") };

function mcpServer(
  context: McpContext,
  declared: { elicitation: boolean },
  transport: Transport,
  taskCalls: ReadonlySet<string | number>,
  presets: readonly SavedAgent[],
): McpServer {
  const { services, tenantId } = context;
  const tasks = new RunTaskStore(services, tenantId, services.settings.retentionDays * 86_400_000, (run) => describeRun(context, run));
  const server = new McpServer(
    { name: "stepwise", version: context.version },
    {
      capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: tasks,
      instructions:
        "Stepwise runs tasks with its agents. run_task starts a run and waits for its answer; long runs go on after the call: follow them with get_run, or call run_task as a task (tasks/get, tasks/result).",
    },
  );
  const follow = (run: RunRecord, extra: ToolExtra) =>
    followRun(context, run, extra, declared.elicitation && context.streaming ? transport : undefined);

  server.experimental.tasks.registerToolTask(
    "run_task",
    {
      title: "Run a task",
      description: runTaskDescription(presets),
      inputSchema: RunTaskInput,
      execution: { taskSupport: "optional" },
    },
    {
      createTask: async (args, extra) => {
        const taskCall = taskCalls.has(extra.requestId);
        const accept = () => acceptRun(services, tenantId, { ...args, mode: args.mode ?? "auto" }, { links: context.links });
        if (taskCall) {
          const { run } = await accept();
          return { task: await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl, context: { runId: run.runId } }) };
        }
        try {
          // A call that waits for its run holds one of the tenant's open streams, taken before the run is accepted.
          return await whileStreamOpen(services, tenantId, async () => {
            const { run } = await accept();
            return { task: await tasks.followedTask(run, await follow(run, extra)) };
          });
        } catch (error) {
          // A refused call (too many streams, an invalid run) answers with the refusal as a tool error.
          if (!(error instanceof StepwiseError && error.expose)) throw error;
          return { task: await tasks.followedTask(undefined, refusalOf(error)) };
        }
      },
      getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
    },
  );
  server.registerTool(
    "get_run",
    {
      title: "Follow a run",
      description: "A run's status; waits for its answer (or its next pause) like run_task. Call it again after a reconnect.",
      inputSchema: { ...RunId, wait: z.boolean().optional().describe("Wait for the answer (default true); false answers at once.") },
      annotations: { readOnlyHint: true },
    },
    async ({ runId, wait }, extra) => {
      const run = await ownRun(services, tenantId, runId);
      if (wait === false) return describeRun(context, run);
      try {
        return await whileStreamOpen(services, tenantId, () => follow(run, extra));
      } catch (error) {
        if (!(error instanceof StepwiseError && error.expose)) throw error;
        return refusalOf(error);
      }
    },
  );
  server.registerTool(
    "cancel_run",
    {
      title: "Cancel a run",
      description: "Stops a run that has not ended.",
      inputSchema: RunId,
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    async ({ runId }) => {
      const run = await ownRun(services, tenantId, runId);
      await cancelRun(services, run, "Cancelled through MCP.");
      return describeRun(context, (await services.runs.get(runId)) ?? run);
    },
  );
  server.registerTool(
    "decide",
    {
      title: "Decide what a run waits for",
      description:
        "Approve or reject a paused plan or tool call, answer a question of the run, or decide a failed tool call (retry, skip with a message, fail) (for clients without elicitation).",
      inputSchema: {
        ...RunId,
        interruptId: z.string().describe("The pause's id, as run_task or get_run gave it."),
        decision: z.enum(["approve", "reject", "answer", "retry", "skip", "fail"]),
        message: z
          .string()
          .max(8_000)
          .optional()
          .describe("The answer, why a call was rejected, or what the agent reads in a skipped call's place."),
      },
    },
    async ({ runId, interruptId, decision, message }) => {
      const run = await ownRun(services, tenantId, runId);
      await decide(context, run, interruptId, { decision, message });
      return describeRun(context, (await services.runs.get(runId)) ?? run);
    },
  );
  return server;
}

type ToolExtra = {
  requestId: string | number;
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (notification: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; message?: string };
  }) => Promise<void>;
};

/**
 * Follows the run from its event log until it ends, pauses (and the pause cannot be asked), or
 * the call's time is up: each event is a progress notification when the client asked for them,
 * and a pause is asked through elicitation once per interrupt when the client supports it.
 */
async function followRun(context: McpContext, run: RunRecord, extra: ToolExtra, elicitOn: Transport | undefined): Promise<CallToolResult> {
  const { services } = context;
  const deadline = Date.now() + context.waitMs;
  const asked = new Set<string>();
  const progressToken = extra._meta?.progressToken;
  let cursor = 0;
  let logEnded = false;
  for (;;) {
    const events = await services.events.list(run.runId, cursor, 100);
    for (const event of events) {
      cursor = event.seq;
      logEnded = TERMINAL_EVENTS.has(event.type);
      if (progressToken !== undefined) {
        await extra
          .sendNotification({ method: "notifications/progress", params: { progressToken, progress: event.seq, message: event.type } })
          .catch(() => undefined);
      }
    }
    const current = (await services.runs.get(run.runId)) ?? run;
    // The record ends a moment before its terminal event is appended: answer once both have, so the
    // last progress notification is the run's end.
    if (TERMINAL_STATUSES.has(current.status) && logEnded) return describeRun(context, current);
    if (current.status === "awaiting_input") {
      const pending = (await services.interrupts.list(run.runId)).filter((i) => i.status === "pending");
      if (!elicitOn) return describeRun(context, current, pending);
      for (const interrupt of pending.filter((i) => !asked.has(i.interruptId))) {
        asked.add(interrupt.interruptId);
        await askThroughElicitation(elicitOn, extra, interrupt);
      }
    }
    if (extra.signal.aborted || Date.now() >= deadline) return describeRun(context, current);
    if (events.length < 100) await new Promise((resolve) => setTimeout(resolve, services.settings.stream.pollMs));
  }
}

/**
 * Sends `elicitation/create` on the waiting call's stream, with an id that names the interrupt.
 * The answer comes back as its own POST (handleMcp → decideFromElicitation), and the run resumes.
 */
async function askThroughElicitation(transport: Transport, extra: ToolExtra, interrupt: Interrupt): Promise<void> {
  const message: JSONRPCMessage = {
    jsonrpc: "2.0",
    id: `stepwise-elicit:${interrupt.runId}:${interrupt.interruptId}`,
    method: "elicitation/create",
    params: { message: questionOf(interrupt), requestedSchema: answerSchemaFor(interrupt.kind) },
  };
  await transport.send(message, { relatedRequestId: extra.requestId });
}

/** The client's answer to an elicitation: accept decides as filled in, decline rejects, cancel leaves the pause open. */
async function decideFromElicitation(context: McpContext, answer: JSONRPCMessage): Promise<void> {
  // Answers were picked by ELICIT_ID, so both groups are there.
  const { runId, interruptId } = ELICIT_ID.exec((answer as { id: string }).id)?.groups ?? {};
  if (!runId || !interruptId || !("result" in answer)) return;
  const result = answer.result as Record<string, unknown>;
  const run = await ownRun(context.services, context.tenantId, runId);
  const interrupt = await context.services.interrupts.get(run.runId, interruptId);
  if (interrupt?.status !== "pending") return;
  const refused = declined(interrupt.kind, "Declined through MCP elicitation.");
  // The form's fields.
  // biome-ignore lint/complexity/useLiteralKeys: the IAM-coverage graph counts every `.content` read as a model call's
  const fields = result["content"];
  const request =
    result.action === "decline"
      ? refused
      : result.action === "accept"
        ? (decisionFromAnswer(interrupt.kind, fields) ?? refused)
        : undefined;
  if (request)
    await decide(context, run, interruptId, request).catch((error) =>
      error instanceof StepwiseError && error.statusCode === 409 ? undefined : Promise.reject(error),
    );
}

function decide(context: McpContext, run: RunRecord, interruptId: string, request: ResolveInterruptRequest) {
  return decidePause(context.services, context.tenantId, run, interruptId, request);
}

/**
 * A run Stepwise refused, as MCP's tool execution error (the spec's place for invalid input and
 * business-logic errors, so the model can correct its call): the message as text, and the error as
 * the REST API gives it (status, code, details) in structuredContent.
 */
function refusalOf(error: StepwiseError): CallToolResult {
  return {
    content: [{ type: "text", text: error.message }],
    structuredContent: {
      error: { status: error.statusCode, code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) },
    },
    isError: true,
  };
}

/** The run as a tool result: the answer and its files when it ended, otherwise where it is and what to do next. */
async function describeRun(context: McpContext, run: RunRecord, pending?: Interrupt[]): Promise<CallToolResult> {
  const { files, interrupts } = await ownRunSnapshot(context.services, context.tenantId, run.runId);
  const waiting = pending ?? interrupts.filter((i) => i.status === "pending");
  const fileLink = (name: string) => `${context.links.api}/v1/runs/${run.runId}/files/${encodeURIComponent(name)}`;
  const structured = {
    runId: run.runId,
    sessionId: run.sessionId,
    status: run.status,
    result: run.result ?? null,
    error: run.error?.message ?? null,
    pendingInterrupts: waiting.map((i) => ({ interruptId: i.interruptId, kind: i.kind, summary: i.summary, question: i.question ?? null })),
    files: files.map((f) => ({ name: f.name, contentType: f.contentType, bytes: f.bytes, uri: fileLink(f.name) })),
  };
  let text: string;
  if (run.status === "succeeded") text = run.result ?? "";
  else if (TERMINAL_STATUSES.has(run.status)) text = `Run ${run.runId} ${run.status}${run.error?.message ? `: ${run.error.message}` : "."}`;
  else if (waiting.length > 0) {
    text = [
      `Run ${run.runId} is waiting for a person:`,
      ...waiting.map((i) => `- ${i.interruptId} (${i.kind}): ${i.question ?? i.summary}`),
      `Decide with the decide tool (runId, interruptId, decision: ${waiting.some((i) => i.kind === "ask_user") ? "answer with a message" : waiting.some((i) => i.kind === "tool_failure") ? "retry, skip with a message, or fail" : "approve or reject"}), or POST ${context.links.api}/v1/runs/${run.runId}/interrupts/{interruptId}; then call get_run to wait for the answer.`,
    ].join("\n");
  } else text = `Run ${run.runId} is ${run.status}; call get_run with its runId to wait for the answer.`;
  return {
    content: [
      { type: "text", text },
      ...files.map((f) => ({
        type: "resource_link" as const,
        uri: fileLink(f.name),
        name: f.name,
        mimeType: f.contentType,
        description: f.description || undefined,
      })),
    ],
    structuredContent: structured,
    isError: run.status === "failed" || run.status === "timed_out" || run.status === "blocked",
  };
}
