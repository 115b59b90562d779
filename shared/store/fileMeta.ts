import { contentTypeOf, type FileMeta } from "../ports/files.js";
import type { Item } from "./table.js";

/**
 * A file's metadata from its item (never its bytes, which older items kept inline). Apart from the
 * files' adapter (s3Files.ts): a run's snapshot reads it without loading the S3 client.
 */
export function metaOf(item: Item): FileMeta {
  return {
    name: item.name,
    description: item.description ?? "",
    contentType: item.contentType ?? contentTypeOf(item.name),
    bytes: Number(item.bytes ?? 0),
    createdAt: item.createdAt,
    ...(typeof item.taskId === "string" ? { taskId: item.taskId } : {}),
  };
}
