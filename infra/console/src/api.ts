/** The public API, same origin. The key lives in session storage (gone when the tab closes), never in a URL. */
const KEY = "stepwise.apiKey";

export const apiKey = {
  get: () => sessionStorage.getItem(KEY),
  set: (key: string) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export async function api<T>(method: string, path: string, body?: unknown, key = apiKey.get()): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "The service cannot be reached. Check the connection and try again.");
  }
  if (response.status === 204) return undefined as T;
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) {
    const message = payload?.error?.message ?? `The service answered ${response.status}.`;
    throw new ApiError(response.status, message, payload?.error?.details);
  }
  return payload as T;
}

export const enc = encodeURIComponent;

export interface UploadedFile {
  fileId: string;
  name: string;
  contentType: string;
  bytes: number;
}

/** The largest file the API takes inline (its INLINE_UPLOAD_BYTES); larger ones go through upload links. */
const INLINE_UPLOAD_BYTES = 4 * 1024 * 1024;
const PARALLEL_PARTS = 4;

interface PendingUpload {
  partBytes: number;
  parts: { partNumber: number; url: string }[];
  complete: string;
}

/**
 * `POST /v1/files` as a browser sends a file: multipart/form-data, or for a file over 4 MiB the
 * presigned links (each part PUT straight to storage, then the upload completed). The run then
 * names its id.
 */
export async function uploadFile(file: File, key = apiKey.get()): Promise<UploadedFile> {
  if (file.size > INLINE_UPLOAD_BYTES) return uploadThroughLinks(file, key);
  const form = new FormData();
  form.append("file", file, file.name);
  let response: Response;
  try {
    response = await fetch("/v1/files", { method: "POST", headers: key ? { authorization: `Bearer ${key}` } : {}, body: form });
  } catch {
    throw new ApiError(0, `${file.name} could not be uploaded: the service cannot be reached.`);
  }
  const payload = await response.json().catch(() => ({}));
  if (!response.ok) throw new ApiError(response.status, `${file.name}: ${payload?.error?.message ?? `the service answered ${response.status}.`}`, payload?.error?.details);
  return payload as UploadedFile;
}

async function uploadThroughLinks(file: File, key: string | null): Promise<UploadedFile> {
  const call = async (path: string, body: unknown) => {
    let response: Response;
    try {
      response = await fetch(path, { method: "POST", headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });
    } catch {
      throw new ApiError(0, `${file.name} could not be uploaded: the service cannot be reached.`);
    }
    const payload = await response.json().catch(() => ({}));
    if (!response.ok) throw new ApiError(response.status, `${file.name}: ${payload?.error?.message ?? `the service answered ${response.status}.`}`, payload?.error?.details);
    return payload;
  };
  const pending = (await call("/v1/files", { name: file.name, bytes: file.size, ...(file.type ? { contentType: file.type } : {}) })) as PendingUpload;
  const queue = [...pending.parts];
  const uploaded: { partNumber: number; etag: string }[] = [];
  const putParts = async () => {
    for (let part = queue.shift(); part; part = queue.shift()) {
      const start = (part.partNumber - 1) * pending.partBytes;
      const response = await fetch(part.url, { method: "PUT", body: file.slice(start, start + pending.partBytes) }).catch(() => undefined);
      if (!response?.ok) throw new ApiError(response?.status ?? 0, `${file.name} could not be uploaded: storage answered ${response?.status ?? "nothing"} for part ${part.partNumber}.`);
      uploaded.push({ partNumber: part.partNumber, etag: response.headers.get("etag") ?? "" });
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_PARTS, pending.parts.length) }, putParts));
  return (await call(new URL(pending.complete).pathname, { parts: uploaded })) as UploadedFile;
}

export interface RunSummary {
  runId: string;
  sessionId: string;
  status: string;
  /** While queued: the run it waits for. */
  queuedBehind?: string | null;
  requestedMode: string;
  mode: string | null;
  input: string;
  usage: Usage;
  estimatedCostUsd?: number;
  createdAt: string;
}
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  llmCalls: number;
  toolCalls: number;
  stateTransitions?: number;
}
export interface Interrupt {
  interruptId: string;
  kind: "plan_approval" | "tool_approval" | "ask_user";
  status: string;
  summary: string;
  toolName?: string;
  arguments?: unknown;
  question?: string;
  taskId?: string;
}
export interface FileMeta {
  name: string;
  contentType: string;
  bytes: number;
  description: string;
}
export interface PlanStep {
  title: string;
  tasks: string[];
  status: string;
  /** The planner's judgement of the step's results against its done_when. */
  verdict?: { met: boolean; reason: string };
}
export interface RunView extends RunSummary {
  plan: { title: string; steps: PlanStep[] } | null;
  result: string | null;
  files: FileMeta[];
  error: { code: string; message: string } | null;
  pendingInterrupts: Interrupt[];
  estimatedCostUsd?: number;
  links: { self: string; stream: string; console?: string };
}
export interface RunEvent {
  seq: number;
  at: string;
  type: string;
  data: any;
}
export interface ToolInfo {
  name: string;
  description: string;
  access: string;
  parameters: { properties?: Record<string, { type?: string | string[] }>; required?: string[] };
}
