import { createHash, createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { sigV4Refusal } from "./sigv4.mjs";

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

/** A multipart upload in progress: its parts by number. */
interface MultipartUpload {
  id: string;
  contentType: string;
  parts: Map<number, { body: Buffer; etag: string }>;
}

/** S3's smallest part, the last one apart. */
const MIN_PART_BYTES = 5 * 1024 * 1024;
const md5 = (data: Buffer) => createHash("md5").update(data).digest("hex");

/**
 * S3 on loopback, path-style, for the object calls Stepwise makes (CreateBucket, HeadBucket,
 * PutObject, GetObject, HeadObject, CopyObject, DeleteObject, and multipart uploads: Create,
 * UploadPart, Complete, Abort). Like a private bucket, it refuses anonymous requests; presigned URLs
 * are checked as S3 checks them: the SigV4 query signature is recomputed with the local
 * credentials, and an expired link is refused. Completing a multipart upload checks what S3 checks:
 * every part listed was uploaded with that ETag, in ascending order, each but the last at least 5 MiB.
 */
export class LocalS3 {
  private readonly buckets = new Set<string>();
  private readonly objects = new Map<string, StoredObject>();
  private readonly multipart = new Map<string, MultipartUpload>();
  private server?: Server;

  constructor(private readonly options: LocalS3Options) {
    if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  }

  async listen(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    const server = this.server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
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
    try {
      const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
      // As the stack's bucket CORS rule: a page may upload through a link and read the part's ETag.
      if (req.headers.origin) {
        res.setHeader("access-control-allow-origin", "*");
        res.setHeader("access-control-expose-headers", "ETag");
      }
      if (req.method === "OPTIONS") {
        res.writeHead(204, {
          "access-control-allow-methods": "GET, PUT",
          "access-control-allow-headers": String(req.headers["access-control-request-headers"] ?? "*"),
          "access-control-max-age": "3600",
        });
        return void res.end();
      }
      // A presigned link is judged on its headers, before any byte of the body is kept (a link
      // signed for 16 MiB must not have 5 GiB read first); a signed request once its body is read.
      if (req.headers.authorization === undefined) this.authorizePresigned(req, url);
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (req.headers.authorization !== undefined) await this.authorizeSigned(req, Buffer.concat(chunks));
      const [bucket = "", ...rest] = url.pathname.slice(1).split("/");
      const key = rest.map(decodeURIComponent).join("/");
      if (!bucket) throw new S3Error(400, "InvalidRequest", "path-style requests only: /bucket/key");
      if (!key) return this.bucketRequest(req.method ?? "GET", bucket, res);
      if (!this.buckets.has(bucket)) throw new S3Error(404, "NoSuchBucket", `The bucket ${bucket} does not exist`);
      const id = `${bucket}/${key}`;
      if (url.searchParams.has("uploads") || url.searchParams.has("uploadId"))
        return this.multipartRequest(req.method ?? "GET", id, url, Buffer.concat(chunks), req, res);
      switch (req.method) {
        case "PUT": {
          const copySource = req.headers["x-amz-copy-source"];
          if (typeof copySource === "string") {
            const source = this.read(decodeURIComponent(copySource.replace(/^\//, "")));
            const copy = { ...source, lastModified: new Date() };
            this.write(id, copy);
            res.writeHead(200, { "content-type": "application/xml" });
            return void res.end(
              xml(
                `<CopyObjectResult><ETag>${copy.etag}</ETag><LastModified>${copy.lastModified.toISOString()}</LastModified></CopyObjectResult>`,
              ),
            );
          }
          const body = Buffer.concat(chunks);
          const object = {
            body,
            contentType: String(req.headers["content-type"] ?? "binary/octet-stream"),
            etag: `"${md5(body)}"`,
            lastModified: new Date(),
          };
          this.write(id, object);
          res.writeHead(200, { etag: object.etag });
          return void res.end();
        }
        case "GET":
        case "HEAD": {
          const object = this.read(id);
          const disposition = url.searchParams.get("response-content-disposition");
          // A Range read (RFC 9110 §14): one range of bytes, 206 with where it lies in the whole.
          const range = byteRange(req.headers.range, object.body.byteLength);
          const body = range ? object.body.subarray(range.start, range.end + 1) : object.body;
          res.writeHead(range ? 206 : 200, {
            "content-type": url.searchParams.get("response-content-type") ?? object.contentType,
            "content-length": String(body.byteLength),
            etag: object.etag,
            "last-modified": object.lastModified.toUTCString(),
            "accept-ranges": "bytes",
            ...(range ? { "content-range": `bytes ${range.start}-${range.end}/${object.body.byteLength}` } : {}),
            ...(disposition === null ? {} : { "content-disposition": disposition }),
          });
          return void res.end(req.method === "GET" ? body : undefined);
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
      // A body not read yet is discarded as it comes (none of it kept) before the answer, so the
      // client reads the refusal rather than a connection closed under its upload.
      if (!req.readableEnded) for await (const _chunk of req);
      res.writeHead(e.status, { "content-type": "application/xml" });
      res.end(req.method === "HEAD" ? undefined : xml(`<Error><Code>${e.code}</Code><Message>${e.message}</Message></Error>`));
    }
  }

  /** CreateMultipartUpload (POST ?uploads), UploadPart (PUT ?partNumber&uploadId), Complete (POST ?uploadId), Abort (DELETE ?uploadId). */
  private multipartRequest(method: string, id: string, url: URL, body: Buffer, req: IncomingMessage, res: ServerResponse): void {
    const [bucket, ...rest] = id.split("/");
    const key = rest.join("/");
    if (method === "POST" && url.searchParams.has("uploads")) {
      const upload: MultipartUpload = {
        id: `${Date.now().toString(36)}.${randomUUID()}`,
        contentType: String(req.headers["content-type"] ?? "binary/octet-stream"),
        parts: new Map(),
      };
      this.multipart.set(`${id}?${upload.id}`, upload);
      res.writeHead(200, { "content-type": "application/xml" });
      return void res.end(
        xml(
          `<InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${escapeXml(key)}</Key><UploadId>${upload.id}</UploadId></InitiateMultipartUploadResult>`,
        ),
      );
    }
    const upload = this.multipart.get(`${id}?${url.searchParams.get("uploadId")}`);
    if (!upload)
      throw new S3Error(
        404,
        "NoSuchUpload",
        "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
      );
    if (method === "PUT") {
      const partNumber = Number(url.searchParams.get("partNumber"));
      if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > 10_000)
        throw new S3Error(400, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive");
      const etag = `"${md5(body)}"`;
      upload.parts.set(partNumber, { body, etag });
      res.writeHead(200, { etag });
      return void res.end();
    }
    if (method === "DELETE") {
      this.multipart.delete(`${id}?${upload.id}`);
      res.writeHead(204);
      return void res.end();
    }
    if (method !== "POST") throw new S3Error(405, "MethodNotAllowed", `${method} is not supported on an upload`);
    const listed = [...body.toString("utf8").matchAll(/<Part>([\s\S]*?)<\/Part>/g)].map(([, part]) => ({
      partNumber: Number(/<PartNumber>(\d+)<\/PartNumber>/.exec(part)?.[1]),
      etag:
        /<ETag>([\s\S]*?)<\/ETag>/
          .exec(part)?.[1]
          ?.replace(/&quot;/g, '"')
          .trim() ?? "",
    }));
    if (listed.length === 0)
      throw new S3Error(400, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema");
    const bodies: Buffer[] = [];
    const etags: string[] = [];
    listed.forEach(({ partNumber, etag }, i) => {
      const part = upload.parts.get(partNumber);
      if (!part || part.etag.replace(/"/g, "") !== etag.replace(/"/g, ""))
        throw new S3Error(400, "InvalidPart", `Part ${partNumber} was not uploaded, or its ETag does not match.`);
      if (i > 0 && partNumber <= listed[i - 1].partNumber)
        throw new S3Error(400, "InvalidPartOrder", "The list of parts was not in ascending order.");
      if (i < listed.length - 1 && part.body.byteLength < MIN_PART_BYTES)
        throw new S3Error(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size");
      bodies.push(part.body);
      etags.push(part.etag);
    });
    const digests = Buffer.concat(etags.map((partEtag) => Buffer.from(partEtag.replace(/"/g, ""), "hex")));
    const object = {
      body: Buffer.concat(bodies),
      contentType: upload.contentType,
      etag: `"${md5(digests)}-${listed.length}"`,
      lastModified: new Date(),
    };
    this.write(id, object);
    this.multipart.delete(`${id}?${upload.id}`);
    res.writeHead(200, { "content-type": "application/xml" });
    res.end(
      xml(
        `<CompleteMultipartUploadResult><Location>/${id}</Location><Bucket>${bucket}</Bucket><Key>${escapeXml(key)}</Key><ETag>${object.etag.replace(/"/g, "&quot;")}</ETag></CompleteMultipartUploadResult>`,
      ),
    );
  }

  private bucketRequest(method: string, bucket: string, res: ServerResponse) {
    if (method === "PUT") this.buckets.add(bucket);
    else if (!this.buckets.has(bucket)) throw new S3Error(404, "NoSuchBucket", `The bucket ${bucket} does not exist`);
    res.writeHead(200);
    res.end();
  }

  /** A private bucket: requests signed with the stack's credentials only. */
  private async authorizeSigned(req: IncomingMessage, body: Buffer): Promise<void> {
    const refusal = await sigV4Refusal(req, body, this.options);
    if (refusal) throw new S3Error(403, "SignatureDoesNotMatch", refusal);
  }

  /**
   * Presigned links are verified and expire. The signature covers the headers the link names
   * (X-Amz-SignedHeaders): a link that signs Content-Length takes that many bytes only, one that
   * signs Content-Type that type only; anything else is SignatureDoesNotMatch, as S3 answers.
   */
  private authorizePresigned(req: IncomingMessage, url: URL): void {
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
    if (accessKeyId !== this.options.accessKeyId || credential.length !== 5)
      throw new S3Error(403, "InvalidAccessKeyId", "The access key is not known here");
    const signedHeaders = query.get("X-Amz-SignedHeaders") ?? "host";
    const canonicalQuery = [...query.entries()]
      .filter(([name]) => name !== "X-Amz-Signature")
      .map(([name, value]) => [rfc3986(name), rfc3986(value)])
      .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : 1))
      .map(([name, value]) => `${name}=${value}`)
      .join("&");
    const canonicalHeaders = signedHeaders
      .split(";")
      .map(
        (name) =>
          `${name}:${String(headers[name] ?? "")
            .trim()
            .replace(/\s+/g, " ")}\n`,
      )
      .join("");
    const canonicalRequest = [method, url.pathname, canonicalQuery, canonicalHeaders, signedHeaders, "UNSIGNED-PAYLOAD"].join("\n");
    const scope = `${date}/${region}/${service}/aws4_request`;
    const stringToSign = ["AWS4-HMAC-SHA256", query.get("X-Amz-Date"), scope, sha256(canonicalRequest)].join("\n");
    const key = hmac(hmac(hmac(hmac(`AWS4${this.options.secretAccessKey}`, date), region), service), "aws4_request");
    return createHmac("sha256", key).update(stringToSign).digest("hex");
  }

  private read(id: string): StoredObject {
    let object = this.objects.get(id);
    if (!object && this.options.dataDir && existsSync(`${this.fileOf(id)}.json`)) {
      const meta = JSON.parse(readFileSync(`${this.fileOf(id)}.json`, "utf8"));
      const loaded: StoredObject = { ...meta, lastModified: new Date(meta.lastModified), body: readFileSync(this.fileOf(id)) };
      this.objects.set(id, loaded);
      object = loaded;
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
    if (!this.options.dataDir) throw new Error("LocalS3 keeps objects in files only when it has a dataDir.");
    return path.join(this.options.dataDir, sha256(id));
  }
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** URI encoding as SigV4 wants it: everything but unreserved characters, spaces as %20. */
const rfc3986 = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The one byte range a `Range: bytes=…` header asks for (first-last, first-, or -suffix), inclusive
 * and cut at the object's end; undefined when there is none (the whole object). S3 answers a range
 * that starts past the end with 416 InvalidRange, and ignores several ranges (the whole object).
 */
function byteRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header?.trim() ?? "");
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  const [first, last] = [match[1], match[2]];
  const start = first === "" ? Math.max(0, size - Number(last)) : Number(first);
  const end = first === "" || last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || end < start) throw new S3Error(416, "InvalidRange", "The requested range is not satisfiable");
  return { start, end };
}
