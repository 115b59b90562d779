import * as z from "zod";

/** `POST /v1/files` as JSON: announce a file to upload it through presigned links. */
export const PresignedUploadRequest = z.strictObject({
  name: z.string().min(1).max(1000).describe("The file's name (sanitized: no path, no control characters)."),
  bytes: z.number().int().positive().describe("The file's exact size in bytes (at most MAX_UPLOAD_BYTES)."),
  contentType: z.string().max(200).optional().describe("Its MIME type; from the name's extension when left out."),
});

export const CompleteUploadRequest = z.strictObject({
  parts: z
    .array(z.strictObject({ partNumber: z.number().int().min(1).max(10_000), etag: z.string().min(1).max(200) }))
    .max(10_000)
    .default([])
    .describe(
      "Each part's number and the ETag header its PUT answered (all of them for a multipart upload; may be left out for one part).",
    ),
});

/** What `POST /v1/files` answers to a presigned upload request. */
export const PendingUploadView = z.object({
  fileId: z.string(),
  name: z.string(),
  contentType: z.string(),
  bytes: z.number().int(),
  partBytes: z.number().int().describe("Every part but the last has exactly this many bytes."),
  parts: z.array(
    z.object({ partNumber: z.number().int(), url: z.string().describe("PUT the part's bytes here; keep the ETag header of the answer.") }),
  ),
  headers: z
    .record(z.string(), z.string())
    .describe("Send these headers with every PUT (the links sign them); each PUT carries exactly its part's bytes, as signed."),
  expiresAt: z
    .string()
    .describe("When the links stop working (an hour after they were handed out, or earlier): then ask `parts` for fresh ones."),
  complete: z.string().describe("POST {parts: [{partNumber, etag}]} here once every part is up; the file exists from then on."),
  resign: z.string().describe("POST {partNumbers} here for fresh links to parts not up yet (a PUT answered 403, or expiresAt is near)."),
});
export type PendingUploadView = z.infer<typeof PendingUploadView>;

/** `POST /v1/files/{fileId}/parts`: fresh links for the parts of a pending upload still to send. */
export const ResignUploadRequest = z.strictObject({
  partNumbers: z
    .array(z.number().int().min(1).max(10_000))
    .min(1)
    .max(10_000)
    .describe("The parts to sign again (each a part of this upload: 1 to its number of parts)."),
});

/** What `POST /v1/files/{fileId}/parts` answers: a link per part asked for, signed now. */
export const UploadLinksView = z.object({
  fileId: z.string(),
  parts: z.array(z.object({ partNumber: z.number().int(), url: z.string() })),
  headers: z.record(z.string(), z.string()),
  expiresAt: z.string(),
});
export type UploadLinksView = z.infer<typeof UploadLinksView>;
