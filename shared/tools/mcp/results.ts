import { createHash } from "node:crypto";
import { IMAGE_TYPES } from "../../contracts/imageLimits.js";
import type { FileStore } from "../../ports/files.js";
import { cutToBytes, utf8Bytes } from "../../text/bytes.js";
import type { CallToolResult } from "./client.js";

/** Text kept of one result, in UTF-8 bytes; the loop then cuts it for the model and keeps the whole as a file. */
const MAX_RESULT_BYTES = 300_000;
/** Bytes of one image or embedded resource that become a file of the run. */
const MAX_FILE_BYTES = 10 * 1024 * 1024;

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/svg+xml": "svg",
  "audio/wav": "wav",
  "audio/mpeg": "mp3",
  "application/pdf": "pdf",
  "application/json": "json",
  "text/plain": "txt",
  "text/markdown": "md",
  "text/csv": "csv",
  "text/html": "html",
};

export interface ResultTarget {
  runId: string;
  files: FileStore;
  /** Names the files: the exposed tool name and the call's idempotency key (stable across retries). */
  toolName: string;
  idempotencyKey: string;
}

export interface MappedResult {
  isError: boolean;
  text: string;
  /** Run files of the images among the parts (PNG, JPEG, WebP, GIF): what a model that sees images is shown. */
  images: string[];
}

/**
 * An MCP tool result as tool output: text parts joined; images, audio and embedded resources
 * become files of the run (named in the text); links named; structured content kept as JSON.
 */
export async function mapCallResult(result: CallToolResult, target: ResultTarget): Promise<MappedResult> {
  const parts: string[] = [];
  const stem = `${target.toolName}-${createHash("sha256").update(target.idempotencyKey).digest("hex").slice(0, 8)}`;
  let fileCount = 0;
  const images: string[] = [];
  const saveFile = async (body: Buffer, contentType: string, what: string): Promise<string> => {
    if (body.byteLength > MAX_FILE_BYTES) return `[${what} of ${body.byteLength} bytes not kept: the limit is ${MAX_FILE_BYTES} bytes]`;
    const type = contentType.split(";")[0].trim().toLowerCase();
    const name = `${stem}-${++fileCount}.${EXTENSIONS[type] ?? "bin"}`;
    await target.files.put(target.runId, name, body, { contentType, description: `${what} from ${target.toolName}` });
    if (IMAGE_TYPES.has(type)) images.push(name);
    return `[${what} saved as file ${name} (${contentType}, ${body.byteLength} bytes)]`;
  };
  for (const item of result.content ?? []) {
    switch (item.type) {
      case "text":
        parts.push(item.text);
        break;
      case "image":
      case "audio":
        parts.push(await saveFile(Buffer.from(item.data, "base64"), item.mimeType, item.type === "image" ? "Image" : "Audio"));
        break;
      case "resource": {
        const resource = item.resource;
        if ("text" in resource && typeof resource.text === "string") {
          parts.push(await saveFile(Buffer.from(resource.text, "utf8"), resource.mimeType ?? "text/plain", `Resource ${resource.uri}`));
        } else if ("blob" in resource && typeof resource.blob === "string") {
          parts.push(
            await saveFile(
              Buffer.from(resource.blob, "base64"),
              resource.mimeType ?? "application/octet-stream",
              `Resource ${resource.uri}`,
            ),
          );
        }
        break;
      }
      case "resource_link":
        parts.push(`[Resource ${item.name}: ${item.uri}]`);
        break;
    }
  }
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    if (!parts.includes(json)) parts.push(json);
  }
  const text = parts.join("\n");
  return {
    isError: result.isError === true,
    images,
    text: utf8Bytes(text) > MAX_RESULT_BYTES ? `${cutToBytes(text, MAX_RESULT_BYTES)}\n[cut at ${MAX_RESULT_BYTES} bytes]` : text,
  };
}
