import { INLINE_UPLOAD_BYTES } from "../shared/contracts/uploadLimits.js";
import { PayloadTooLargeError } from "../shared/errors.js";

/** A JSON body, on every route but the upload: far below DynamoDB's 400 KB item. */
export const MAX_JSON_BODY_BYTES = 256 * 1024;

/** API Gateway HTTP API refuses a longer request body with 413 before any function runs. */
export const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Lambda takes at most 6 MB of event in a synchronous invoke (a binary body is base64-encoded in
 * it, so about 4.5 MB of file): on AWS, a larger request never reaches the function.
 */
export const LAMBDA_SYNC_EVENT_BYTES = 6 * 1024 * 1024;

export const eventTooLarge = () =>
  new PayloadTooLargeError(
    `The request is over ${LAMBDA_SYNC_EVENT_BYTES} bytes as the function receives it (a binary body base64-encoded): over what Lambda takes in one call.`,
  );

/** Room for a multipart body's boundaries and part headers around a file at the upload limit. */
export const MULTIPART_ROOM_BYTES = 64 * 1024;

/** An A2A message carries its files' bytes in base64: room for the largest inline upload, encoded. */
export const a2aMaxBodyBytes = (maxUploadBytes: number) =>
  Math.ceil((Math.min(maxUploadBytes, INLINE_UPLOAD_BYTES) * 4) / 3) + MULTIPART_ROOM_BYTES;

/** The longest body a route takes: its own limit (JSON's by default), never more than API Gateway passes on. */
export function bodyLimitOf(route: { maxBodyBytes?: (maxUploadBytes: number) => number }, maxUploadBytes: number): number {
  return Math.min(route.maxBodyBytes?.(maxUploadBytes) ?? MAX_JSON_BODY_BYTES, GATEWAY_MAX_BODY_BYTES);
}

export const bodyTooLarge = (limit: number) => new PayloadTooLargeError(`The request body is over ${limit} bytes, this route's limit.`);
