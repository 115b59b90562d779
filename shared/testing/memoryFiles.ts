import {
  type FileMeta,
  type FileStore,
  type FileTransfer,
  newFileMeta,
  type PendingUpload,
  type PutFileOptions,
  type StoredFile,
  toBytes,
  type UploadMeta,
} from "../ports/files.js";

/** The files port in memory, for unit tests of the core. */
export class MemoryFileStore implements FileStore, FileTransfer {
  readonly files = new Map<string, StoredFile>();
  /** Every write that happened (a put answered from an earlier one with its key is not a write). */
  readonly writes: { runId: string; name: string; idempotencyKey?: string }[] = [];
  private readonly keyOf = new Map<string, string | undefined>();
  private readonly uploaded = new Map<string, { tenantId: string; file: StoredFile }>();

  async put(runId: string, name: string, body: string | Uint8Array, options: PutFileOptions = {}): Promise<FileMeta> {
    const existing = this.files.get(`${runId}/${name}`);
    if (existing && options.idempotencyKey && this.keyOf.get(`${runId}/${name}`) === options.idempotencyKey) {
      const { body: _body, ...meta } = existing;
      return meta;
    }
    this.writes.push({ runId, name, idempotencyKey: options.idempotencyKey });
    this.keyOf.set(`${runId}/${name}`, options.idempotencyKey);
    const bytes = toBytes(body);
    const meta = newFileMeta(name, bytes, options);
    this.files.set(`${runId}/${name}`, { ...meta, body: bytes });
    return meta;
  }

  async get(runId: string, name: string): Promise<StoredFile | undefined> {
    return this.files.get(`${runId}/${name}`);
  }

  async getRange(runId: string, name: string, start: number, end: number): Promise<{ meta: FileMeta; body: Uint8Array } | undefined> {
    const file = this.files.get(`${runId}/${name}`);
    if (!file) return undefined;
    const { body, ...meta } = file;
    return { meta, body: body.slice(start, end) };
  }

  async list(runId: string): Promise<FileMeta[]> {
    return [...this.files.entries()]
      .filter(([key]) => key.startsWith(`${runId}/`))
      .map(([, { body: _body, ...meta }]) => meta)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async upload(tenantId: string, name: string, body: Uint8Array, contentType: string): Promise<UploadMeta> {
    const fileId = `file_${this.uploaded.size + 1}`;
    const file: StoredFile = {
      name,
      description: "Uploaded",
      contentType,
      bytes: body.byteLength,
      createdAt: new Date().toISOString(),
      body,
    };
    this.uploaded.set(fileId, { tenantId, file });
    const { body: _body, ...meta } = file;
    return { ...meta, fileId };
  }

  /** Presigned links need a bucket behind them: the S3 adapter (and the local S3 endpoint) has them. */
  async beginUpload(): Promise<PendingUpload> {
    throw new Error("presigned uploads need S3 (the local stack has it)");
  }

  async signParts(): Promise<undefined> {
    throw new Error("presigned uploads need S3 (the local stack has it)");
  }

  async completeUpload(): Promise<UploadMeta | undefined> {
    throw new Error("presigned uploads need S3 (the local stack has it)");
  }

  async uploads(tenantId: string, fileIds: string[]): Promise<UploadMeta[]> {
    return [...new Set(fileIds)].flatMap((fileId) => {
      const found = this.uploaded.get(fileId);
      if (!found || found.tenantId !== tenantId) return [];
      const { body: _body, ...meta } = found.file;
      return [{ ...meta, fileId }];
    });
  }

  async attach(tenantId: string, runId: string, uploads: UploadMeta[]): Promise<FileMeta[]> {
    const found = await this.uploads(
      tenantId,
      uploads.map((u) => u.fileId),
    );
    return Promise.all(
      found.map((u) => {
        const upload = this.uploaded.get(u.fileId);
        if (!upload) throw new Error(`Upload ${u.fileId} was found, yet is gone.`);
        return this.put(runId, u.name, upload.file.body, { contentType: u.contentType, description: u.description });
      }),
    );
  }

  async downloadUrl(runId: string, name: string): Promise<string | undefined> {
    return this.files.has(`${runId}/${name}`) ? `memory://${runId}/${encodeURIComponent(name)}` : undefined;
  }
}
