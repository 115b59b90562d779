import { CompleteUploadRequest, PresignedUploadRequest, ResignUploadRequest } from "../../shared/contracts/files.js";
import { INLINE_UPLOAD_BYTES } from "../../shared/contracts/uploadLimits.js";
import { NotFoundError, PayloadTooLargeError } from "../../shared/errors.js";
import { ownRun } from "../../shared/run/access.js";
import { MULTIPART_ROOM_BYTES } from "../bodyLimits.js";
import { baseUrl, type HttpResult, header, json } from "../http.js";
import { parseBody } from "../jsonBody.js";
import { linksFor } from "../links.js";
import type { Request, Route } from "./routes.js";
import { cleanName, contentTypeFor, parseUpload } from "./upload.js";

/** The largest file that goes through the API itself; larger ones go straight to the bucket. */
export const inlineUploadBytes = (maxUploadBytes: number) => Math.min(maxUploadBytes, INLINE_UPLOAD_BYTES);

/** Files: upload before a run, list a run's files, download one through a short-lived link. */
export const fileRoutes: Route[] = [
  {
    method: "POST",
    pattern: /^\/v1\/files$/,
    handle: uploadFile,
    maxBodyBytes: (maxUploadBytes) => inlineUploadBytes(maxUploadBytes) + MULTIPART_ROOM_BYTES,
  },
  { method: "POST", pattern: /^\/v1\/files\/(?<fileId>[^/]+)\/complete$/, handle: completeUpload },
  { method: "POST", pattern: /^\/v1\/files\/(?<fileId>[^/]+)\/parts$/, handle: resignParts },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/files$/, handle: listFiles },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/files\/(?<name>[^/]+)$/, handle: downloadFile },
];

/**
 * Three forms: multipart/form-data or the raw bytes with `?name=` store a file of up to
 * inlineUploadBytes at once; JSON without `?name=` ({name, bytes}) hands out presigned links for a
 * file of up to MAX_UPLOAD_BYTES, which exists once `POST /v1/files/{fileId}/complete` is called.
 */
async function uploadFile(request: Request): Promise<HttpResult> {
  const { event, services, tenantId } = request;
  const type = header(event, "content-type") ?? "";
  if (/^application\/json\b/i.test(type) && !event.queryStringParameters?.name) return presignUpload(request);
  const file = await parseUpload(event, inlineUploadBytes(services.settings.files.maxUploadBytes), presignHint);
  const upload = await services.transfers.upload(tenantId, file.name, file.body, file.contentType);
  return json(201, upload);
}

const presignHint = "Larger files go straight to storage: POST /v1/files with JSON {name, bytes} for upload links.";

async function presignUpload({ event, services, tenantId }: Request): Promise<HttpResult> {
  const body = parseBody(event, PresignedUploadRequest);
  const max = services.settings.files.maxUploadBytes;
  if (body.bytes > max) throw new PayloadTooLargeError(`The file is over ${max} bytes, the upload limit.`);
  const name = cleanName(body.name);
  const pending = await services.transfers.beginUpload(tenantId, {
    name,
    bytes: body.bytes,
    contentType: contentTypeFor(name, body.contentType?.toLowerCase() ?? ""),
  });
  const files = `${baseUrl(event)}/v1/files/${pending.fileId}`;
  return json(201, { ...pending, complete: `${files}/complete`, resign: `${files}/parts` });
}

/** Fresh links for the parts still to send: a long upload outlives the first ones. */
async function resignParts({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const body = parseBody(event, ResignUploadRequest);
  const links = isFileId(params.fileId) ? await services.transfers.signParts(tenantId, params.fileId, body.partNumbers) : undefined;
  if (!links) throw new NotFoundError(`No upload with id ${params.fileId}.`);
  return json(200, links);
}

async function completeUpload({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const body = parseBody(event, CompleteUploadRequest);
  const upload = isFileId(params.fileId) ? await services.transfers.completeUpload(tenantId, params.fileId, body.parts) : undefined;
  if (!upload) throw new NotFoundError(`No upload with id ${params.fileId}.`);
  return json(201, upload);
}

const isFileId = (id: string) => /^file_[a-z0-9]{1,60}$/.test(id);

async function listFiles({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  const api = linksFor(event, services).api;
  const files = await services.files.list(run.runId);
  return json(200, { runId: run.runId, files: files.map((f) => ({ ...f, download: fileLink(api, run.runId, f.name) })) });
}

/**
 * A 302 to a presigned URL: the bytes never pass through the API (its payload limit is 10 MB).
 * With `Accept: application/json`, the link itself ({url}): a page's fetch with an API key cannot
 * follow a redirect to another origin, but it can fetch the link.
 */
async function downloadFile({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId);
  const name = decoded(params.name);
  // Longer names than any file can have would be refused by the table, not found.
  const url = name === undefined || name.length > 200 ? undefined : await services.transfers.downloadUrl(run.runId, name);
  if (!url) throw new NotFoundError(`Run ${run.runId} has no file named ${name ?? params.name}.`);
  if (/\bapplication\/json\b/.test(header(event, "accept") ?? "")) return json(200, { url });
  return { statusCode: 302, headers: { location: url, "cache-control": "no-store" }, body: "" };
}

/** Where the API serves a run's file (it answers with a redirect to the bytes). */
export const fileLink = (api: string, runId: string, name: string) => `${api}/v1/runs/${runId}/files/${encodeURIComponent(name)}`;

/** A path segment as sent (percent-encoded); undefined for a malformed encoding, which no name has. */
export function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
