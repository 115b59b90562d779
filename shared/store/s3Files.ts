import { randomBytes } from "node:crypto";
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { BadRequestError, ConflictError } from "../errors.js";
import {
  type FileMeta,
  type FileStore,
  type FileTransfer,
  newFileMeta,
  type PendingUpload,
  type PutFileOptions,
  partCount,
  partSize,
  type StoredFile,
  toBytes,
  UPLOAD_LINK_SECONDS,
  UPLOAD_PART_BYTES,
  type UploadedPart,
  type UploadLinks,
  type UploadMeta,
  type UploadRequest,
} from "../ports/files.js";
import { metaOf } from "./fileMeta.js";
import { keys } from "./keys.js";
import { expiresAt, type Item, type Table } from "./table.js";

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

const META_ATTRIBUTES = ["name", "description", "contentType", "bytes", "createdAt", "taskId"];

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
    await this.options.s3.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: objectKey, Body: bytes, ContentType: meta.contentType }),
    );
    await this.putMeta(runId, meta, objectKey, options.idempotencyKey);
    return meta;
  }

  async get(runId: string, name: string): Promise<StoredFile | undefined> {
    const item = await this.meta(runId, name);
    if (!item) return undefined;
    // Files stored before S3 kept their bytes in the item.
    if (!item.objectKey) return { ...metaOf(item), body: item.body ?? toBytes(String(item.content ?? "")) };
    const object = await this.options.s3.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: item.objectKey }));
    if (!object.Body) throw new Error(`S3 returned no body for ${item.objectKey}.`);
    return { ...metaOf(item), body: await object.Body.transformToByteArray() };
  }

  async getRange(runId: string, name: string, start: number, end: number): Promise<{ meta: FileMeta; body: Uint8Array } | undefined> {
    const item = await this.meta(runId, name);
    if (!item) return undefined;
    const meta = metaOf(item);
    const last = Math.min(end, meta.bytes) - 1;
    if (!item.objectKey) {
      const body = item.body ?? toBytes(String(item.content ?? ""));
      return { meta, body: body.slice(start, last + 1) };
    }
    if (start > last) return { meta, body: new Uint8Array() };
    // HTTP's byte ranges are inclusive at both ends.
    const object = await this.options.s3.send(
      new GetObjectCommand({ Bucket: this.options.bucket, Key: item.objectKey, Range: `bytes=${start}-${last}` }),
    );
    if (!object.Body) throw new Error(`S3 returned no body for ${item.objectKey}.`);
    return { meta, body: await object.Body.transformToByteArray() };
  }

  async list(runId: string): Promise<FileMeta[]> {
    const items = await this.options.table.queryPrefix<Item>(keys.runPk(runId), keys.filePrefix, {
      attributes: META_ATTRIBUTES,
    });
    return items.map(metaOf);
  }

  async upload(tenantId: string, name: string, body: Uint8Array, contentType: string): Promise<UploadMeta> {
    const fileId = newFileId();
    const objectKey = `${tenantId}/uploads/${fileId}/${name}`;
    await this.options.s3.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: objectKey, Body: body, ContentType: contentType }));
    const upload: UploadMeta = {
      fileId,
      name,
      description: "Uploaded",
      contentType,
      bytes: body.byteLength,
      createdAt: new Date().toISOString(),
    };
    const { table } = this.options;
    await table.putItem({ Item: { ...keys.upload(tenantId, fileId), ...upload, objectKey, ttl: expiresAt(this.options.retentionDays) } });
    return upload;
  }

  /**
   * One presigned PUT for a file up to UPLOAD_PART_BYTES, a multipart upload above. The upload's
   * item waits, marked pending, until the client completes it: a run cannot use it before.
   */
  async beginUpload(tenantId: string, request: UploadRequest): Promise<PendingUpload> {
    const { s3, bucket, table } = this.options;
    const fileId = newFileId();
    const objectKey = `${tenantId}/uploads/${fileId}/${request.name}`;
    const uploadId =
      request.bytes <= UPLOAD_PART_BYTES
        ? undefined
        : (await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: objectKey, ContentType: request.contentType }))).UploadId;
    const meta: UploadMeta = {
      fileId,
      name: request.name,
      description: "Uploaded",
      contentType: request.contentType,
      bytes: request.bytes,
      createdAt: new Date().toISOString(),
    };
    await table.putItem({
      Item: { ...keys.upload(tenantId, fileId), ...meta, objectKey, uploadId, pending: true, ttl: expiresAt(this.options.retentionDays) },
    });
    const all = Array.from({ length: partCount(request.bytes) }, (_, i) => i + 1);
    const links = await this.links(fileId, { objectKey, uploadId, bytes: request.bytes, contentType: request.contentType }, all);
    return { ...links, name: request.name, contentType: request.contentType, bytes: request.bytes, partBytes: UPLOAD_PART_BYTES };
  }

  async signParts(tenantId: string, fileId: string, partNumbers: number[]): Promise<UploadLinks | undefined> {
    const { table } = this.options;
    const { Item: item } = await table.getItem({ Key: keys.upload(tenantId, fileId), ConsistentRead: true });
    if (!item) return undefined;
    if (!item.pending) throw new ConflictError(`Upload ${fileId} is complete already: it needs no more links.`);
    const count = partCount(Number(item.bytes));
    const outside = partNumbers.filter((n) => n > count);
    if (outside.length > 0) {
      throw new BadRequestError(
        `Upload ${fileId} has ${count} part${count === 1 ? "" : "s"}; there is no part ${outside.join(", ")}.`,
        undefined,
        "unknown_part",
      );
    }
    const upload = { objectKey: item.objectKey, uploadId: item.uploadId, bytes: Number(item.bytes), contentType: item.contentType };
    return this.links(
      fileId,
      upload,
      [...new Set(partNumbers)].sort((a, b) => a - b),
    );
  }

  /**
   * Links for these parts, each signing its exact length (and a single PUT its type too), as S3
   * then checks: a PUT of other bytes is refused (403) before anything is stored.
   */
  private async links(
    fileId: string,
    upload: { objectKey: string; uploadId?: string; bytes: number; contentType: string },
    partNumbers: number[],
  ): Promise<UploadLinks> {
    const { s3, bucket } = this.options;
    const Key = upload.objectKey;
    // A part's type is the upload's (given at its start): parts sign their length only.
    const signed = {
      expiresIn: UPLOAD_LINK_SECONDS,
      signableHeaders: new Set(upload.uploadId ? ["content-length"] : ["content-length", "content-type"]),
    };
    const parts = await Promise.all(
      partNumbers.map(async (partNumber) => {
        const ContentLength = partSize(upload.bytes, partNumber);
        const url = upload.uploadId
          ? await getSignedUrl(
              s3,
              new UploadPartCommand({ Bucket: bucket, Key, UploadId: upload.uploadId, PartNumber: partNumber, ContentLength }),
              signed,
            )
          : await getSignedUrl(s3, new PutObjectCommand({ Bucket: bucket, Key, ContentLength, ContentType: upload.contentType }), signed);
        return { partNumber, url };
      }),
    );
    return {
      fileId,
      parts,
      headers: upload.uploadId ? {} : { "content-type": upload.contentType },
      expiresAt: new Date(Math.min(Date.now() + UPLOAD_LINK_SECONDS * 1000, await this.credentialsEnd())).toISOString(),
    };
  }

  /** When the credentials that sign links expire (a Lambda role's session): links die with them. */
  private async credentialsEnd(): Promise<number> {
    const credentials = await this.options.s3.config.credentials();
    return credentials.expiration?.getTime() ?? Number.POSITIVE_INFINITY;
  }

  async completeUpload(tenantId: string, fileId: string, parts: UploadedPart[]): Promise<UploadMeta | undefined> {
    const { s3, bucket, table } = this.options;
    const { Item: item } = await table.getItem({ Key: keys.upload(tenantId, fileId), ConsistentRead: true });
    if (!item) return undefined;
    const meta: UploadMeta = { ...metaOf(item), fileId };
    if (!item.pending) return meta; // completed already: the same answer again
    try {
      if (item.uploadId) {
        const sorted = [...parts].sort((a, b) => a.partNumber - b.partNumber);
        await s3.send(
          new CompleteMultipartUploadCommand({
            Bucket: bucket,
            Key: item.objectKey,
            UploadId: item.uploadId,
            MultipartUpload: { Parts: sorted.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
          }),
        );
      }
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: item.objectKey }));
      if (head.ContentLength !== meta.bytes) {
        throw new BadRequestError(
          `The uploaded file has ${head.ContentLength} bytes; ${meta.bytes} were announced. Upload it again.`,
          undefined,
          "upload_size_mismatch",
        );
      }
    } catch (error) {
      if (error instanceof S3ServiceException && (error.$metadata.httpStatusCode ?? 500) < 500) {
        throw new BadRequestError(
          `The upload cannot be completed: ${error.name === "NotFound" ? "no bytes were uploaded" : error.message}. PUT every part to its link, then complete with each part's ETag.`,
          undefined,
          "upload_incomplete",
        );
      }
      throw error;
    }
    const { pending: _pending, uploadId: _uploadId, ...completed } = item;
    await table.putItem({ Item: completed });
    return meta;
  }

  async uploads(tenantId: string, fileIds: string[]): Promise<(UploadMeta & { objectKey: string })[]> {
    const unique = [...new Set(fileIds)];
    if (unique.length === 0) return [];
    const { table } = this.options;
    const items = await table.getMany(unique.map((id) => keys.upload(tenantId, id)));
    // An upload not yet completed is not a file yet.
    return unique.flatMap((id, i) => {
      const item = items[i];
      return item && !item.pending ? [{ ...metaOf(item), fileId: id, objectKey: item.objectKey }] : [];
    });
  }

  async attach(tenantId: string, runId: string, uploads: UploadMeta[]): Promise<FileMeta[]> {
    this.tenants.set(runId, Promise.resolve(tenantId));
    const stored = await this.uploads(
      tenantId,
      uploads.map((u) => u.fileId),
    );
    return Promise.all(
      stored.map(async ({ fileId: _id, objectKey, ...meta }) => {
        // A reference, not a copy: a copy of a file of up to 5 GB would not fit the API's 29 s. Nothing
        // deletes or overwrites an upload's object, and the bucket's retention counts from the upload.
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

  private async meta(runId: string, name: string): Promise<Item | undefined> {
    const { table } = this.options;
    const { Item } = await table.getItem({ Key: keys.file(runId, name), ConsistentRead: true });
    return Item;
  }

  private async putMeta(runId: string, meta: FileMeta, objectKey: string, idempotencyKey?: string): Promise<void> {
    const { table } = this.options;
    await table.putItem({
      Item: { ...keys.file(runId, meta.name), ...meta, objectKey, idempotencyKey, ttl: expiresAt(this.options.retentionDays) },
    });
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

const newFileId = () => `file_${Date.now().toString(36)}${randomBytes(10).toString("hex")}`;
