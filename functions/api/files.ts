import { NotFoundError } from "../../shared/errors.js";
import { header, json, type HttpResult } from "../http.js";
import { linksFor, ownRun } from "./access.js";
import type { Request, Route } from "./routes.js";
import { parseUpload } from "./upload.js";
import { MULTIPART_ROOM_BYTES } from "./bodyLimits.js";

/** Files: upload before a run, list a run's files, download one through a short-lived link. */
export const fileRoutes: Route[] = [
  { method: "POST", pattern: /^\/v1\/files$/, handle: uploadFile, maxBodyBytes: (config) => config.MAX_UPLOAD_BYTES + MULTIPART_ROOM_BYTES },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/files$/, handle: listFiles },
  { method: "GET", pattern: /^\/v1\/runs\/(?<runId>[^/]+)\/files\/(?<name>[^/]+)$/, handle: downloadFile },
];

async function uploadFile({ event, services, tenantId }: Request): Promise<HttpResult> {
  const file = await parseUpload(event, services.config.MAX_UPLOAD_BYTES);
  const upload = await services.transfers.upload(tenantId, file.name, file.body, file.contentType);
  return json(201, upload);
}

async function listFiles({ event, services, tenantId, params }: Request): Promise<HttpResult> {
  const run = await ownRun(services, tenantId, params.runId!);
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
  const run = await ownRun(services, tenantId, params.runId!);
  const name = decoded(params.name!);
  // Longer names than any file can have would be refused by the table, not found.
  const url = name === undefined || name.length > 200 ? undefined : await services.transfers.downloadUrl(run.runId, name);
  if (!url) throw new NotFoundError(`Run ${run.runId} has no file named ${name ?? params.name}.`);
  if (/\bapplication\/json\b/.test(header(event, "accept") ?? "")) return json(200, { url });
  return { statusCode: 302, headers: { location: url, "cache-control": "no-store" }, body: "" };
}

/** Where the API serves a run's file (it answers with a redirect to the bytes). */
export const fileLink = (api: string, runId: string, name: string) => `${api}/v1/runs/${runId}/files/${encodeURIComponent(name)}`;

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
