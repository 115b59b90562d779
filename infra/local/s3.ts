import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, existsSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { sigV4Refusal } from "./sigv4.mjs";
import type { AddressInfo } from "node:net";
import path from "node:path";

interface StoredObject {
  body: Buffer;
  contentType: string;
  etag: string;
  lastModified: Date;
}

class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();
const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;

export interface LocalS3Options {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Folder that keeps objects across restarts; in memory when unset. */
  dataDir?: string;
}

/**
 * S3 on loopback, path-style, for the object calls Stepwise makes (CreateBucket, HeadBucket,
 * PutObject, GetObject, HeadObject, CopyObject, DeleteObject). Like a private bucket, it refuses
 * anonymous requests; presigned URLs are checked as S3 checks them: the SigV4 query signature is
 * recomputed with the local credentials, and an expired link is refused.
 */
export class LocalS3 {
  private readonly buckets = new Set<string>();
  private readonly objects = new Map<string, StoredObject>();
  private server?: Server;

  constructor(private readonly options: LocalS3Options) {
    if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  }

  async listen(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  createBucket(name: string): void {
    this.buckets.add(name);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (!this.server) return resolve();
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    try {
      const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
      await this.authorize(req, url, Buffer.concat(chunks));
      const [bucket = "", ...rest] = url.pathname.slice(1).split("/");
      const key = rest.map(decodeURIComponent).join("/");
      if (!bucket) throw new S3Error(400, "InvalidRequest", "path-style requests only: /bucket/key");
      if (!key) return this.bucketRequest(req.method ?? "GET", bucket, res);
      if (!this.buckets.has(bucket)) throw new S3Error(404, "NoSuchBucket", `The bucket ${bucket} does not exist`);
      const id = `${bucket}/${key}`;
      switch (req.method) {
        case "PUT": {
          const copySource = req.headers["x-amz-copy-source"];
          if (typeof copySource === "string") {
            const source = this.read(decodeURIComponent(copySource.replace(/^\//, "")));
            const copy = { ...source, lastModified: new Date() };
            this.write(id, copy);
            res.writeHead(200, { "content-type": "application/xml" });
            return void res.end(xml(`<CopyObjectResult><ETag>${copy.etag}</ETag><LastModified>${copy.lastModified.toISOString()}</LastModified></CopyObjectResult>`));
          }
          const body = Buffer.concat(chunks);
          const object = { body, contentType: String(req.headers["content-type"] ?? "binary/octet-stream"), etag: `"${createHash("md5").update(body).digest("hex")}"`, lastModified: new Date() };
          this.write(id, object);
          res.writeHead(200, { etag: object.etag });
          return void res.end();
        }
        case "GET":
        case "HEAD": {
          const object = this.read(id);
          res.writeHead(200, {
            "content-type": url.searchParams.get("response-content-type") ?? object.contentType,
            "content-length": String(object.body.byteLength),
            etag: object.etag,
            "last-modified": object.lastModified.toUTCString(),
            ...(url.searchParams.has("response-content-disposition") ? { "content-disposition": url.searchParams.get("response-content-disposition")! } : {}),
            // As the stack's bucket CORS rule: a page on the API's origin may read a presigned download.
            ...(req.headers.origin ? { "access-control-allow-origin": "*" } : {}),
          });
          return void res.end(req.method === "GET" ? object.body : undefined);
        }
        case "DELETE":
          this.objects.delete(id);
          if (this.options.dataDir) rmSync(this.fileOf(id), { force: true });
          res.writeHead(204);
          return void res.end();
        default:
          throw new S3Error(405, "MethodNotAllowed", `${req.method} is not supported here`);
      }
    } catch (error) {
      const e = error instanceof S3Error ? error : new S3Error(500, "InternalError", String(error));
      res.writeHead(e.status, { "content-type": "application/xml" });
      res.end(req.method === "HEAD" ? undefined : xml(`<Error><Code>${e.code}</Code><Message>${e.message}</Message></Error>`));
    }
  }

  private bucketRequest(method: string, bucket: string, res: ServerResponse) {
    if (method === "PUT") this.buckets.add(bucket);
    else if (!this.buckets.has(bucket)) throw new S3Error(404, "NoSuchBucket", `The bucket ${bucket} does not exist`);
    res.writeHead(200);
    res.end();
  }

  /** A private bucket: requests signed with the stack's credentials only; presigned links are verified and expire. */
  private async authorize(req: IncomingMessage, url: URL, body: Buffer): Promise<void> {
    if (req.headers.authorization !== undefined) {
      const refusal = await sigV4Refusal(req, body, this.options);
      if (refusal) throw new S3Error(403, "SignatureDoesNotMatch", refusal);
      return;
    }
    const query = url.searchParams;
    if (query.get("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256") throw new S3Error(403, "AccessDenied", "Access Denied");
    const amzDate = query.get("X-Amz-Date") ?? "";
    const expires = Number(query.get("X-Amz-Expires"));
    const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
    if (!Number.isFinite(signedAt) || !Number.isInteger(expires) || expires < 1 || expires > 604_800) {
      throw new S3Error(403, "AuthorizationQueryParametersError", "X-Amz-Date and X-Amz-Expires must be valid");
    }
    if (Date.now() > signedAt + expires * 1000) throw new S3Error(403, "AccessDenied", "Request has expired");
    const expected = this.presignedSignature(req.method ?? "GET", url, req.headers);
    const given = Buffer.from(query.get("X-Amz-Signature") ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))) {
      throw new S3Error(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.");
    }
  }

  /** SigV4 for a presigned request: canonical request → string to sign → HMAC with the derived key. */
  private presignedSignature(method: string, url: URL, headers: IncomingMessage["headers"]): string {
    const query = url.searchParams;
    const credential = (query.get("X-Amz-Credential") ?? "").split("/");
    const [accessKeyId, date, region, service] = credential;
    if (accessKeyId !== this.options.accessKeyId || credential.length !== 5) throw new S3Error(403, "InvalidAccessKeyId", "The access key is not known here");
    const signedHeaders = query.get("X-Amz-SignedHeaders") ?? "host";
    const canonicalQuery = [...query.entries()]
      .filter(([name]) => name !== "X-Amz-Signature")
      .map(([name, value]) => [rfc3986(name), rfc3986(value)])
      .sort(([a, x], [b, y]) => (a! < b! ? -1 : a! > b! ? 1 : x! < y! ? -1 : 1))
      .map(([name, value]) => `${name}=${value}`)
      .join("&");
    const canonicalHeaders = signedHeaders
      .split(";")
      .map((name) => `${name}:${String(headers[name] ?? "").trim().replace(/\s+/g, " ")}\n`)
      .join("");
    const canonicalRequest = [method, url.pathname, canonicalQuery, canonicalHeaders, signedHeaders, "UNSIGNED-PAYLOAD"].join("\n");
    const scope = `${date}/${region}/${service}/aws4_request`;
    const stringToSign = ["AWS4-HMAC-SHA256", query.get("X-Amz-Date"), scope, sha256(canonicalRequest)].join("\n");
    const key = hmac(hmac(hmac(hmac(`AWS4${this.options.secretAccessKey}`, date!), region!), service!), "aws4_request");
    return createHmac("sha256", key).update(stringToSign).digest("hex");
  }

  private read(id: string): StoredObject {
    let object = this.objects.get(id);
    if (!object && this.options.dataDir && existsSync(`${this.fileOf(id)}.json`)) {
      const meta = JSON.parse(readFileSync(`${this.fileOf(id)}.json`, "utf8"));
      object = { ...meta, lastModified: new Date(meta.lastModified), body: readFileSync(this.fileOf(id)) };
      this.objects.set(id, object!);
    }
    if (!object) throw new S3Error(404, "NoSuchKey", "The specified key does not exist.");
    return object;
  }

  private write(id: string, object: StoredObject): void {
    this.objects.set(id, object);
    if (!this.options.dataDir) return;
    const { body, ...meta } = object;
    writeFileSync(this.fileOf(id), body);
    writeFileSync(`${this.fileOf(id)}.json`, JSON.stringify({ ...meta, key: id }));
  }

  private fileOf(id: string): string {
    return path.join(this.options.dataDir!, sha256(id));
  }
}

/** URI encoding as SigV4 wants it: everything but unreserved characters, spaces as %20. */
const rfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
