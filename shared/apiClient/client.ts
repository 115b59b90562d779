/**
 * The typed client of the public API, used by the `stepwise` command and the web console: one
 * method per route they call, answers typed by the zod contracts (imported as types only, so the
 * console's bundle carries no schemas), failures as ApiError or ConnectionError.
 */
import type * as z from "zod";
import type { SaveAgentRequest, SavedAgent } from "../contracts/agents.js";
import type { CreateRunRequest, TenantSettings } from "../contracts/api.js";
import type { RunEvent } from "../contracts/events.js";
import type { PendingUploadView, UploadLinksView } from "../contracts/files.js";
import type { ResolveInterruptRequest } from "../contracts/interrupts.js";
import type { SavePolicyRequest, ToolPolicy } from "../contracts/policies.js";
import type { ExportedRun as ExportedRunDocument, ForkRunRequest, ReplayComparison, ReplayRunRequest } from "../contracts/replay.js";
import type {
  CancelResponse,
  CreateRunResponse,
  FileList,
  InterruptView,
  RunList,
  RunView,
  SessionList,
  SessionView,
  Settings,
  StreamToken,
  TaskPage,
  TaskResultView,
  TaskView,
  ToolList,
  UploadView,
  WebhookDeliveries,
} from "../contracts/responses.js";
import { INLINE_UPLOAD_BYTES } from "../contracts/uploadLimits.js";
import { apiError, ConnectionError, connectionError } from "./errors.js";
import { type FollowOptions, followRun } from "./follow.js";

/** A file's bytes: read from disk (the CLI) or picked in a page (the console). */
type Upload = Uint8Array<ArrayBuffer> | Blob;

/** A page of a run's event log (`GET /v1/runs/{id}/events`). */
export interface EventPage {
  runId: string;
  events: RunEvent[];
  next: { after: number };
}

/** `POST /v1/runs` as a client writes it (defaults left out). */
export type CreateRunBody = z.input<typeof CreateRunRequest>;

export interface ClientOptions {
  /**
   * How a run's stream is opened: with the API key in the Authorization header (the default), or
   * with a short-lived stream token for that run in its URL (a browser: the key never in a URL,
   * and no Authorization header to the stream's origin).
   */
  streamAuth?: "header" | "token";
}

/** Parts of a large upload sent at once, and how long one part (16 MiB) may take. */
const PARALLEL_PARTS = 4;
const PART_TIMEOUT_MS = 10 * 60_000;
/** A part that would start this close to its link's end gets a fresh link first (S3 checks the time as a request starts). */
const LINK_MARGIN_MS = 2 * 60_000;
const REQUEST_TIMEOUT_MS = 60_000;

export class StepwiseClient {
  /** The API's address, without a trailing slash; "" for a page the API serves (same origin). */
  readonly url: string;

  /**
   * @param apiKey the key, or a function that reads it at each request (the console keeps it in
   *   session storage, where signing out removes it).
   */
  constructor(
    url: string,
    private readonly apiKey: string | undefined | (() => string | null | undefined),
    private readonly options: ClientOptions = {},
  ) {
    this.url = url.replace(/\/+$/, "");
  }

  createRun(body: CreateRunBody): Promise<CreateRunResponse> {
    return this.request("POST", "/v1/runs", body);
  }

  listRuns(query: { status?: string; sessionId?: string; limit?: number; cursor?: string }): Promise<RunList> {
    return this.request("GET", `/v1/runs?${queryOf(query)}`);
  }

  getRun(runId: string): Promise<RunView> {
    return this.request("GET", `/v1/runs/${enc(runId)}`);
  }

  /** A page of the run's tasks after `cursor`: the run's view holds the first page, its `nextTasksCursor` starts the next. */
  listTasks(runId: string, query: { cursor?: string; limit?: number } = {}): Promise<TaskPage> {
    return this.request("GET", `/v1/runs/${enc(runId)}/tasks?${queryOf(query)}`);
  }

  /** Every task of a run: those its view holds, then the pages after them. */
  async allTasks(view: Pick<RunView, "runId" | "tasks" | "nextTasksCursor">): Promise<TaskView[]> {
    const tasks = [...view.tasks];
    for (let cursor = view.nextTasksCursor; cursor; ) {
      const page = await this.listTasks(view.runId, { cursor });
      tasks.push(...page.tasks);
      cursor = page.nextCursor;
    }
    return tasks;
  }

  /** A task's whole result (its view shows a preview): the text, fetched from storage's link when the result is kept in a file. */
  async taskResult(runId: string, taskId: string): Promise<string> {
    const found = await this.request<TaskResultView>("GET", `/v1/runs/${enc(runId)}/tasks/${enc(taskId)}/result`);
    if (found.text !== undefined || !found.url) return found.text ?? "";
    let res: Response;
    try {
      res = await fetch(found.url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      throw connectionError(new URL(found.url).origin, error);
    }
    if (!res.ok) throw apiError(res.status, await res.text().catch(() => ""));
    return res.text();
  }

  /** The run as OpenTelemetry GenAI spans, an OTLP/JSON ExportTraceServiceRequest (`GET /v1/runs/{id}/trace`). */
  getTrace(runId: string): Promise<{ resourceSpans: unknown[] }> {
    return this.request("GET", `/v1/runs/${enc(runId)}/trace`);
  }

  /** A page of the run's event log: the events after `after` (0: from the start), `next.after` for the next page. */
  listEvents(runId: string, query: { after?: number; limit?: number } = {}): Promise<EventPage> {
    return this.request("GET", `/v1/runs/${enc(runId)}/events?after=${query.after ?? 0}${query.limit ? `&limit=${query.limit}` : ""}`);
  }

  cancelRun(runId: string): Promise<CancelResponse> {
    return this.request("POST", `/v1/runs/${enc(runId)}/cancel`);
  }

  /** Replays an ended run from its journal (a new run, `replayOf` it); compareReplay tells what it found. */
  replayRun(runId: string, body: ReplayRunRequest = {}): Promise<{ runId: string; status: string; replayOf: string }> {
    return this.request("POST", `/v1/runs/${enc(runId)}/replay`, body);
  }

  compareReplay(replayId: string): Promise<ReplayComparison> {
    return this.request("GET", `/v1/runs/${enc(replayId)}/replay`);
  }

  /** The run, its journal and its events as one document (format stepwise.run/1), which importRun takes back. */
  exportRun(runId: string): Promise<ExportedRunDocument> {
    return this.request("GET", `/v1/runs/${enc(runId)}/export`);
  }

  /** Records an exported run in this tenant, ended as it was (a new id, `importedFrom` the old), to replay it here. */
  importRun(document: unknown): Promise<{ runId: string; sessionId: string; status: string; importedFrom: string }> {
    return this.request("POST", "/v1/runs/import", document);
  }

  /** Forks an ended run at a point of its journal, with edits (a new run in its session, `forkOf` it). */
  forkRun(runId: string, body: ForkRunRequest): Promise<{ runId: string; status: string }> {
    return this.request("POST", `/v1/runs/${enc(runId)}/fork`, body);
  }

  resolveInterrupt(runId: string, interruptId: string, body: ResolveInterruptRequest): Promise<InterruptView> {
    return this.request("POST", `/v1/runs/${enc(runId)}/interrupts/${enc(interruptId)}`, body);
  }

  listSessions(query: { limit?: number; cursor?: string }): Promise<SessionList> {
    return this.request("GET", `/v1/sessions?${queryOf(query)}`);
  }

  getSession(sessionId: string): Promise<SessionView> {
    return this.request("GET", `/v1/sessions/${enc(sessionId)}`);
  }

  listTools(): Promise<ToolList> {
    return this.request("GET", "/v1/tools");
  }

  listAgents(): Promise<{ agents: SavedAgent[] }> {
    return this.request("GET", "/v1/agents");
  }

  /** A saved agent's latest version (`analyst`) or one version (`analyst@3`). */
  getAgent(ref: string): Promise<SavedAgent> {
    return this.request("GET", `/v1/agents/${enc(ref)}`);
  }

  /** Saves a new version (the first save creates the agent). */
  saveAgent(name: string, config: SaveAgentRequest): Promise<SavedAgent> {
    return this.request("POST", `/v1/agents/${enc(name)}`, config);
  }

  deleteAgent(name: string): Promise<void> {
    return this.request("DELETE", `/v1/agents/${enc(name)}`);
  }

  /** The tenant's tool policies in force (the latest version of each). */
  listPolicies(): Promise<{ policies: ToolPolicy[] }> {
    return this.request("GET", "/v1/policies");
  }

  /** Saves a new version of a tool policy (checked against the tool catalogue: 400 with Cedar's reason). */
  savePolicy(name: string, policy: Partial<SavePolicyRequest> & Pick<SavePolicyRequest, "cedar">): Promise<ToolPolicy> {
    return this.request("PUT", `/v1/policies/${enc(name)}`, policy);
  }

  deletePolicy(name: string): Promise<void> {
    return this.request("DELETE", `/v1/policies/${enc(name)}`);
  }

  getSettings(): Promise<Settings> {
    return this.request("GET", "/v1/settings");
  }

  putSettings(settings: TenantSettings): Promise<Settings> {
    return this.request("PUT", "/v1/settings", settings);
  }

  /** The run's webhook and each delivery with its attempts (and when the next is due). */
  listWebhooks(runId: string): Promise<WebhookDeliveries> {
    return this.request("GET", `/v1/runs/${enc(runId)}/webhooks`);
  }

  listFiles(runId: string): Promise<FileList> {
    return this.request("GET", `/v1/runs/${enc(runId)}/files`);
  }

  /** A short-lived link to a run file's bytes (in storage, on another origin; the link needs no key). */
  async fileLink(runId: string, name: string): Promise<string> {
    return (await this.request<{ url: string }>("GET", `/v1/runs/${enc(runId)}/files/${enc(name)}`)).url;
  }

  /** A short-lived token that opens this run's stream, and only this run's. */
  createStreamToken(runId: string): Promise<StreamToken> {
    return this.request("POST", `/v1/runs/${enc(runId)}/stream-token`);
  }

  /**
   * Uploads a file (the API records its name and type) → its id, for a run's `files`. A small file
   * goes through the API; a larger one straight to storage through the presigned links `POST
   * /v1/files` hands out (a part per link, a few at once), then the upload is completed.
   */
  async uploadFile(name: string, body: Upload, contentType?: string): Promise<UploadView> {
    const bytes = body instanceof Uint8Array ? body.byteLength : body.size;
    if (bytes > INLINE_UPLOAD_BYTES) return this.uploadThroughLinks(name, body, bytes, contentType);
    const type = contentType || "application/octet-stream";
    return this.request("POST", `/v1/files?name=${enc(name)}`, new Blob([body], { type }));
  }

  private async uploadThroughLinks(name: string, body: Upload, bytes: number, contentType?: string): Promise<UploadView> {
    const pending = await this.request<PendingUploadView>("POST", "/v1/files", { name, bytes, ...(contentType ? { contentType } : {}) });
    return this.sendUpload(pending, body);
  }

  /**
   * Sends a presigned upload's parts (a few at once), then completes it. Links expire (an hour, or
   * when the credentials that signed them do), and a slow upload outlives them: a part whose link is
   * refused (403), or that would start within LINK_MARGIN_MS of the links' end, asks for fresh links
   * for every part not sent yet (one such request at a time) and is sent with its fresh link, once.
   */
  async sendUpload(pending: PendingUploadView, body: Upload): Promise<UploadView> {
    let links = {
      urls: new Map(pending.parts.map((part) => [part.partNumber, part.url])),
      headers: pending.headers,
      endsAt: Date.parse(pending.expiresAt),
    };
    const unsent = new Set(pending.parts.map((part) => part.partNumber));
    let signing: Promise<void> | undefined;
    const resign = async (stale: typeof links) => {
      if (links !== stale) return; // another part has fresh links already
      signing ??= this.request<UploadLinksView>("POST", new URL(pending.resign).pathname, { partNumbers: [...unsent] })
        .then((fresh) => {
          links = {
            urls: new Map(fresh.parts.map((part) => [part.partNumber, part.url])),
            headers: fresh.headers,
            endsAt: Date.parse(fresh.expiresAt),
          };
        })
        .finally(() => {
          signing = undefined;
        });
      await signing;
    };
    const queue = [...pending.parts];
    const uploaded: { partNumber: number; etag: string }[] = [];
    const putPart = async (partNumber: number, signedAgain: boolean) => {
      const start = (partNumber - 1) * pending.partBytes;
      const slice =
        body instanceof Uint8Array ? body.subarray(start, start + pending.partBytes) : body.slice(start, start + pending.partBytes);
      const current = links;
      if (!signedAgain && current.endsAt - Date.now() < LINK_MARGIN_MS) {
        await resign(current);
        return putPart(partNumber, true);
      }
      const url = current.urls.get(partNumber) ?? "";
      let res: Response;
      try {
        res = await fetch(url, { method: "PUT", headers: current.headers, body: slice, signal: AbortSignal.timeout(PART_TIMEOUT_MS) });
      } catch (error) {
        // Storage may close the connection as it refuses a part (an expired link): one more try, freshly signed.
        if (signedAgain) throw connectionError(new URL(url).origin, error);
        await resign(current);
        return putPart(partNumber, true);
      }
      if (res.status === 403 && !signedAgain) {
        await res.arrayBuffer().catch(() => undefined);
        await resign(current);
        return putPart(partNumber, true);
      }
      if (!res.ok) throw apiError(res.status, await res.text().catch(() => ""));
      await res.arrayBuffer();
      unsent.delete(partNumber);
      uploaded.push({ partNumber, etag: res.headers.get("etag") ?? "" });
    };
    const putParts = async () => {
      for (let part = queue.shift(); part; part = queue.shift()) await putPart(part.partNumber, false);
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, pending.parts.length) }, putParts));
    return this.request("POST", new URL(pending.complete).pathname, { parts: uploaded });
  }

  /**
   * The run's events from `after` on, live, in order and each once: reconnects with Last-Event-ID
   * whenever the stream ends or breaks, and ends after the terminal event (see followRun).
   */
  follow(runId: string, options: FollowOptions = {}) {
    return followRun(this, runId, options);
  }

  /** Opens a run's event stream after `lastEventId`, authorized as the options say. */
  async openStream(runId: string, streamUrl: string | undefined, lastEventId: string, signal?: AbortSignal): Promise<Response> {
    const page = (globalThis as { location?: { href: string } }).location?.href;
    const url = new URL(streamUrl ?? `${this.url}/v1/runs/${enc(runId)}/stream`, this.url || page);
    const headers: Record<string, string> = { accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) };
    if (this.options.streamAuth === "token") url.searchParams.set("token", (await this.createStreamToken(runId)).token);
    else Object.assign(headers, this.authorization());
    // The spec's "no-store" cache mode (Node's types lack the option), not a Cache-Control header:
    // that would make a browser's request to the stream's origin need a preflight.
    return fetch(url, { headers, signal, cache: "no-store" } as RequestInit);
  }

  /** A JSON request (or a Blob body, sent as it is) → the parsed answer; undefined for an empty one. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const target = `${this.url}${path}`;
    const json = body !== undefined && !(body instanceof Blob);
    let res: Response;
    let text: string;
    try {
      res = await fetch(target, {
        method,
        headers: { ...this.authorization(), accept: "application/json", ...(json ? { "content-type": "application/json" } : {}) },
        body: json ? JSON.stringify(body) : (body as Blob | undefined),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      text = await res.text();
    } catch (error) {
      throw connectionError(this.url, error);
    }
    if (!res.ok) throw apiError(res.status, text);
    if (text === "") return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      const what = `${method} ${target} answered ${res.status} with something that is not JSON`;
      throw new ConnectionError(`${what}; is ${this.url || "this"} a Stepwise API?`);
    }
  }

  private authorization(): Record<string, string> {
    const key = typeof this.apiKey === "function" ? this.apiKey() : this.apiKey;
    return key ? { authorization: `Bearer ${key}` } : {};
  }
}

const enc = encodeURIComponent;

/** A listing's query parameters that are set. */
function queryOf(query: Record<string, string | number | undefined>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(name, String(value));
  return params;
}
