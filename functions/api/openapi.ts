import * as z from "zod";
import { AgentRef, SaveAgentRequest, SavedAgent } from "../../shared/contracts/agents.js";
import { CreateRunRequest, EventsQuery, Id, TasksQuery, TenantSettings } from "../../shared/contracts/api.js";
import {
  CompleteUploadRequest,
  PendingUploadView,
  PresignedUploadRequest,
  ResignUploadRequest,
  UploadLinksView,
} from "../../shared/contracts/files.js";
import { ResolveInterruptRequest } from "../../shared/contracts/interrupts.js";
import { RunsQuery, SessionsQuery } from "../../shared/contracts/listings.js";
import { SavePolicyRequest, ToolPolicy } from "../../shared/contracts/policies.js";
import { ExportedRun, ForkRunRequest, ReplayComparison, ReplayRunRequest } from "../../shared/contracts/replay.js";
import * as R from "../../shared/contracts/responses.js";
import { CreateToolSourceRequest } from "../../shared/contracts/toolSources.js";
import { type HttpResult, json } from "../http.js";
import { VERSION } from "./health.js";

/** One operation of the API, described by the same zod schemas the handlers validate with. */
interface Operation {
  method: "get" | "post" | "put" | "delete";
  path: string;
  summary: string;
  tag: string;
  /** Answers without an API key. */
  public?: boolean;
  query?: z.ZodObject;
  headers?: { name: string; description: string; schema: z.ZodType }[];
  body?: { schema: z.ZodType; example: unknown };
  /** A body that is not JSON (uploads): its media types and schemas as written. */
  rawBody?: Record<string, { schema: Record<string, unknown> }>;
  responses: Record<number, { description: string; schema?: z.ZodType; example?: unknown; contentType?: string }>;
}

const runId = "run_mi9x2k1a3b4c5d6e7f8a9b0c1d2";
const stamp = "2026-11-23T10:00:00.000Z";
const links = {
  self: `https://api.example.com/v1/runs/${runId}`,
  events: `https://api.example.com/v1/runs/${runId}/events`,
  stream: `https://stream.example.com/v1/runs/${runId}/stream`,
};
const usage = { promptTokens: 1520, completionTokens: 310, llmCalls: 6, toolCalls: 3 };
const runSummaryExample = {
  runId,
  sessionId: "ses_mi9x2k1a",
  status: "succeeded",
  queuedBehind: null,
  requestedMode: "plan_solve",
  mode: "plan_solve",
  input: "Compute 17*23 and write a short report",
  usage,
  estimatedCostUsd: 0.000414,
  createdAt: stamp,
  updatedAt: stamp,
  endedAt: stamp,
};

/** Every route the API serves (the route coverage test holds this and the router together). */
export const OPERATIONS: Operation[] = [
  {
    method: "post",
    path: "/v1/runs",
    summary: "Submit a task",
    tag: "Runs",
    headers: [
      {
        name: "Idempotency-Key",
        description: "The same key and body give back the same run (1 to 255 visible ASCII characters).",
        schema: z.string().min(1).max(255),
      },
    ],
    body: {
      schema: CreateRunRequest,
      example: {
        input: "Compute 17*23 and (120/8)+2^5, then write a short report",
        mode: "plan_solve",
        approval: { plan: false, tools: "write" },
      },
    },
    responses: {
      202: {
        description: "Accepted: the run is queued.",
        schema: R.CreateRunResponse,
        example: { runId, sessionId: "ses_mi9x2k1a", status: "queued", links },
      },
      409: {
        description:
          "The session has a run in flight and `multitask` is `reject` (the default): `error.details` names it (`activeRunId`, `status`, `links`); nothing was created.",
      },
      413: { description: "Body over 256 KiB (refused before it is read) or input over the character limit." },
      415: { description: "The body is not JSON." },
      429: { description: "Too many runs going for this key; see Retry-After." },
    },
  },
  {
    method: "get",
    path: "/v1/runs",
    summary: "List runs, newest first",
    tag: "Runs",
    query: RunsQuery,
    responses: {
      200: {
        description: "A page of runs; pass nextCursor as cursor for the next one.",
        schema: R.RunList,
        example: { runs: [runSummaryExample], nextCursor: null },
      },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}",
    summary: "A run: status, plan, tasks, interrupts, result, files, usage",
    tag: "Runs",
    responses: {
      200: {
        description:
          "The run, within 1 MB of JSON whatever it holds: the first page of its tasks (nextTasksCursor goes on at GET /v1/runs/{runId}/tasks), each task's result previewed (at most 4,000 UTF-8 bytes) with a link to the whole.",
        schema: R.RunView,
      },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/tasks",
    summary: "A page of a run's tasks, after a cursor",
    tag: "Runs",
    query: TasksQuery,
    responses: {
      200: {
        description:
          "Tasks in step then task order, each result previewed: at most `limit`, fewer when their JSON would pass 1 MB. Pass nextCursor as cursor for the next page.",
        schema: R.TaskPage,
      },
      400: { description: "A cursor this API did not give out, or a limit outside 1–500." },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/tasks/{taskId}/result",
    summary: "A task's whole result",
    tag: "Runs",
    responses: {
      200: {
        description:
          "The whole result as text/markdown when the task's record holds it; with Accept: application/json, {taskId, bytes, text} or {taskId, bytes, url}.",
        schema: R.TaskResultView,
      },
      302: { description: "Redirect (Location) to a short-lived link to the run file that holds a long result whole." },
      404: { description: "The run (or this tenant's run) has no such task." },
      409: { description: "The task is still running: it has no result yet." },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/events",
    summary: "A run's events after a sequence number",
    tag: "Runs",
    query: EventsQuery,
    responses: {
      200: {
        description: "Events in order.",
        schema: R.EventList,
        example: {
          runId,
          events: [{ seq: 1, at: stamp, type: "run.started", data: { mode: "plan_solve", input: "Compute 17*23" } }],
          next: { after: 1 },
        },
      },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/stream",
    summary: "A run's events as Server-Sent Events (on AWS at the stream URL, links.stream)",
    tag: "Runs",
    query: z.strictObject({
      after: z.coerce.number().int().min(0).optional(),
      token: z
        .string()
        .optional()
        .describe("A stream token from POST /v1/runs/{runId}/stream-token, for browsers; instead of the Authorization header."),
      protocol: z
        .enum(["ag-ui"])
        .optional()
        .describe(
          "ag-ui: the events as AG-UI events (`data:` an AG-UI event, `id:` <seq>.<index>); also chosen by `Accept: application/vnd.ag-ui.event+json`.",
        ),
    }),
    headers: [
      {
        name: "Last-Event-ID",
        description: "Resume after this event: no gap, no duplicate (in the AG-UI view, <seq>.<index>).",
        schema: z.string(),
      },
    ],
    responses: {
      200: {
        description: "`event:` is the event type, `id:` its sequence number, `data:` the event as JSON; closes after the terminal event.",
        contentType: "text/event-stream",
        schema: z.string(),
        example: `id: 1\nevent: run.started\ndata: {"seq":1,"type":"run.started","data":{"mode":"react","input":"Hi"},"at":"${stamp}"}\n\n`,
      },
      429: {
        description:
          "The tenant holds as many open streams as it may (MAX_OPEN_STREAMS_PER_TENANT, or its own `maxOpenStreams`): `too_many_streams`, see Retry-After.",
      },
    },
  },
  {
    method: "post",
    path: "/v1/runs/{runId}/stream-token",
    summary: "A short-lived token that opens this run's stream (EventSource cannot send headers)",
    tag: "Runs",
    responses: {
      201: {
        description: "Read-only, this run only, valid until expiresAt.",
        schema: R.StreamToken,
        example: { token: "st_Qm9vZ2xlIHNheXMgaGVsbG8gdG8geW91", expiresAt: stamp },
      },
    },
  },
  {
    method: "post",
    path: "/v1/runs/{runId}/interrupts/{interruptId}",
    summary: "Approve, reject, edit or answer what the run waits for",
    tag: "Interrupts",
    body: { schema: ResolveInterruptRequest, example: { decision: "reject", message: "No files today." } },
    responses: {
      202: { description: "Decided; the run resumes.", schema: R.InterruptView },
      409: { description: "Already decided, or this decision does not fit the interrupt." },
    },
  },
  {
    method: "post",
    path: "/v1/files",
    summary:
      "Upload a file for later runs: up to 4 MiB inline (multipart/form-data, or the raw bytes with ?name=), up to 5 GiB through presigned links (JSON {name, bytes})",
    tag: "Files",
    query: z.strictObject({
      name: z.string().optional().describe("The file's name, for a raw body (sanitized: no path, no control characters)."),
    }),
    rawBody: {
      "application/json": {
        schema: {
          ...z.toJSONSchema(PresignedUploadRequest, { io: "input" }),
          description:
            "Without ?name=: announce a file to upload straight to storage. The answer holds a link per part (16 MiB each; one link up to 16 MiB): PUT each part's exact bytes with `headers` to its link (the link signs the length, and a single link the type), then POST the parts' ETags to `complete`; expired links are signed again by `resign`.",
        },
      },
      "multipart/form-data": {
        schema: {
          type: "object",
          properties: {
            file: {
              type: "string",
              contentMediaType: "application/octet-stream",
              description: "The file (the first file part; its filename is the file's name).",
            },
          },
          required: ["file"],
        },
      },
      "*/*": {
        schema: {
          type: "string",
          contentMediaType: "application/octet-stream",
          description: "The raw bytes, named by ?name=; the Content-Type is kept (or taken from the name's extension).",
        },
      },
    },
    responses: {
      201: {
        description:
          "Inline: stored; pass fileId in POST /v1/runs `files`. JSON: the upload links (PendingUploadView); the file exists once completed.",
        schema: z.union([R.UploadView, PendingUploadView]),
        example: { fileId: "file_mi9x2k1a", name: "sales.csv", description: "", contentType: "text/csv", bytes: 112, createdAt: stamp },
      },
      413: {
        description:
          "Inline: a file over 4 MiB (or MAX_UPLOAD_BYTES if lower; use the JSON form), a request body over 10 MiB (API Gateway's limit; refused before it is read when Content-Length says so), or a request over 6 MB as the function receives it (Lambda's limit). JSON: a file announced over MAX_UPLOAD_BYTES (5 GiB by default).",
      },
    },
  },
  {
    method: "post",
    path: "/v1/files/{fileId}/complete",
    summary: "Complete a presigned upload: the file exists from now on",
    tag: "Files",
    body: {
      schema: CompleteUploadRequest,
      example: {
        parts: [
          { partNumber: 1, etag: '"9b2cf535f27731c974343645a3985328"' },
          { partNumber: 2, etag: '"6f5902ac237024bdd0c176cb93063dc4"' },
        ],
      },
    },
    responses: {
      201: { description: "The file, as an inline upload answers it; completing again answers the same.", schema: R.UploadView },
      400: {
        description:
          "A part is missing, its ETag does not match (`upload_incomplete`), or the bytes uploaded are not the size announced (`upload_size_mismatch`).",
      },
    },
  },
  {
    method: "post",
    path: "/v1/files/{fileId}/parts",
    summary: "Fresh links for parts of a presigned upload not sent yet (links expire; a long upload outlives them)",
    tag: "Files",
    body: { schema: ResignUploadRequest, example: { partNumbers: [7, 8, 9] } },
    responses: {
      200: { description: "A link per part asked for, signed now, and the headers each PUT must carry.", schema: UploadLinksView },
      400: { description: "No part numbers, or a part this upload does not have (`unknown_part`)." },
      404: { description: "The tenant has no such upload." },
      409: { description: "The upload is complete already." },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/files",
    summary: "A run's files, each with its download link",
    tag: "Files",
    responses: { 200: { description: "The files.", schema: R.FileList } },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/files/{name}",
    summary: "Download a file of the run (a report, a tool's output)",
    tag: "Files",
    responses: {
      200: { description: "With Accept: application/json, the short-lived link itself.", schema: z.object({ url: z.string() }) },
      302: { description: "Redirect (Location) to a short-lived presigned URL of the file's bytes." },
    },
  },
  {
    method: "post",
    path: "/v1/runs/{runId}/cancel",
    summary: "Cancel a run",
    tag: "Runs",
    responses: {
      202: { description: "Cancelled.", schema: R.CancelResponse, example: { runId, status: "cancelled" } },
      409: { description: "The run has already ended." },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/webhooks",
    summary: "The run's webhook deliveries and their attempts",
    tag: "Webhooks",
    responses: { 200: { description: "Deliveries.", schema: R.WebhookDeliveries } },
  },
  {
    method: "post",
    path: "/v1/runs/{runId}/webhooks/{deliveryId}/redeliver",
    summary: "Deliver a webhook message again",
    tag: "Webhooks",
    responses: { 202: { description: "Queued.", schema: R.RedeliverResponse }, 409: { description: "Still being attempted." } },
  },
  {
    method: "get",
    path: "/v1/sessions",
    summary: "List sessions, newest first",
    tag: "Sessions",
    query: SessionsQuery,
    responses: {
      200: {
        description: "A page of sessions.",
        schema: R.SessionList,
        example: { sessions: [{ sessionId: "ses_mi9x2k1a", createdAt: stamp, updatedAt: stamp, lastRunId: runId }], nextCursor: null },
      },
    },
  },
  {
    method: "get",
    path: "/v1/sessions/{sessionId}",
    summary: "A session's messages across runs",
    tag: "Sessions",
    responses: { 200: { description: "The conversation.", schema: R.SessionView } },
  },
  {
    method: "delete",
    path: "/v1/sessions/{sessionId}",
    summary: "Forget a session",
    tag: "Sessions",
    responses: { 204: { description: "Forgotten." }, 409: { description: "The session has a run in flight." } },
  },
  {
    method: "get",
    path: "/v1/settings",
    summary: "The tenant's defaults",
    tag: "Service",
    responses: { 200: { description: "The settings.", schema: R.Settings, example: { multitask: "reject" } } },
  },
  {
    method: "put",
    path: "/v1/settings",
    summary:
      'Change the tenant\'s defaults (`multitask`: what a run sent to a busy session does when it names none; `instructions`: what every agent of its runs follows, "" removes them)',
    tag: "Service",
    body: { schema: TenantSettings, example: { multitask: "enqueue", instructions: "Answer in French. Cite a source for every figure." } },
    responses: { 200: { description: "The settings now.", schema: R.Settings, example: { multitask: "enqueue" } } },
  },
  {
    method: "get",
    path: "/v1/agents",
    summary: "The tenant's saved agents (the latest version of each)",
    tag: "Agents",
    responses: { 200: { description: "Saved agents.", schema: z.object({ agents: z.array(SavedAgent) }) } },
  },
  {
    method: "post",
    path: "/v1/agents/{agent}",
    summary: 'Save a new version of an agent (the first save creates it); a run names it as `agent: "name"` or `"name@version"`',
    tag: "Agents",
    body: {
      schema: SaveAgentRequest,
      example: {
        description: "Analyses spreadsheets and writes a report.",
        mode: "plan_solve",
        instructions: "Answer in English. Plan: read the data, compute, then report.",
        roles: { summarizer: { temperature: 0.2 } },
        tools: ["run_code", "read_artifact", "write_report"],
        approval: { tools: "write" },
      },
    },
    responses: {
      201: { description: "The saved version.", schema: SavedAgent },
      400: { description: "A tool the tenant lacks, a model the deployment does not offer, or instructions over the limit." },
    },
  },
  {
    method: "get",
    path: "/v1/agents/{agent}",
    summary: "A saved agent: its latest version (`analyst`) or one version (`analyst@3`)",
    tag: "Agents",
    responses: { 200: { description: "The version.", schema: SavedAgent }, 404: { description: "No such agent or version." } },
  },
  {
    method: "get",
    path: "/v1/agents/{agent}/versions",
    summary: "Every version of a saved agent, oldest first",
    tag: "Agents",
    responses: { 200: { description: "Versions.", schema: z.object({ versions: z.array(SavedAgent) }) } },
  },
  {
    method: "delete",
    path: "/v1/agents/{agent}",
    summary: "Delete a saved agent, every version (runs that named it keep what they resolved)",
    tag: "Agents",
    responses: { 204: { description: "Deleted." }, 404: { description: "No such agent." } },
  },
  {
    method: "get",
    path: "/v1/policies",
    summary: "The tenant's tool policies in force (the latest version of each)",
    tag: "Policies",
    responses: { 200: { description: "Policies.", schema: z.object({ policies: z.array(ToolPolicy) }) } },
  },
  {
    method: "put",
    path: "/v1/policies/{policy}",
    summary:
      "Save a new version of a tool policy (Cedar forbid statements, checked against the tenant's tool catalogue), in force at once; `log_only` only reports what it would decide",
    tag: "Policies",
    body: {
      schema: SavePolicyRequest,
      example: {
        description: "No large files; payments over 500 need a person.",
        mode: "log_only",
        cedar:
          '@reason("Artifacts may have at most 1,000 characters.")\nforbid(principal, action == Action::"write_artifact", resource) when { context.sizes.content > 1000 };',
      },
    },
    responses: {
      201: { description: "The saved version.", schema: ToolPolicy },
      400: {
        description: "Cedar that does not parse, a permit, or a tool, argument or type the catalogue does not have; nothing is saved.",
      },
    },
  },
  {
    method: "get",
    path: "/v1/policies/{policy}",
    summary: "A tool policy: its latest version (`artifact-size`) or one version (`artifact-size@2`)",
    tag: "Policies",
    responses: { 200: { description: "The version.", schema: ToolPolicy }, 404: { description: "No such policy or version." } },
  },
  {
    method: "get",
    path: "/v1/policies/{policy}/versions",
    summary: "Every version of a tool policy, oldest first",
    tag: "Policies",
    responses: { 200: { description: "Versions.", schema: z.object({ versions: z.array(ToolPolicy) }) } },
  },
  {
    method: "delete",
    path: "/v1/policies/{policy}",
    summary: "Delete a tool policy, every version: it no longer applies to any call",
    tag: "Policies",
    responses: { 204: { description: "Deleted." }, 404: { description: "No such policy." } },
  },
  {
    method: "post",
    path: "/v1/runs/{runId}/resume",
    summary: "Resume a failed run at the step that failed (or start its execution again if it is gone)",
    tag: "Runs",
    responses: {
      202: { description: "Resuming.", schema: z.object({ runId: z.string(), status: z.string() }) },
      409: { description: "Nothing to resume." },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/trace",
    summary:
      "The run as OpenTelemetry spans (GenAI semantic conventions 1.41.0: invoke_agent, chat, execute_tool) in OTLP's JSON encoding, ready to POST to an OTLP/HTTP /v1/traces",
    tag: "Runs",
    responses: {
      200: {
        description: "An OTLP ExportTraceServiceRequest.",
        schema: z.object({ resourceSpans: z.array(z.object({ resource: z.unknown(), scopeSpans: z.array(z.unknown()) })) }),
      },
    },
  },
  {
    method: "post",
    path: "/v1/runs/{runId}/replay",
    summary: "Replay an ended run on the current code, every model and tool call answered from its journal (no model call, no side effect)",
    tag: "Runs",
    body: { schema: ReplayRunRequest, example: { instructions: "Answer in French." } },
    responses: {
      202: {
        description: "The replay, a new run marked replayOf.",
        schema: z.object({ runId: z.string(), status: z.string(), replayOf: z.string() }),
      },
      409: { description: "The run is still in flight, or has no journal; nothing started." },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/replay",
    summary: "What a replay found: identical, or the first call or event that differs, both sides",
    tag: "Runs",
    responses: { 200: { description: "The comparison.", schema: ReplayComparison }, 404: { description: "Not a replay." } },
  },
  {
    method: "post",
    path: "/v1/runs/{runId}/fork",
    summary: "Fork an ended run: reuse its journal before a point (a plan iteration, a task, an agent round), with edits, then go on live",
    tag: "Runs",
    body: {
      schema: ForkRunRequest,
      example: { at: { scope: "task#1#s2.t1", round: 1 }, edits: { toolResults: [{ callId: "calc_1", output: "10+10 = 99" }] } },
    },
    responses: {
      202: {
        description: "The fork, a new run in the same session marked forkOf.",
        schema: z.object({ runId: z.string(), status: z.string() }),
      },
      400: { description: "An edit does not fit its schema; nothing started." },
      404: { description: "No such fork point or edited call (named); nothing started." },
      409: { description: "The run is still in flight." },
    },
  },
  {
    method: "get",
    path: "/v1/runs/{runId}/export",
    summary: "The run, its journal and its events as one JSON document, to replay elsewhere (stepwise replay --dir)",
    tag: "Runs",
    responses: { 200: { description: "The export (format stepwise.run/1)." } },
  },
  {
    method: "post",
    path: "/v1/runs/import",
    summary: "Record an exported run (GET …/export, from this stack or another) in this tenant, ended as it was, to replay it here",
    tag: "Runs",
    body: {
      schema: ExportedRun,
      example: {
        format: "stepwise.run/1",
        run: {
          schemaVersion: 1,
          runId: "run_mwzx9k74f6517c0defc41228e5d4",
          tenantId: "t_elsewhere",
          sessionId: "ses_mwzx9k74a1b2c3d4e5f6a7b8c9d0",
          status: "succeeded",
          requestedMode: "react",
          mode: "react",
          input: "What is 2+2?",
          metadata: {},
          result: "4",
          usage: { promptTokens: 120, completionTokens: 3, llmCalls: 1, toolCalls: 0 },
          executionArn: "arn:aws:states:eu-west-1:123456789012:execution:stepwise:run_mwzx9k74f6517c0defc41228e5d4",
          createdAt: "2026-11-27T10:00:00.000Z",
          updatedAt: "2026-11-27T10:00:02.000Z",
        },
        journal: [{ scope: "react", round: 0, kind: "llm", value: { content: "4", toolCalls: [] }, fingerprint: "v1:3f2a9c" }],
        events: [
          { seq: 1, at: "2026-11-27T10:00:00.100Z", type: "run.started", data: { mode: "react", input: "What is 2+2?" } },
          { seq: 2, at: "2026-11-27T10:00:02.000Z", type: "run.succeeded", data: { result: "4", files: [] } },
        ],
      },
    },
    responses: {
      201: {
        description: "The imported run: a new id, in a session of its own, importedFrom the exported one.",
        schema: z.object({ runId: z.string(), sessionId: z.string(), status: z.string(), importedFrom: z.string() }),
      },
      400: { description: "The document does not fit, the run had not ended, or its journal has no model call (named); nothing recorded." },
    },
  },
  {
    method: "post",
    path: "/v1/tool-sources",
    summary: "Register an MCP server as a tool source",
    tag: "Tools",
    body: {
      schema: CreateToolSourceRequest,
      example: { name: "docs", url: "https://mcp.example.com/mcp", headers: { authorization: "Bearer …" } },
    },
    responses: {
      201: { description: "Registered, with the tools found.", schema: R.ToolSourceView },
      409: { description: "A source with this name exists." },
    },
  },
  {
    method: "get",
    path: "/v1/tool-sources",
    summary: "The tenant's tool sources",
    tag: "Tools",
    responses: { 200: { description: "Sources (header values masked).", schema: z.object({ sources: z.array(R.ToolSourceView) }) } },
  },
  {
    method: "get",
    path: "/v1/tool-sources/{name}",
    summary: "A tool source",
    tag: "Tools",
    responses: { 200: { description: "The source.", schema: R.ToolSourceView } },
  },
  {
    method: "delete",
    path: "/v1/tool-sources/{name}",
    summary: "Remove a tool source",
    tag: "Tools",
    responses: { 204: { description: "Removed." } },
  },
  {
    method: "get",
    path: "/v1/tools",
    summary: "The agents' tools with their schemas and access",
    tag: "Tools",
    responses: { 200: { description: "Tools.", schema: R.ToolList } },
  },
  {
    method: "get",
    path: "/v1/webhook-secrets",
    summary: "The tenant's webhook signing secrets",
    tag: "Webhooks",
    responses: { 200: { description: "Secrets.", schema: R.WebhookSecrets } },
  },
  {
    method: "post",
    path: "/v1/webhook-secrets/rotate",
    summary: "Rotate the webhook signing secret (the old one keeps signing for a while)",
    tag: "Webhooks",
    responses: { 200: { description: "Secrets after rotation.", schema: R.WebhookSecrets } },
  },
  {
    method: "post",
    path: "/mcp",
    summary:
      "The MCP server (Streamable HTTP, stateless): tools run_task (task-capable: tasks/get, tasks/result, tasks/list, tasks/cancel), get_run, cancel_run, decide. On AWS the stream URL's /mcp streams progress and elicitation; this one answers within the API's 30 s",
    tag: "Protocols",
    rawBody: {
      "application/json": {
        schema: {
          type: "object",
          description:
            "A JSON-RPC 2.0 message of MCP (or a batch): initialize, tools/list, tools/call (with params.task: as a task), tasks/get, tasks/result, tasks/list, tasks/cancel, ping; or the answer to an elicitation request. Send `Accept: application/json, text/event-stream`, and after initialize the `Mcp-Session-Id` and `MCP-Protocol-Version` headers.",
        },
      },
    },
    responses: {
      200: {
        description:
          "The JSON-RPC answer: as Server-Sent Events (progress notifications and elicitation requests before the result) where the reply streams, else JSON. initialize answers with an `Mcp-Session-Id`.",
        contentType: "text/event-stream",
        schema: z.string(),
      },
      202: { description: "A notification or an elicitation answer, accepted." },
      406: { description: "Accept does not allow both application/json and text/event-stream (a JSON-RPC error body)." },
    },
  },
  {
    method: "post",
    path: "/a2a",
    summary:
      "The A2A agent (JSON-RPC binding, A2A 1.0 with `A2A-Version: 1.0`, else 0.3's method names): a message starts a run (task id = run id, context id = session), a reply on an input-required task decides its pause; get, cancel and resubscribe tasks; push notifications as signed webhooks. On AWS the agent card names the stream URL's /a2a, which streams; this one answers within the API's 30 s",
    tag: "Protocols",
    rawBody: {
      "application/json": {
        schema: {
          type: "object",
          description:
            "A JSON-RPC 2.0 request of A2A: SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask, Create/Get/List/DeleteTaskPushNotificationConfig (0.3: message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe, tasks/pushNotificationConfig/set|get|list|delete). A message's metadata may hold mode (auto, react, plan_solve), approval ({plan, tools}) and deepThink; its text parts are the task, its file parts (bytes) the run's files.",
          required: ["jsonrpc", "method"],
        },
      },
    },
    responses: {
      200: {
        description:
          "The JSON-RPC answer (a result or an error: -32001 task not found, -32602 invalid params, -32601 unknown method, …); the streaming methods answer with Server-Sent Events, one JSON-RPC response each (the task, then status and artifact updates).",
        contentType: "text/event-stream",
        schema: z.string(),
      },
      400: { description: "The body is not JSON (a JSON-RPC parse error)." },
    },
  },
  {
    method: "get",
    path: "/.well-known/agent-card.json",
    summary:
      "The A2A agent card (no API key): the JSON-RPC endpoint, the run modes as skills, streaming and push notifications, the bearer scheme",
    tag: "Protocols",
    public: true,
    responses: { 200: { description: "The agent card (A2A 1.0).", schema: z.record(z.string(), z.unknown()) } },
  },
  {
    method: "post",
    path: "/v1/ag-ui",
    summary:
      "Run an AG-UI agent turn (what an AG-UI HttpAgent posts; on AWS at the stream URL): the thread is the session, the last user message the task, forwardedProps.mode and .approval the mode and approval policy; resume entries answer the thread's pause",
    tag: "Protocols",
    rawBody: {
      "application/json": {
        schema: {
          type: "object",
          description:
            "An AG-UI RunAgentInput: {threadId (a session id), runId, messages, tools?, context?, state?, forwardedProps?: {mode?, approval?: {plan?, tools?}}, resume?: [{interruptId, status: resolved|cancelled, payload?}]}. With resume, no new run starts: the entries decide the pauses of the thread's run (payload {decision: approve|reject, message?} or {answer}, as the interrupt's responseSchema says; cancelled rejects) and the run goes on.",
          required: ["threadId", "runId", "messages"],
        },
      },
    },
    responses: {
      200: {
        description:
          "One AG-UI run under the input's runId, as Server-Sent Events (`id:` <seq>.<index>): up to the run's end, or its first pause (RUN_FINISHED with the interrupt outcome). The Stepwise run id is in X-Stepwise-Run; GET /v1/runs/{runId}/stream?protocol=ag-ui follows the whole run.",
        contentType: "text/event-stream",
        schema: z.string(),
      },
      400: {
        description:
          "The input makes no run (no user message, a thread id that is not a session id), a resume payload does not fit its interrupt, or a resume leaves an earlier pause of the run unanswered; nothing is started or decided.",
      },
    },
  },
  {
    method: "get",
    path: "/health",
    summary: "Whether the service can take requests (no API key)",
    tag: "Service",
    public: true,
    responses: {
      200: {
        description: "Ready.",
        schema: R.Health,
        example: { status: "ok", version: VERSION, checks: { table: "ok", stateMachine: "ok" } },
      },
      503: { description: "Not ready yet; retry.", schema: R.Health },
    },
  },
  {
    method: "get",
    path: "/v1/openapi.json",
    summary: "This document",
    tag: "Service",
    public: true,
    responses: { 200: { description: "OpenAPI 3.1.", schema: z.record(z.string(), z.unknown()) } },
  },
  {
    method: "get",
    path: "/",
    summary: "The web console (a single-page app)",
    tag: "Service",
    public: true,
    responses: { 200: { description: "The console's page.", contentType: "text/html", schema: z.string() } },
  },
  ...(["/index.html", "/console.js", "/console.css", "/favicon.svg", "/favicon.ico"] as const).map(
    (path): Operation => ({
      method: "get",
      path,
      summary: `The web console's ${path.slice(1)}`,
      tag: "Service",
      public: true,
      responses: {
        200: {
          description: "The asset.",
          contentType: path.endsWith(".js")
            ? "text/javascript"
            : path.endsWith(".css")
              ? "text/css"
              : path.startsWith("/favicon")
                ? "image/svg+xml"
                : "text/html",
          schema: z.string(),
        },
      },
    }),
  ),
];

const PATH_PARAMETERS: Record<string, { schema: z.ZodType; description: string }> = {
  runId: { schema: z.string().regex(/^[A-Za-z0-9_-]{1,80}$/), description: "The run's id (run_…)." },
  interruptId: { schema: z.string().regex(/^[A-Za-z0-9_-]{1,80}$/), description: "The interrupt's id (int_…)." },
  deliveryId: { schema: z.string().min(1).max(120), description: "The webhook delivery's id (the webhook-id header)." },
  taskId: { schema: z.string().min(1).max(200), description: "A task's id in the run's plan (s1.t2), as the run view lists it." },
  sessionId: { schema: Id, description: "The session's id." },
  name: { schema: z.string().min(1).max(256), description: "A file's name (e.g. report.md) or a tool source's name." },
  fileId: { schema: z.string().regex(/^file_[a-z0-9]{1,60}$/), description: "An upload's id (file_…), as POST /v1/files answered it." },
  agent: { schema: AgentRef, description: "A saved agent's name (analyst); where a version can be read, name@version (analyst@3)." },
  policy: {
    schema: z.string().regex(/^[a-z][a-z0-9_-]{0,63}(@[1-9][0-9]{0,8})?$/),
    description: "A tool policy's name (artifact-size); where a version can be read, name@version (artifact-size@2).",
  },
};

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

function operationObject(op: Operation) {
  const parameters = [
    ...[...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: "path",
      required: true,
      description: PATH_PARAMETERS[name].description,
      schema: schemaOf(PATH_PARAMETERS[name].schema, "input"),
    })),
    ...Object.entries((op.query ? schemaOf(op.query, "input").properties : {}) as Record<string, JsonSchema>).map(([name, schema]) => ({
      name,
      in: "query",
      required: false,
      ...(typeof schema.description === "string" ? { description: schema.description } : {}),
      schema,
    })),
    ...(op.headers ?? []).map((h) => ({
      name: h.name,
      in: "header",
      required: false,
      description: h.description,
      schema: schemaOf(h.schema, "input"),
    })),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(op.responses)) {
    const isError = Number(status) >= 400;
    responses[status] = isError
      ? errorResponse(response.description)
      : {
          description: response.description,
          ...(response.schema
            ? {
                content: {
                  [response.contentType ?? "application/json"]: {
                    schema: schemaOf(response.schema, "output"),
                    ...(response.example !== undefined ? { example: response.example } : {}),
                  },
                },
              }
            : {}),
        };
  }
  // The errors every operation can answer with.
  responses["400"] ??= errorResponse(
    "Invalid parameters, query or body: `error.details` names each field. A JSON body nested more than 32 levels deep: `nesting_too_deep`.",
  );
  if (op.method === "post")
    responses["413"] ??= errorResponse(
      "The request body is over 256 KiB, the limit of JSON bodies (refused before it is read when Content-Length says so).",
    );
  if (!op.public) responses["401"] ??= errorResponse("No or an invalid API key.");
  if (op.path.includes("{")) responses["404"] ??= errorResponse("No such resource for this API key (another tenant's looks the same).");
  responses["500"] ??= errorResponse("Our fault; retry. `error.details.requestId` names it in the logs.");
  return {
    operationId: `${op.method}${op.path.replace(/\{(\w+)\}/g, "By_$1").replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : "")) || "Console"}`,
    summary: op.summary,
    tags: [op.tag],
    ...(op.public ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(op.body
      ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: schemaOf(op.body.schema, "input"), example: op.body.example } },
          },
        }
      : {}),
    ...(op.rawBody ? { requestBody: { required: true, content: op.rawBody } } : {}),
    responses,
  };
}

let built: object | undefined;

/** The OpenAPI 3.1 document, generated from the contracts once per container. */
export function buildOpenApiDocument(): object {
  if (built) return built;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    paths[op.path] ??= {};
    paths[op.path][op.method] = operationObject(op);
  }
  built = {
    openapi: "3.1.0",
    info: {
      title: "Stepwise",
      version: VERSION,
      description:
        "A serverless multi-agent orchestrator: submit a task, watch agents plan and work, approve risky steps, get a signed webhook when the run ends.",
    },
    servers: [{ url: "/" }],
    security: [{ apiKey: [] }],
    tags: [...new Set(OPERATIONS.map((op) => op.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "An API key: `Authorization: Bearer sk_…`." } },
      schemas: { Error: schemaOf(R.ErrorResponse, "output") },
    },
  };
  return built;
}

export async function openApiDocument(): Promise<HttpResult> {
  return json(200, buildOpenApiDocument(), { "cache-control": "public, max-age=300" });
}
