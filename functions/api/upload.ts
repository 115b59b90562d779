import type busboy from "busboy";
import { BadRequestError, PayloadTooLargeError } from "../../shared/errors.js";
import { contentTypeOf, sanitizeFileName } from "../../shared/ports/files.js";
import { type HttpEvent, header } from "../http.js";

export interface Upload {
  name: string;
  contentType: string;
  body: Uint8Array;
}

/**
 * The file of `POST /v1/files`: either `multipart/form-data` (the first file part, as browsers
 * and `curl -F` send it) or the raw body with the name in `?name=`.
 */
export async function parseUpload(event: HttpEvent, maxBytes: number, overLimitHint = ""): Promise<Upload> {
  const raw = event.body ? Buffer.from(event.body, event.isBase64Encoded ? "base64" : "utf8") : Buffer.alloc(0);
  const type = header(event, "content-type") ?? "";
  const tooLarge = () =>
    new PayloadTooLargeError(`The file is over ${maxBytes} bytes, the limit of an upload through the API. ${overLimitHint}`.trim());
  const upload = /^multipart\/form-data\b/i.test(type) ? await multipartFile(raw, type, maxBytes, tooLarge) : rawFile(event, raw, type);
  if (upload.body.byteLength > maxBytes) throw tooLarge();
  if (upload.body.byteLength === 0) throw new BadRequestError("The file is empty.", undefined, "empty_file");
  return upload;
}

function rawFile(event: HttpEvent, body: Buffer, type: string): Upload {
  const given = event.queryStringParameters?.name;
  if (!given)
    throw new BadRequestError(
      "Name the file: POST /v1/files?name=data.csv with the bytes as the body, or send multipart/form-data.",
      undefined,
      "missing_file_name",
    );
  const name = cleanName(given);
  const mime = type.split(";")[0].trim().toLowerCase();
  return { name, contentType: contentTypeFor(name, mime), body };
}

async function multipartFile(body: Buffer, type: string, maxBytes: number, tooLarge: () => PayloadTooLargeError): Promise<Upload> {
  // The multipart parser loads with the first multipart upload, not with the API.
  const { default: multipart } = await import("busboy");
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = multipart({
        headers: { "content-type": type }, // busboy signals its limit on reaching it: one byte of room tells "at the limit" from "over it".
        limits: { files: 1, fileSize: maxBytes + 1, fields: 20, parts: 30 },
      });
    } catch (error) {
      return reject(unreadable(error as Error));
    }
    let found: Promise<Upload> | undefined;
    parser.on("file", (_field, stream, info) => {
      const chunks: Buffer[] = [];
      found = new Promise((done, fail) => {
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("limit", () => fail(tooLarge()));
        // A body cut off inside the file part (busboy: "Unexpected end of form") errors the file's
        // stream too; unheard, that error would end the process.
        stream.on("error", (error: Error) => fail(unreadable(error)));
        stream.on("close", () => {
          try {
            const name = cleanName(info.filename ?? "");
            done({ name, contentType: contentTypeFor(name, info.mimeType.toLowerCase()), body: Buffer.concat(chunks) });
          } catch (error) {
            fail(error);
          }
        });
      });
      found.catch(() => undefined);
    });
    parser.on("error", (error: Error) => reject(unreadable(error)));
    parser.on("close", () => {
      if (!found) reject(new BadRequestError("The multipart body has no file part.", undefined, "missing_file"));
      else found.then(resolve, reject);
    });
    parser.end(body);
  });
}

const unreadable = (error: Error) =>
  new BadRequestError(`The multipart body cannot be read: ${error.message}`, undefined, "invalid_multipart");

export function cleanName(given: string): string {
  const name = sanitizeFileName(given);
  if (!name) throw new BadRequestError(`'${given.slice(0, 80)}' is not usable as a file name.`, undefined, "invalid_file_name");
  return name;
}

/** The type the client sent, unless it is the generic one: then the name's extension decides. */
export function contentTypeFor(name: string, given: string): string {
  if (!given || given === "application/octet-stream" || !/^[\w.+-]+\/[\w.+-]+$/.test(given)) return contentTypeOf(name);
  return given;
}
