import { randomBytes } from "node:crypto";
import { CopyObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { BatchGetCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { contentTypeOf, newFileMeta, toBytes, type FileMeta, type FileStore, type FileTransfer, type PutFileOptions, type StoredFile, type UploadMeta } from "../ports/files.js";
import { keys } from "./keys.js";
import { expiresAt, type Table } from "./table.js";

export interface S3FileStoreOptions {
  table: Table;
  s3: S3Client;
  bucket: string;
  retentionDays: number;
  /** The tenant a run belongs to (object keys are `tenant/run/name`); read once per run and kept. */
  tenantOf(runId: string): Promise<string | undefined>;
  /** How long a download link works. */
  downloadLinkSeconds?: number;
}

const META_ATTRIBUTES = ["name", "description", "contentType", "bytes", "createdAt"];
const uploadKey = (tenantId: string, fileId: string) => ({ pk: `TENANT#${tenantId}`, sk: `UPLOAD#${fileId}` });

/**
 * The files port on S3: bytes in the bucket under `tenant/run/name`, metadata (and the object key)
 * in the table, so a file of any size costs one small item. Uploads wait under `tenant/uploads/id/`
 * until a run copies them in.
 */
export class S3FileStore implements FileStore, FileTransfer {
  private readonly tenants = new Map<string, Promise<string | undefined>>();

  constructor(private readonly options: S3FileStoreOptions) {}

  async put(runId: string, name: string, body: string | Uint8Array, options: PutFileOptions = {}): Promise<FileMeta> {
    const bytes = toBytes(body);
    const meta = newFileMeta(name, bytes, options);
    if (options.idempotencyKey) {
      // Written already by this call (a retry after a crash): the file as it was stored then.
      const existing = await this.meta(runId, name);
      if (existing?.idempotencyKey === options.idempotencyKey) return metaOf(existing);
    }
    const objectKey = `${await this.tenantFor(runId)}/${runId}/${name}`;
    await this.options.s3.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: objectKey, Body: bytes, ContentType: meta.contentType }));
    await this.putMeta(runId, meta, objectKey, options.idempotencyKey);
    return meta;
  }

  async get(runId: string, name: string): Promise<StoredFile | undefined> {
    const item = await this.meta(runId, name);
    if (!item) return undefined;
    // Files stored before S3 kept their bytes in the item.
    if (!item.objectKey) return { ...metaOf(item), body: item.body ?? toBytes(String(item.content ?? "")) };
    const object = await this.options.s3.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: item.objectKey }));
    return { ...metaOf(item), body: await object.Body!.transformToByteArray() };
  }

  async list(runId: string): Promise<FileMeta[]> {
    const items = await this.options.table.queryPrefix<Record<string, any>>(`RUN#${runId}`, keys.filePrefix, { attributes: META_ATTRIBUTES });
    return items.map(metaOf);
  }

  async upload(tenantId: string, name: string, body: Uint8Array, contentType: string): Promise<UploadMeta> {
    const fileId = `file_${Date.now().toString(36)}${randomBytes(10).toString("hex")}`;
    const objectKey = `${tenantId}/uploads/${fileId}/${name}`;
    await this.options.s3.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: objectKey, Body: body, ContentType: contentType }));
    const upload: UploadMeta = { fileId, name, description: "Uploaded", contentType, bytes: body.byteLength, createdAt: new Date().toISOString() };
    const { table } = this.options;
    await table.doc.send(new PutCommand({ TableName: table.name, Item: { ...uploadKey(tenantId, fileId), ...upload, objectKey, ttl: expiresAt(this.options.retentionDays) } }));
    return upload;
  }

  async uploads(tenantId: string, fileIds: string[]): Promise<(UploadMeta & { objectKey: string })[]> {
    const unique = [...new Set(fileIds)];
    if (unique.length === 0) return [];
    const { table } = this.options;
    const { Responses } = await table.doc.send(new BatchGetCommand({ RequestItems: { [table.name]: { Keys: unique.map((id) => uploadKey(tenantId, id)) } } }));
    const found = new Map((Responses?.[table.name] ?? []).map((item) => [item.fileId as string, item]));
    return unique.filter((id) => found.has(id)).map((id) => {
      const item = found.get(id)!;
      return { ...metaOf(item), fileId: id, objectKey: item.objectKey };
    });
  }

  async attach(tenantId: string, runId: string, uploads: UploadMeta[]): Promise<FileMeta[]> {
    this.tenants.set(runId, Promise.resolve(tenantId));
    const stored = await this.uploads(tenantId, uploads.map((u) => u.fileId));
    return Promise.all(
      stored.map(async ({ fileId: _id, objectKey: source, ...meta }) => {
        const objectKey = `${tenantId}/${runId}/${meta.name}`;
        // A copy, not a pointer: the run's files live (and expire) with the run.
        await this.options.s3.send(new CopyObjectCommand({ Bucket: this.options.bucket, Key: objectKey, CopySource: `${this.options.bucket}/${encodeURIComponent(source).replace(/%2F/g, "/")}` }));
        await this.putMeta(runId, meta, objectKey);
        return meta;
      }),
    );
  }

  async downloadUrl(runId: string, name: string): Promise<string | undefined> {
    const item = await this.meta(runId, name);
    if (!item?.objectKey) return undefined;
    const command = new GetObjectCommand({
      Bucket: this.options.bucket,
      Key: item.objectKey,
      ResponseContentType: item.contentType,
      ResponseContentDisposition: `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
    });
    return getSignedUrl(this.options.s3, command, { expiresIn: this.options.downloadLinkSeconds ?? 300 });
  }

  private async meta(runId: string, name: string): Promise<Record<string, any> | undefined> {
    const { table } = this.options;
    const { Item } = await table.doc.send(new GetCommand({ TableName: table.name, Key: keys.file(runId, name), ConsistentRead: true }));
    return Item;
  }

  private async putMeta(runId: string, meta: FileMeta, objectKey: string, idempotencyKey?: string): Promise<void> {
    const { table } = this.options;
    await table.doc.send(new PutCommand({ TableName: table.name, Item: { ...keys.file(runId, meta.name), ...meta, objectKey, idempotencyKey, ttl: expiresAt(this.options.retentionDays) } }));
  }

  private async tenantFor(runId: string): Promise<string> {
    let tenant = this.tenants.get(runId);
    if (!tenant) {
      tenant = this.options.tenantOf(runId);
      this.tenants.set(runId, tenant);
      tenant.catch(() => this.tenants.delete(runId));
    }
    const found = await tenant;
    if (!found) {
      this.tenants.delete(runId);
      throw new Error(`no run ${runId} to store a file for`);
    }
    return found;
  }
}

/** A file's metadata from its item (never its bytes, which older items kept inline). */
export function metaOf(item: Record<string, any>): FileMeta {
  return {
    name: item.name,
    description: item.description ?? "",
    contentType: item.contentType ?? contentTypeOf(item.name),
    bytes: Number(item.bytes ?? 0),
    createdAt: item.createdAt,
  };
}
