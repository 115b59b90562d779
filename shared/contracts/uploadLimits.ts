/**
 * Files up to this size may go through the API inline (Lambda takes 6 MB of event, base64
 * included); larger ones go straight to storage through presigned links. A plain value (no zod):
 * the console's bundle carries it.
 */
export const INLINE_UPLOAD_BYTES = 4 * 1024 * 1024;
