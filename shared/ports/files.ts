/** A file of a run: what is known about it without reading its bytes. */
export interface FileMeta {
  name: string;
  description: string;
  /** MIME type, e.g. text/markdown, text/csv, image/png. */
  contentType: string;
  bytes: number;
  createdAt: string;
  /** The plan task whose tool wrote it (none for uploads and the files of a single agent or the run). */
  taskId?: string;
}

/** A file as prompts name it: what an agent needs to know to use it. */
export interface FileLine {
  name: string;
  contentType: string;
  bytes: number;
  /** Where it came from: "Uploaded", "Written by run_code", "Report: …". */
  origin: string;
}

/** A file with its bytes. */
export interface StoredFile extends FileMeta {
  body: Uint8Array;
}

export interface PutFileOptions {
  description?: string;
  /** Defaults from the name's extension (text/plain when unknown). */
  contentType?: string;
  /**
   * The write tool call's idempotency key: a put of the same name with the key the file was
   * written with writes nothing again (a call retried after a crash), and answers the file as stored.
   */
  idempotencyKey?: string;
  /** The plan task writing it, kept with the file (see filesOfTask). */
  taskId?: string;
}

/**
 * The files port: a run's files (tool outputs, reports, uploads, whole tool outputs cut for the
 * model). Adapters: DynamoDB today (shared/store/files.ts), S3 with metadata in the table on AWS;
 * an in-memory fake in shared/testing/.
 */
export interface FileStore {
  /** Writes (or overwrites) a file of the run; once per idempotency key, when one is given. */
  put(runId: string, name: string, body: string | Uint8Array, options?: PutFileOptions): Promise<FileMeta>;
  get(runId: string, name: string): Promise<StoredFile | undefined>;
  /**
   * Bytes `start` to `end` (exclusive; cut at the file's end) without reading the rest: what a big
   * file gives a reader that needs a slice (an S3 Range read), with the file's metadata.
   */
  getRange(runId: string, name: string, start: number, end: number): Promise<{ meta: FileMeta; body: Uint8Array } | undefined>;
  /** Metadata only, in name order. */
  list(runId: string): Promise<FileMeta[]>;
}

const TYPES: Record<string, string> = {
  md: "text/markdown",
  markdown: "text/markdown",
  txt: "text/plain",
  csv: "text/csv",
  json: "application/json",
  html: "text/html",
  htm: "text/html",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  pdf: "application/pdf",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  xls: "application/vnd.ms-excel",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

/** The content type a file name implies. */
export function contentTypeOf(name: string): string {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return (extension && TYPES[extension]) || "application/octet-stream";
}

/** A file's bytes as text (UTF-8). */
export const fileText = (file: StoredFile): string => Buffer.from(file.body).toString("utf8");

export const toBytes = (body: string | Uint8Array): Uint8Array => (typeof body === "string" ? Buffer.from(body, "utf8") : body);

/** What a put stores about a file: every store fills in the same defaults. */
export function newFileMeta(name: string, bytes: Uint8Array, options: PutFileOptions): FileMeta {
  return {
    name,
    description: options.description ?? "",
    contentType: options.contentType ?? contentTypeOf(name),
    bytes: bytes.byteLength,
    createdAt: new Date().toISOString(),
    ...(options.taskId ? { taskId: options.taskId } : {}),
  };
}

/** The run's files as one plan task's tools see them: what they write is marked as the task's. */
export function filesOfTask(files: FileStore, taskId: string): FileStore {
  return {
    put: (runId, name, body, options) => files.put(runId, name, body, { ...options, taskId }),
    get: (runId, name) => files.get(runId, name),
    getRange: (runId, name, start, end) => files.getRange(runId, name, start, end),
    list: (runId) => files.list(runId),
  };
}

/** The names of the files a task wrote, in the list's order. */
export const namesOfTask = (files: readonly FileMeta[], taskId: string): string[] =>
  files.filter((file) => file.taskId === taskId).map((file) => file.name);

/** A file uploaded through the API before any run uses it. */
export interface UploadMeta extends FileMeta {
  fileId: string;
}

/** A presigned upload over this size is a multipart upload, in parts of this size (the last one shorter). */
export const UPLOAD_PART_BYTES = 16 * 1024 * 1024;
/** How long upload links work: below the signing credentials' life (docs/api.md, "API"). */
export const UPLOAD_LINK_SECONDS = 3600;

/** What a client announces to upload a file straight to the bucket. */
export interface UploadRequest {
  name: string;
  bytes: number;
  contentType: string;
}

/**
 * Links to upload parts of a file: each PUT must carry these headers and exactly its part's bytes
 * (the signature covers the length, so a link for 16 MiB cannot take 5 GiB).
 */
export interface UploadLinks {
  fileId: string;
  parts: { partNumber: number; url: string }[];
  headers: Record<string, string>;
  /** When the links stop working: their own life, or the signing credentials' if that ends first. */
  expiresAt: string;
}

/** A presigned upload handed out: PUT each part's bytes to its URL, then complete it with each part's ETag. */
export interface PendingUpload extends UploadLinks {
  name: string;
  contentType: string;
  bytes: number;
  /** Every part but the last has exactly this many bytes. */
  partBytes: number;
}

/** The number of parts of an upload of this size, and each part's size. */
export const partCount = (bytes: number) => Math.max(1, Math.ceil(bytes / UPLOAD_PART_BYTES));
export const partSize = (bytes: number, partNumber: number) => Math.min(UPLOAD_PART_BYTES, bytes - (partNumber - 1) * UPLOAD_PART_BYTES);

export interface UploadedPart {
  partNumber: number;
  etag: string;
}

/**
 * Uploads and downloads: files a client sends before a run (attached to runs by id) and links to
 * fetch a run's files. The S3 adapter implements it beside FileStore; the in-memory fake too.
 */
export interface FileTransfer {
  upload(tenantId: string, name: string, body: Uint8Array, contentType: string): Promise<UploadMeta>;
  /** Presigned links to upload a file of any size (up to 5 GB); the file exists once completed. */
  beginUpload(tenantId: string, request: UploadRequest): Promise<PendingUpload>;
  /**
   * Fresh links for these parts of a pending upload (links expire; a long upload outlives them);
   * undefined when the tenant has no such upload. A part the upload does not have is a 400, a
   * completed upload a 409.
   */
  signParts(tenantId: string, fileId: string, partNumbers: number[]): Promise<UploadLinks | undefined>;
  /** Completes a presigned upload (the bytes must all be there); undefined when the tenant has no such upload. */
  completeUpload(tenantId: string, fileId: string, parts: UploadedPart[]): Promise<UploadMeta | undefined>;
  /** The tenant's uploads with these ids; missing ids are left out. */
  uploads(tenantId: string, fileIds: string[]): Promise<UploadMeta[]>;
  /** Copies uploads into the run's files (under their names). */
  attach(tenantId: string, runId: string, uploads: UploadMeta[]): Promise<FileMeta[]>;
  /** A short-lived link that downloads the file, or undefined when the run has no such file. */
  downloadUrl(runId: string, name: string): Promise<string | undefined>;
}

/**
 * A file name that is safe anywhere and shows what it is: no path separators, no traversal, not
 * hidden, no control or format characters (a right-to-left override would show `txt.exe` as
 * another name; zero-width characters would make two names look alike). What remains of a name
 * that has none of that is kept as it is.
 */
export function sanitizeFileName(raw: string): string {
  const base = raw.split(/[/\\]/).pop() ?? "";
  const cleaned = base
    .normalize("NFC")
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, "")
    .replace(/[<>:"|?*]/g, "_")
    .replace(/^[.\s]+/, "")
    .trim()
    .slice(0, 120);
  return cleaned;
}

/** A file name from a title: lowercase words joined by '-' (the fallback when no such word is left). */
export function slugOf(title: string, fallback: string): string {
  return (
    title
      .normalize("NFKD")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "")
      .slice(0, 60) || fallback
  );
}

/** A relative path (`sub/name`) with each part made a safe file name; empty parts are dropped. */
export function sanitizeFilePath(raw: string): string {
  return raw.split(/[/\\]/).map(sanitizeFileName).filter(Boolean).join("/");
}
