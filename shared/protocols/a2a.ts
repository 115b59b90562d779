import {
  AgentCard,
  type Artifact,
  type Message,
  type Part,
  Role,
  StreamResponse,
  type Task,
  TaskState,
  type TaskStatusUpdateEvent,
} from "@a2a-js/sdk";
import { V03PushNotificationSerializer } from "@a2a-js/sdk/compat/v0_3/server";
import type { SavedAgent } from "../contracts/agents.js";
import type { RunEvent } from "../contracts/events.js";
import type { Interrupt } from "../contracts/interrupts.js";
import { DECISIONS_BY_KIND } from "../contracts/interrupts.js";
import type { A2APush, RunRecord, RunStatus } from "../contracts/run.js";
import type { FileMeta } from "../ports/files.js";
import type { SecretCipher } from "../ports/secretCipher.js";

/**
 * The A2A view of Stepwise (A2A 1.0, through the official SDK's types): one run is one task (task
 * id = run id), its session is the task's context, and the run's status is the task's state.
 * Everything here is a pure mapping, so the JSON-RPC server (a2aServer.ts) and the signed push
 * notifications (run/endAndNotify.ts) say the same thing about a run.
 */

/** Where the JSON-RPC endpoint lives, under the stream's base URL (it streams there on AWS). */
const A2A_PATH = "/a2a";

const STATES: Record<RunStatus, TaskState> = {
  queued: TaskState.TASK_STATE_SUBMITTED,
  running: TaskState.TASK_STATE_WORKING,
  awaiting_input: TaskState.TASK_STATE_INPUT_REQUIRED,
  succeeded: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  // A run past its time limit failed to answer; one stopped by a newer message of its session was cancelled.
  timed_out: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
  interrupted: TaskState.TASK_STATE_CANCELED,
  // A guardrail check refused the input or the answer: the agent declined the task.
  blocked: TaskState.TASK_STATE_REJECTED,
  // Ended at its budget with a summary of what it did: an answer, if not the whole one.
  budget_exhausted: TaskState.TASK_STATE_COMPLETED,
};

/** The task's state; a run that waits for a person only while a pause is still undecided. */
function taskStateOf(run: RunRecord, pending: readonly Interrupt[]): TaskState {
  if (run.status === "awaiting_input" && pending.length === 0) return TaskState.TASK_STATE_WORKING;
  return STATES[run.status];
}

export const isFinal = (state: TaskState) =>
  [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED].includes(
    state,
  );

const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, mediaType: "text/plain", filename: "", metadata: {} });
const dataPart = (data: unknown): Part => ({
  content: { $case: "data", value: data },
  mediaType: "application/json",
  filename: "",
  metadata: {},
});

function agentMessage(run: Pick<RunRecord, "runId" | "sessionId">, id: string, parts: Part[]): Message {
  return {
    messageId: `${run.runId}:${id}`,
    contextId: run.sessionId,
    taskId: run.runId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/** How to answer a pause, in the words of the status message. */
function howToReply(interrupt: Interrupt): string {
  if (interrupt.kind === "ask_user") return "Reply on this task with your answer.";
  if (interrupt.kind === "tool_failure")
    return "Reply on this task with 'retry', 'skip: <what the agent reads instead>', or 'fail: <why>'.";
  return "Reply on this task with 'approve', or 'reject: <why>'.";
}

/** What the task's status says beside its state: the pause to decide, or why it ended. */
function statusMessage(run: RunRecord, pending: readonly Interrupt[]): Message | undefined {
  if (pending.length > 0) {
    const lines = pending.map((i) => `${i.question ?? i.summary}\n${howToReply(i)}`);
    const more =
      pending.length > 1
        ? `\n(${pending.length} pauses: a reply decides the first; name another with a data part {"interruptId": …}.)`
        : "";
    const pauses = pending.map((i) => ({
      interruptId: i.interruptId,
      kind: i.kind,
      summary: i.summary,
      ...(i.question ? { question: i.question } : {}),
      ...(i.toolName ? { toolName: i.toolName, arguments: i.arguments ?? {} } : {}),
      decisions: DECISIONS_BY_KIND[i.kind].filter((d) => d !== "edit"),
    }));
    return agentMessage(run, `pause:${pending[0].interruptId}`, [textPart(lines.join("\n\n") + more), dataPart({ interrupts: pauses })]);
  }
  if (run.status === "failed" || run.status === "timed_out")
    return agentMessage(run, "error", [textPart(run.error?.message ?? `The run ${run.status === "timed_out" ? "timed out" : "failed"}.`)]);
  if (run.status === "blocked") return agentMessage(run, "error", [textPart(run.error?.message ?? "A guardrail check blocked the run.")]);
  if (run.status === "cancelled" || run.status === "interrupted")
    return agentMessage(run, "cancelled", [textPart(run.error?.message ?? "The run was cancelled.")]);
  return undefined;
}

/** A working status update saying what the run does now (its message id names the log event). */
export function progressUpdate(run: Pick<RunRecord, "runId" | "sessionId">, event: RunEvent, line: string): TaskStatusUpdateEvent {
  return workingUpdate(run, `e${event.seq}`, event.at, line);
}

/** A working status update with `line` as its message (`id` names what it tells, `at` when it happened). */
export function workingUpdate(run: Pick<RunRecord, "runId" | "sessionId">, id: string, at: string, line: string): TaskStatusUpdateEvent {
  return {
    taskId: run.runId,
    contextId: run.sessionId,
    status: { state: TaskState.TASK_STATE_WORKING, message: agentMessage(run, id, [textPart(line)]), timestamp: at },
    metadata: {},
  };
}

/** Where the API serves a run's file (a redirect to its bytes, with the API key). */
const fileUrl = (api: string, runId: string, name: string) => `${api}/v1/runs/${runId}/files/${encodeURIComponent(name)}`;

/** A completed task's artifacts: the answer, then each file of the run as a link. */
function artifactsOf(run: RunRecord, files: readonly FileMeta[], api: string): Artifact[] {
  if (run.status !== "succeeded") return [];
  const answer: Artifact = {
    artifactId: "answer",
    name: "answer",
    description: "The run's answer.",
    parts: [textPart(run.result ?? "")],
    metadata: {},
    extensions: [],
  };
  return [
    answer,
    ...files.map((f) => ({
      artifactId: `file:${f.name}`,
      name: f.name,
      description: f.description,
      parts: [
        {
          content: { $case: "url" as const, value: fileUrl(api, run.runId, f.name) },
          mediaType: f.contentType,
          filename: f.name,
          metadata: { bytes: f.bytes },
        },
      ],
      metadata: {},
      extensions: [],
    })),
  ];
}

/** An A2A task as Stepwise builds it: always with a status. */
export type TaskWithStatus = Task & { status: NonNullable<Task["status"]> };

/** The run as an A2A task. Its history is the message that started it. */
export function taskOf(run: RunRecord, interrupts: readonly Interrupt[], files: readonly FileMeta[], api: string): TaskWithStatus {
  const pending = pendingOf(interrupts);
  const input: Message = {
    messageId: `${run.runId}:input`,
    contextId: run.sessionId,
    taskId: run.runId,
    role: Role.ROLE_USER,
    parts: [textPart(run.input)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
  return {
    id: run.runId,
    contextId: run.sessionId,
    status: { state: taskStateOf(run, pending), message: statusMessage(run, pending), timestamp: run.endedAt ?? run.updatedAt },
    artifacts: artifactsOf(run, files, api),
    history: [input],
    metadata: { stepwise: { runId: run.runId, status: run.status, ...(run.links ? { links: run.links } : {}) } },
  };
}

export const pendingOf = (interrupts: readonly Interrupt[]) =>
  interrupts
    .filter((i) => i.status === "pending")
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.interruptId.localeCompare(b.interruptId));

/** The push notification's body: the whole task (with its status message and artifacts), as a StreamResponse. */
export function pushBody(push: A2APush, task: Task): string {
  return serializePush(push, { payload: { $case: "task", value: task } }, task);
}

/** A status update's push body (the task is working, and says on what): the update alone, as a StreamResponse. */
export function pushUpdateBody(push: A2APush, update: TaskStatusUpdateEvent): string {
  return serializePush(push, { payload: { $case: "statusUpdate", value: update } });
}

function serializePush(push: A2APush, response: StreamResponse, task?: Task): string {
  if (push.wireVersion === "0.3") return new V03PushNotificationSerializer().serialize(response, task).body;
  return JSON.stringify(StreamResponse.toJSON(response));
}

/** A push config with its token and credentials as S: sealed as kept, or strings as the client set them. */
type PushWith<S> = Omit<A2APush, "token" | "authentication"> & { token?: S; authentication?: { scheme: string; credentials: S } };

/** A push config as the client set it: its token and credentials in the clear (only ever in memory). */
export type OpenedPush = PushWith<string>;

/** The KMS encryption context of a push config's secrets: a sealed token opens only for its tenant and config. */
export const pushContext = (tenantId: string, configId: string) => ({ purpose: "a2a-push-config", tenantId, config: configId });

/** The config as it is kept: its token and credentials sealed. */
export function sealPush(cipher: SecretCipher, tenantId: string, push: OpenedPush): Promise<A2APush> {
  return mapSecrets(push, (value) => cipher.seal(value, pushContext(tenantId, push.id)));
}

/** The config with its token and credentials opened: to send a push, or to show the owner their own config. */
export function openPush(cipher: SecretCipher, tenantId: string, push: A2APush): Promise<OpenedPush> {
  return mapSecrets(push, async (value) => (typeof value === "string" ? value : cipher.open(value, pushContext(tenantId, push.id))));
}

async function mapSecrets<A, B>(push: PushWith<A>, change: (value: A) => Promise<B>): Promise<PushWith<B>> {
  const { token, authentication, ...rest } = push;
  return {
    ...rest,
    ...(token ? { token: await change(token) } : {}),
    ...(authentication ? { authentication: { scheme: authentication.scheme, credentials: await change(authentication.credentials) } } : {}),
  };
}

/** The headers A2A receivers read, beside the signature: the body's type, and the config's credentials or its token. */
export function pushHeaders(push: OpenedPush): Record<string, string> {
  const type = { "content-type": push.wireVersion === "1.0" ? "application/a2a+json" : "application/json" };
  if (push.authentication) return { ...type, authorization: `${push.authentication.scheme} ${push.authentication.credentials}` };
  if (push.token) return { ...type, "x-a2a-notification-token": push.token };
  return type;
}

/** The API's base URL, from the run's own link (fixed at submission). */
export const apiOf = (run: RunRecord) => run.links?.self.replace(/\/v1\/runs\/[^/]+$/, "") ?? "";

/**
 * The skills: one per way Stepwise runs a task (the message's `metadata.skill` or `metadata.mode`
 * picks one; auto by default), and on the extended card one per saved agent of the caller's tenant.
 */
const SKILLS = [
  {
    id: "auto",
    name: "Auto",
    description: "Stepwise chooses: a direct answer, one agent with tools, or a plan of steps.",
    examples: ["What is 17*23?"],
  },
  {
    id: "react",
    name: "Agent with tools",
    description: "One agent that reasons and calls tools (web, files, code, documents) until it can answer.",
    examples: ["Read the attached CSV and sum its second column."],
  },
  {
    id: "plan_solve",
    name: "Plan and solve",
    description:
      "Plans the task as steps, runs them (in parallel where it can) and writes the answer; files it writes come back as artifacts.",
    examples: ["Compute 17*23 and (120/8)+2^5, then write a short report"],
  },
];

/** The agent card (A2A 1.0, with the 0.3 binding at the same URL for older clients). */
export function agentCard(urls: { api: string; stream: string }, version: string, savedAgents?: readonly SavedAgent[]): AgentCard {
  const skills = [
    ...SKILLS,
    ...(savedAgents ?? []).map((agent) => ({
      id: agent.name,
      name: agent.name,
      description: `${agent.description ?? "A saved agent."} (version ${agent.version}${agent.tools ? `; tools: ${agent.tools.join(", ")}` : ""})`,
      examples: [],
    })),
  ];
  const url = `${urls.stream}${A2A_PATH}`;
  return {
    name: "Stepwise",
    description:
      "Runs tasks with Stepwise's agents. A task may pause for a person (a plan or a tool call to approve, a question): it is then input-required, and a reply on the task decides it.",
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" },
      { url, protocolBinding: "JSONRPC", protocolVersion: "0.3", tenant: "" },
    ],
    provider: { organization: "Stepwise", url: urls.api },
    version,
    documentationUrl: `${urls.api}/v1/openapi.json`,
    // The extended card (an authenticated call) adds the tenant's saved agents as skills.
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: "httpAuthSecurityScheme",
          value: { scheme: "Bearer", bearerFormat: "Stepwise API key", description: "The API key: Authorization: Bearer <key>." },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ["text/plain", "application/json", "application/octet-stream"],
    defaultOutputModes: ["text/plain", "text/markdown", "application/octet-stream"],
    skills: skills.map((s) => ({ ...s, tags: [s.id], inputModes: [], outputModes: [], securityRequirements: [] })),
    signatures: [],
  };
}

export const agentCardJson = (urls: { api: string; stream: string }, version: string) => AgentCard.toJSON(agentCard(urls, version));

/** A model call's retry in one line: whose call, why it failed, which retry of how many, and when. */
export function modelRetryLine(retry: {
  agent: string;
  taskId?: string;
  attempt: number;
  retries: number;
  reason: string;
  waitMs: number;
}): string {
  const { agent, taskId, attempt, retries, reason, waitMs } = retry;
  return `The ${taskId ? `${agent} of ${taskId}` : agent}'s model call failed (${reason}): retry ${attempt} of ${retries} in ${(waitMs / 1000).toFixed(1)} s`;
}
